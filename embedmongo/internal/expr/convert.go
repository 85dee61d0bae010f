package expr

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Type inspection and conversion: $type, $isNumber, $convert and its $toX shorthands.

func init() {
	register("$type", fixed(1, func(a []any) (any, error) { return bsonkit.TypeName(a[0]), nil }))
	register("$isNumber", fixed(1, func(a []any) (any, error) { return bsonkit.IsNumber(a[0]), nil }))
	for op, to := range map[string]string{
		"$toString": "string", "$toInt": "int", "$toLong": "long", "$toDouble": "double",
		"$toDecimal": "decimal", "$toBool": "bool", "$toDate": "date", "$toObjectId": "objectId",
	} {
		register(op, fixed(1, func(a []any) (any, error) {
			if nullish(a[0]) {
				return nil, nil
			}
			return Convert(a[0], to)
		}))
	}
	register("$convert", compileConvert)
}

func compileConvert(name string, arg any) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(mongoerr.FailedToParse, "$convert expects an object of named arguments but found: %s", typeName(arg))
	}
	var input, to, onError, onNull *node
	for _, e := range d {
		n, err := compile(e.Value)
		if err != nil {
			return node{}, err
		}
		switch e.Key {
		case "input":
			input = &n
		case "to":
			to = &n
		case "onError":
			onError = &n
		case "onNull":
			onNull = &n
		default:
			return node{}, mongoerr.New(mongoerr.FailedToParse, "$convert found an unknown argument: %s", e.Key)
		}
	}
	if input == nil {
		return node{}, mongoerr.New(mongoerr.FailedToParse, "Missing 'input' parameter to $convert")
	}
	if to == nil {
		return node{}, mongoerr.New(mongoerr.FailedToParse, "Missing 'to' parameter to $convert")
	}
	return dynamic(func(c *ctx) (any, error) {
		in, err := input.eval(c)
		if err != nil {
			return nil, err
		}
		tv, err := to.eval(c)
		if err != nil {
			return nil, err
		}
		if nullish(tv) {
			return nil, nil
		}
		target, err := targetTypeName(tv)
		if err != nil {
			return nil, err
		}
		if nullish(in) {
			if onNull != nil {
				return onNull.eval(c)
			}
			return nil, nil
		}
		out, err := Convert(in, target)
		if err != nil && onError != nil && mongoerr.Is(err, mongoerr.ConversionFailure) {
			return onError.eval(c)
		}
		if err != nil && onError == nil {
			if e := mongoerr.As(err); e.Code == mongoerr.ConversionFailure {
				return nil, mongoerr.New(mongoerr.ConversionFailure, "%s in $convert with no onError value", e.Msg)
			}
		}
		return out, err
	}), nil
}

// targetTypeName resolves $convert's 'to': a type alias or a numeric BSON type code.
func targetTypeName(v any) (string, error) {
	if s, ok := v.(string); ok {
		if _, ok := bsonkit.TypeCodeByName(s); !ok || s == "missing" {
			return "", mongoerr.New(mongoerr.BadValue, "Unknown type name: %s", s)
		}
		return s, nil
	}
	if bsonkit.IsNumber(v) {
		code, ok := bsonkit.ToInt64Exact(v)
		if !ok {
			return "", mongoerr.New(mongoerr.FailedToParse, "In $convert, numeric 'to' argument is not an integer")
		}
		for _, name := range []string{"double", "string", "object", "array", "binData", "undefined", "objectId", "bool", "date", "null", "regex", "dbPointer", "javascript", "symbol", "javascriptWithScope", "int", "timestamp", "long", "decimal", "minKey", "maxKey"} {
			if c, _ := bsonkit.TypeCodeByName(name); int64(c) == code {
				return name, nil
			}
		}
		return "", mongoerr.New(mongoerr.FailedToParse, "In $convert, numeric value for 'to' does not correspond to a BSON type: %d", code)
	}
	return "", mongoerr.New(mongoerr.FailedToParse, "$convert's 'to' argument must be a string or number, but is %s", typeName(v))
}

func unsupported(v any, to string) error {
	return mongoerr.New(mongoerr.ConversionFailure, "Unsupported conversion from %s to %s", typeName(v), to)
}

// Convert converts a non-null value to the named BSON type as $convert does; failures are
// ConversionFailure errors.
func Convert(v any, to string) (any, error) {
	if bsonkit.TypeName(v) == to {
		return v, nil
	}
	switch to {
	case "double":
		return convertToDouble(v)
	case "int", "long":
		return convertToInteger(v, to)
	case "decimal":
		return convertToDecimal(v)
	case "bool":
		if bsonkit.IsNumber(v) {
			return Truthy(v), nil
		}
		switch v.(type) {
		case bson.MinKey, bson.MaxKey, bson.Undefined:
			return nil, unsupported(v, to)
		}
		return true, nil
	case "string":
		return convertToString(v)
	case "date":
		return convertToDate(v)
	case "objectId":
		s, ok := v.(string)
		if !ok {
			return nil, unsupported(v, to)
		}
		oid, err := bson.ObjectIDFromHex(s)
		if err != nil {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse objectId '%s': Invalid string length for parsing to OID, expected 24 but found %d", s, len(s))
		}
		return oid, nil
	}
	return nil, unsupported(v, to)
}

func convertToDouble(v any) (any, error) {
	switch x := v.(type) {
	case int32, int64, int:
		f, _ := toFloat(x)
		return f, nil
	case bson.Decimal128:
		f, ok := decToBig(x)
		if !ok {
			return math.NaN(), nil
		}
		r, acc := f.Float64()
		if math.IsInf(r, 0) && !f.IsInf() {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type")
		}
		_ = acc
		return r, nil
	case bool:
		if x {
			return 1.0, nil
		}
		return 0.0, nil
	case bson.DateTime:
		return float64(x), nil
	case string:
		f, err := parseNumberString(x)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	return nil, unsupported(v, "double")
}

func parseNumberString(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "infinity", "inf":
		return math.Inf(1), nil
	case "-infinity", "-inf":
		return math.Inf(-1), nil
	case "nan":
		return math.NaN(), nil
	}
	if s == "" || strings.ContainsAny(s, "xXpP_") || strings.TrimSpace(s) != s {
		return 0, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse number '%s'", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse number '%s': Out of range", s)
		}
		return 0, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse number '%s': Did not consume whole string.", s)
	}
	return f, nil
}

func convertToInteger(v any, to string) (any, error) {
	lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
	if to == "long" {
		lo, hi = -9.223372036854775808e18, 9.223372036854775807e18
	}
	var i int64
	switch x := v.(type) {
	case int32:
		i = int64(x)
	case int64, int:
		i, _ = bsonkit.ToInt64Exact(x)
		if to == "int" && !fitsInt32(i) {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type")
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Attempt to convert %s value to integer type", formatDouble(x))
		}
		t := math.Trunc(x)
		if t < lo || t >= hi+1 {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type")
		}
		i = int64(t)
	case bson.Decimal128:
		f, ok := decToBig(x)
		if !ok || f.IsInf() {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Attempt to convert %s value to integer type", x.String())
		}
		bi, _ := f.Int(nil)
		if !bi.IsInt64() || (to == "int" && !fitsInt32(bi.Int64())) {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type")
		}
		i = bi.Int64()
	case bool:
		if x {
			i = 1
		}
	case bson.DateTime:
		if to == "int" {
			return nil, unsupported(v, to)
		}
		i = int64(x)
	case string:
		bits := 32
		if to == "long" {
			bits = 64
		}
		n, err := strconv.ParseInt(x, 10, bits)
		if err != nil || strings.HasPrefix(x, "+") {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse number '%s': Overflow", x)
			}
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse number '%s': Did not consume whole string.", x)
		}
		i = n
	default:
		return nil, unsupported(v, to)
	}
	if to == "int" {
		return int32(i), nil
	}
	return i, nil
}

func convertToDecimal(v any) (any, error) {
	switch x := v.(type) {
	case int32, int64, int, float64:
		return toDecimal(x), nil
	case bool:
		if x {
			return toDecimal(int32(1)), nil
		}
		return toDecimal(int32(0)), nil
	case bson.DateTime:
		return toDecimal(int64(x)), nil
	case string:
		d, err := bson.ParseDecimal128(x)
		if err != nil {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Failed to parse number '%s': Failed to parse string to decimal", x)
		}
		return d, nil
	}
	return nil, unsupported(v, "decimal")
}

func convertToString(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case bson.ObjectID:
		return x.Hex(), nil
	case int32, int64, int, float64, bson.Decimal128, bson.DateTime, bson.Symbol, bson.JavaScript:
		return coerceToString("$convert", x)
	}
	return nil, unsupported(v, "string")
}

func convertToDate(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		return bson.DateTime(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x >= 9.223372036854775807e18 || x < -9.223372036854775808e18 {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type")
		}
		return bson.DateTime(int64(x)), nil
	case bson.Decimal128:
		f, ok := decToBig(x)
		if !ok || f.IsInf() {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type")
		}
		bi, _ := f.Int(nil)
		if !bi.IsInt64() {
			return nil, mongoerr.New(mongoerr.ConversionFailure, "Conversion would overflow target type")
		}
		return bson.DateTime(bi.Int64()), nil
	case bson.ObjectID:
		return bson.NewDateTimeFromTime(x.Timestamp()), nil
	case bson.Timestamp:
		return bson.DateTime(int64(x.T) * 1000), nil
	case string:
		d, err := parseDateString(x, time.UTC)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, unsupported(v, "date")
}

// formatDouble renders a double as mongod's $toString does: shortest round-trip digits,
// fixed notation for moderate magnitudes.
func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	case f == 0 && math.Signbit(f):
		return "-0"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e16) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
