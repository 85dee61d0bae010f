package bsonkit

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// MissingType is the type of Missing.
type MissingType struct{}

// Missing stands for an absent field, which MongoDB distinguishes from null: expressions
// evaluate to it, and $addFields/$project drop fields whose value is Missing.
var Missing = MissingType{}

// IsMissing reports whether v is the Missing sentinel.
func IsMissing(v any) bool { _, ok := v.(MissingType); return ok }

// BSON type codes as $type and the spec use them.
const (
	TypeDouble     = 1
	TypeString     = 2
	TypeObject     = 3
	TypeArray      = 4
	TypeBinary     = 5
	TypeUndefined  = 6
	TypeObjectID   = 7
	TypeBool       = 8
	TypeDate       = 9
	TypeNull       = 10
	TypeRegex      = 11
	TypeDBPointer  = 12
	TypeJavaScript = 13
	TypeSymbol     = 14
	TypeCodeScope  = 15
	TypeInt        = 16
	TypeTimestamp  = 17
	TypeLong       = 18
	TypeDecimal    = 19
	TypeMinKey     = -1
	TypeMaxKey     = 127
)

var typeNames = map[int]string{
	TypeDouble: "double", TypeString: "string", TypeObject: "object", TypeArray: "array",
	TypeBinary: "binData", TypeUndefined: "undefined", TypeObjectID: "objectId", TypeBool: "bool",
	TypeDate: "date", TypeNull: "null", TypeRegex: "regex", TypeDBPointer: "dbPointer",
	TypeJavaScript: "javascript", TypeSymbol: "symbol", TypeCodeScope: "javascriptWithScope",
	TypeInt: "int", TypeTimestamp: "timestamp", TypeLong: "long", TypeDecimal: "decimal",
	TypeMinKey: "minKey", TypeMaxKey: "maxKey",
}

// TypeCode returns v's BSON type code, or 0 for Missing and unknown Go types.
func TypeCode(v any) int {
	switch v.(type) {
	case float64:
		return TypeDouble
	case string:
		return TypeString
	case bson.D, bson.M, bson.Raw:
		return TypeObject
	case bson.A, []any:
		return TypeArray
	case bson.Binary:
		return TypeBinary
	case bson.Undefined:
		return TypeUndefined
	case bson.ObjectID:
		return TypeObjectID
	case bool:
		return TypeBool
	case bson.DateTime:
		return TypeDate
	case nil, bson.Null:
		return TypeNull
	case bson.Regex:
		return TypeRegex
	case bson.DBPointer:
		return TypeDBPointer
	case bson.JavaScript:
		return TypeJavaScript
	case bson.Symbol:
		return TypeSymbol
	case bson.CodeWithScope:
		return TypeCodeScope
	case int32:
		return TypeInt
	case bson.Timestamp:
		return TypeTimestamp
	case int64:
		return TypeLong
	case bson.Decimal128:
		return TypeDecimal
	case bson.MinKey:
		return TypeMinKey
	case bson.MaxKey:
		return TypeMaxKey
	case int:
		return TypeLong
	}
	return 0
}

// TypeName returns the $type alias of v ("double", "string", "object", ...), or "missing".
func TypeName(v any) string {
	if IsMissing(v) {
		return "missing"
	}
	if n, ok := typeNames[TypeCode(v)]; ok {
		return n
	}
	return "unknown"
}

// TypeCodeByName maps a $type alias to its code; "number" is not a single type and is not here.
func TypeCodeByName(name string) (int, bool) {
	for c, n := range typeNames {
		if n == name {
			return c, true
		}
	}
	return 0, false
}

// IsNumber reports whether v is a BSON numeric type.
func IsNumber(v any) bool {
	switch v.(type) {
	case int32, int64, float64, bson.Decimal128, int:
		return true
	}
	return false
}

// canonical returns mongod's canonicalized type order (bsontypes.cpp canonicalizeBSONType).
func canonical(v any) int {
	switch v.(type) {
	case bson.MinKey:
		return -1
	case MissingType, bson.Undefined:
		return 0
	case nil, bson.Null:
		return 5
	case float64, int32, int64, bson.Decimal128, int:
		return 10
	case string, bson.Symbol:
		return 15
	case bson.D, bson.M, bson.Raw:
		return 20
	case bson.A, []any:
		return 25
	case bson.Binary:
		return 30
	case bson.ObjectID:
		return 35
	case bool:
		return 40
	case bson.DateTime:
		return 45
	case bson.Timestamp:
		return 47
	case bson.Regex:
		return 50
	case bson.DBPointer:
		return 55
	case bson.JavaScript:
		return 60
	case bson.CodeWithScope:
		return 65
	case bson.MaxKey:
		return 127
	}
	return 100
}

// CanonicalType exposes the comparison bracket of v: values of different brackets compare by
// bracket, which is also how query operators like $gt restrict themselves to one type bracket.
func CanonicalType(v any) int { return canonical(v) }

// StringContent is the content of a string or symbol, which compare as one type.
func StringContent(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case bson.Symbol:
		return string(s), true
	}
	return "", false
}
