package bsonkit

import (
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ToFloat64 converts a numeric value to float64; ok is false for non-numbers.
func ToFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case bson.Decimal128:
		f, nan := bigOf(x)
		if nan {
			return math.NaN(), true
		}
		r, _ := f.Float64()
		return r, true
	}
	return 0, false
}

// ToInt64Exact converts a numeric value to int64 when it holds an integral value that fits
// (so 3.0 → 3, but 3.5, NaN and 1e30 are rejected).
func ToInt64Exact(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x != math.Trunc(x) || math.IsNaN(x) || x >= 9.223372036854775807e18 || x < -9.223372036854775808e18 {
			return 0, false
		}
		return int64(x), true
	case bson.Decimal128:
		f, nan := bigOf(x)
		if nan || f.IsInf() || !f.IsInt() {
			return 0, false
		}
		i, acc := f.Int64()
		return i, acc == big.Exact
	}
	return 0, false
}

// numeric kinds in promotion order.
const (
	kInt = iota
	kLong
	kDouble
	kDecimal
)

func kindOf(v any) int {
	switch v.(type) {
	case int32:
		return kInt
	case int64, int:
		return kLong
	case float64:
		return kDouble
	case bson.Decimal128:
		return kDecimal
	}
	return -1
}

// Arith is an arithmetic operator for Arithmetic.
type Arith int

// The operators Arithmetic supports.
const (
	Add Arith = iota
	Subtract
	Multiply
)

// Arithmetic applies op to two numbers with MongoDB's promotion: the result takes the wider type
// of the two (int < long < double < decimal); an int32 result that overflows becomes int64, and an
// int64 result that overflows becomes a double when overflowToDouble is set (aggregation) or
// reports overflow=true otherwise (update operators like $inc, which mongod refuses).
// ok is false when either operand is not a number.
func Arithmetic(op Arith, a, b any, overflowToDouble bool) (result any, ok bool, overflow bool) {
	ka, kb := kindOf(a), kindOf(b)
	if ka < 0 || kb < 0 {
		return nil, false, false
	}
	k := max(ka, kb)
	switch k {
	case kInt, kLong:
		x, y := toInt64(a), toInt64(b)
		r, of := int64op(op, x, y)
		if !of {
			if k == kInt && r >= math.MinInt32 && r <= math.MaxInt32 {
				return int32(r), true, false
			}
			return r, true, false
		}
		if overflowToDouble {
			fx, fy := float64(x), float64(y)
			return floatOp(op, fx, fy), true, false
		}
		return nil, true, true
	case kDouble:
		fx, _ := ToFloat64(a)
		fy, _ := ToFloat64(b)
		return floatOp(op, fx, fy), true, false
	default:
		fa, nanA := bigOf(a)
		fb, nanB := bigOf(b)
		if nanA || nanB {
			d, _ := bson.ParseDecimal128("NaN")
			return d, true, false
		}
		var r big.Float
		r.SetPrec(200)
		switch op {
		case Add:
			r.Add(fa, fb)
		case Subtract:
			r.Sub(fa, fb)
		case Multiply:
			r.Mul(fa, fb)
		}
		d, err := bson.ParseDecimal128(r.Text('g', 34))
		if err != nil {
			d, _ = bson.ParseDecimal128("NaN")
		}
		return d, true, false
	}
}

func floatOp(op Arith, x, y float64) float64 {
	switch op {
	case Add:
		return x + y
	case Subtract:
		return x - y
	}
	return x * y
}

func int64op(op Arith, x, y int64) (int64, bool) {
	switch op {
	case Add:
		r := x + y
		return r, (x > 0 && y > 0 && r < 0) || (x < 0 && y < 0 && r >= 0)
	case Subtract:
		r := x - y
		return r, (x >= 0 && y < 0 && r < 0) || (x < 0 && y > 0 && r >= 0)
	}
	if x == 0 || y == 0 {
		return 0, false
	}
	r := x * y
	if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return r, true
	}
	return r, false
}
