package bsonkit

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Compare orders a and b as MongoDB does for sorting and comparison operators: first by
// canonical type bracket (MinKey < null < numbers < strings < objects < arrays < binData <
// ObjectId < bool < date < timestamp < regex < ... < MaxKey), then by value within the bracket.
// Numbers of different types compare by numeric value. It returns -1, 0 or +1.
func Compare(a, b any) int {
	// Index keys are compared many times per lookup, almost always two values
	// of one type; these answer as CompareWith does without its type ranking.
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmp64(x, y)
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmp64(int64(x), int64(y))
		}
	case bson.DateTime:
		if y, ok := b.(bson.DateTime); ok {
			return cmp64(int64(x), int64(y))
		}
	}
	return CompareWith(a, b, nil)
}

// StringCompare orders two strings; a collation provides one (nil = binary order).
type StringCompare func(a, b string) int

// CompareWith is Compare with strings (and symbols), wherever they occur — nested in
// documents and arrays too — ordered by sc instead of byte order; field names stay binary,
// as under a MongoDB collation. A nil sc is plain Compare.
func CompareWith(a, b any, sc StringCompare) int {
	ca, cb := canonical(a), canonical(b)
	if ca != cb {
		return sign(ca - cb)
	}
	switch ca {
	case -1, 0, 5, 127:
		return 0
	case 10:
		return CompareNumbers(a, b)
	case 15:
		if sc != nil {
			return sign(sc(stringOf(a), stringOf(b)))
		}
		return strings.Compare(stringOf(a), stringOf(b))
	case 20:
		return compareDocs(ToD(a), ToD(b), sc)
	case 25:
		return compareArrays(ToA(a), ToA(b), sc)
	case 30:
		x, y := a.(bson.Binary), b.(bson.Binary)
		if len(x.Data) != len(y.Data) {
			return sign(len(x.Data) - len(y.Data))
		}
		if x.Subtype != y.Subtype {
			return sign(int(x.Subtype) - int(y.Subtype))
		}
		return bytes.Compare(x.Data, y.Data)
	case 35:
		x, y := a.(bson.ObjectID), b.(bson.ObjectID)
		return bytes.Compare(x[:], y[:])
	case 40:
		x, y := a.(bool), b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case 45:
		x, y := a.(bson.DateTime), b.(bson.DateTime)
		return cmp64(int64(x), int64(y))
	case 47:
		x, y := a.(bson.Timestamp), b.(bson.Timestamp)
		if x.T != y.T {
			if x.T < y.T {
				return -1
			}
			return 1
		}
		if x.I != y.I {
			if x.I < y.I {
				return -1
			}
			return 1
		}
		return 0
	case 50:
		x, y := a.(bson.Regex), b.(bson.Regex)
		if c := strings.Compare(x.Pattern, y.Pattern); c != 0 {
			return c
		}
		return strings.Compare(x.Options, y.Options)
	case 55:
		x, y := a.(bson.DBPointer), b.(bson.DBPointer)
		if len(x.DB) != len(y.DB) {
			return sign(len(x.DB) - len(y.DB))
		}
		if c := strings.Compare(x.DB, y.DB); c != 0 {
			return c
		}
		return bytes.Compare(x.Pointer[:], y.Pointer[:])
	case 60:
		return strings.Compare(string(a.(bson.JavaScript)), string(b.(bson.JavaScript)))
	case 65:
		x, y := a.(bson.CodeWithScope), b.(bson.CodeWithScope)
		if c := strings.Compare(string(x.Code), string(y.Code)); c != 0 {
			return c
		}
		return CompareWith(x.Scope, y.Scope, sc)
	}
	return 0
}

// Equal reports whether a and b compare equal (so int32(1), int64(1) and 1.0 are equal).
func Equal(a, b any) bool { return Compare(a, b) == 0 }

func stringOf(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case bson.Symbol:
		return string(s)
	}
	return ""
}

func compareDocs(x, y bson.D, sc StringCompare) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := sign(canonical(x[i].Value) - canonical(y[i].Value)); c != 0 {
			return c
		}
		if c := strings.Compare(x[i].Key, y[i].Key); c != 0 {
			return c
		}
		if c := CompareWith(x[i].Value, y[i].Value, sc); c != 0 {
			return c
		}
	}
	return sign(len(x) - len(y))
}

func compareArrays(x, y bson.A, sc StringCompare) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := sign(canonical(x[i]) - canonical(y[i])); c != 0 {
			return c
		}
		if c := CompareWith(x[i], y[i], sc); c != 0 {
			return c
		}
	}
	return sign(len(x) - len(y))
}

// CompareNumbers compares two numeric values of any BSON numeric type exactly (int64 against
// float64 without rounding). NaN sorts below every other number and equals NaN, as in MongoDB.
func CompareNumbers(a, b any) int {
	// Fast paths.
	switch x := a.(type) {
	case int32:
		switch y := b.(type) {
		case int32:
			return cmp64(int64(x), int64(y))
		case int64:
			return cmp64(int64(x), y)
		}
	case int64:
		switch y := b.(type) {
		case int32:
			return cmp64(x, int64(y))
		case int64:
			return cmp64(x, y)
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmpFloat(x, y)
		}
	}
	_, ad := a.(bson.Decimal128)
	_, bd := b.(bson.Decimal128)
	if ad || bd {
		fa, nanA := bigOf(a)
		fb, nanB := bigOf(b)
		switch {
		case nanA && nanB:
			return 0
		case nanA:
			return -1
		case nanB:
			return 1
		}
		return fa.Cmp(fb)
	}
	// Mixed int/float.
	if f, ok := a.(float64); ok {
		return -cmpIntFloat(toInt64(b), f)
	}
	if f, ok := b.(float64); ok {
		return cmpIntFloat(toInt64(a), f)
	}
	return cmp64(toInt64(a), toInt64(b))
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

// cmpIntFloat compares an int64 with a float64 exactly.
func cmpIntFloat(i int64, f float64) int {
	if math.IsNaN(f) {
		return 1
	}
	if f >= 9.3e18 {
		return -1
	}
	if f <= -9.3e18 {
		return 1
	}
	t := math.Trunc(f)
	ti := int64(t)
	if i != ti {
		return cmp64(i, ti)
	}
	// Same integer part: the fraction decides.
	if f > t {
		return -1
	}
	if f < t {
		return 1
	}
	return 0
}

func cmpFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return -1
	case yn:
		return 1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// bigOf converts any numeric to a big.Float; the bool reports NaN. Infinities become ±huge.
func bigOf(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case int32:
		return new(big.Float).SetInt64(int64(x)), false
	case int64:
		return new(big.Float).SetInt64(x), false
	case int:
		return new(big.Float).SetInt64(int64(x)), false
	case float64:
		if math.IsNaN(x) {
			return nil, true
		}
		if math.IsInf(x, 0) {
			return new(big.Float).SetInf(x < 0), false
		}
		return new(big.Float).SetFloat64(x), false
	case bson.Decimal128:
		s := x.String()
		switch s {
		case "NaN", "-NaN":
			return nil, true
		case "Infinity":
			return new(big.Float).SetInf(false), false
		case "-Infinity":
			return new(big.Float).SetInf(true), false
		}
		f, _, err := big.ParseFloat(s, 10, 200, big.ToNearestEven)
		if err != nil {
			return nil, true
		}
		return f, false
	}
	return new(big.Float), false
}

func cmp64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// ToD converts an object value to bson.D (bson.M order is unspecified; only used defensively).
func ToD(v any) bson.D {
	switch x := v.(type) {
	case bson.D:
		return x
	case bson.M:
		d := make(bson.D, 0, len(x))
		for k, val := range x {
			d = append(d, bson.E{Key: k, Value: val})
		}
		return d
	case bson.Raw:
		var d bson.D
		_ = bson.Unmarshal(x, &d)
		return d
	}
	return nil
}

// ToA converts an array value to bson.A.
func ToA(v any) bson.A {
	switch x := v.(type) {
	case bson.A:
		return x
	case []any:
		return bson.A(x)
	}
	return nil
}

// FormatNumber renders a number the way mongod's error messages do (used in messages only).
func FormatNumber(v any) string {
	switch x := v.(type) {
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bson.Decimal128:
		return x.String()
	}
	return ""
}
