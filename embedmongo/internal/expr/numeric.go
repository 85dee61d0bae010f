package expr

import (
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

// Numeric helpers shared by the arithmetic, conversion and accumulator operators.

const bigPrec = 200

var decNaN, _ = bson.ParseDecimal128("NaN")

// decToBig converts a decimal to a big.Float; ok is false for NaN. Infinities stay infinite.
func decToBig(d bson.Decimal128) (*big.Float, bool) {
	s := d.String()
	switch s {
	case "NaN", "-NaN":
		return nil, false
	case "Infinity", "+Infinity":
		return new(big.Float).SetInf(false), true
	case "-Infinity":
		return new(big.Float).SetInf(true), true
	}
	f, _, err := big.ParseFloat(s, 10, bigPrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	return f, true
}

// numToBig converts any numeric value to a big.Float (ok false for NaN).
func numToBig(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case bson.Decimal128:
		return decToBig(x)
	case float64:
		if math.IsNaN(x) {
			return nil, false
		}
		return new(big.Float).SetPrec(bigPrec).SetFloat64(x), true
	}
	i, _ := bsonkit.ToInt64Exact(v)
	return new(big.Float).SetPrec(bigPrec).SetInt64(i), true
}

// bigToDec rounds f to decimal128's 34 significant digits.
func bigToDec(f *big.Float) bson.Decimal128 {
	if f == nil {
		return decNaN
	}
	if f.IsInf() {
		if f.Sign() < 0 {
			d, _ := bson.ParseDecimal128("-Infinity")
			return d
		}
		d, _ := bson.ParseDecimal128("Infinity")
		return d
	}
	d, err := bson.ParseDecimal128(f.Text('g', 34))
	if err != nil {
		return decNaN
	}
	return d
}

// toDecimal converts any number to decimal128 (doubles keep 15 significant digits, as mongod).
func toDecimal(v any) bson.Decimal128 {
	switch x := v.(type) {
	case bson.Decimal128:
		return x
	case float64:
		switch {
		case math.IsNaN(x):
			return decNaN
		case math.IsInf(x, 0):
			return bigToDec(new(big.Float).SetInf(x < 0))
		}
		d, err := bson.ParseDecimal128(big.NewFloat(x).Text('g', 15))
		if err != nil {
			return decNaN
		}
		return d
	}
	f, _ := numToBig(v)
	return bigToDec(f)
}

func isDecimal(v any) bool { _, ok := v.(bson.Decimal128); return ok }

func isDecNaN(d bson.Decimal128) bool { s := d.String(); return s == "NaN" || s == "-NaN" }

// toFloat converts a number to float64 (ok false for non-numbers).
func toFloat(v any) (float64, bool) { return bsonkit.ToFloat64(v) }

// roundHalfAway rounds to the nearest integer, ties away from zero (C's llround); ok is false
// when the result does not fit in int64.
func roundHalfAway(f float64) (int64, bool) {
	r := math.Round(f)
	if math.IsNaN(r) || r >= 9.223372036854775807e18 || r < -9.223372036854775808e18 {
		return 0, false
	}
	return int64(r), true
}

// numToInt64Rounded converts a number to int64 rounding half away from zero.
func numToInt64Rounded(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		return roundHalfAway(x)
	case bson.Decimal128:
		f, ok := decToBig(x)
		if !ok || f.IsInf() {
			return 0, false
		}
		// Round half away from zero: add ±0.5 then truncate.
		half := big.NewFloat(0.5)
		if f.Sign() < 0 {
			half.Neg(half)
		}
		f.Add(f, half)
		i, acc := f.Int64()
		if acc != big.Exact && (i == math.MaxInt64 || i == math.MinInt64) {
			return 0, false
		}
		return i, true
	}
	return 0, false
}

// intResult narrows an int64 to int32 when wide is false and it fits.
func intResult(r int64, wide bool) any {
	if !wide && r >= math.MinInt32 && r <= math.MaxInt32 {
		return int32(r)
	}
	return r
}

func isLong(v any) bool {
	switch v.(type) {
	case int64, int:
		return true
	}
	return false
}

func isIntegral(v any) bool {
	switch v.(type) {
	case int32, int64, int:
		return true
	}
	return false
}

func fmtNum(v any) string { return bsonkit.FormatNumber(v) }
