package expr

import (
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Arithmetic operators. Null or missing operands give null; numbers follow MongoDB's type
// promotion (int < long < double < decimal, int overflow widening to long, long to double).

func init() {
	register("$add", ranged(0, -1, evalAdd))
	register("$subtract", fixed(2, evalSubtract))
	register("$multiply", ranged(0, -1, evalMultiply))
	register("$divide", fixed(2, evalDivide))
	register("$mod", fixed(2, evalMod))
	register("$abs", unaryMath(absNum))
	register("$ceil", unaryMath(func(v any) (any, error) { return roundFn(v, math.Ceil, true), nil }))
	register("$floor", unaryMath(func(v any) (any, error) { return roundFn(v, math.Floor, false), nil }))
	register("$sqrt", unaryMath(sqrtNum))
	register("$exp", unaryMath(func(v any) (any, error) {
		if d, ok := v.(bson.Decimal128); ok {
			f, _ := toFloat(d)
			return toDecimal(math.Exp(f)), nil
		}
		f, _ := toFloat(v)
		return math.Exp(f), nil
	}))
	register("$ln", unaryMath(func(v any) (any, error) { return logOf("$ln", v, math.Log) }))
	register("$log10", unaryMath(func(v any) (any, error) { return logOf("$log10", v, math.Log10) }))
	register("$log", fixed(2, evalLog))
	register("$pow", fixed(2, evalPow))
	register("$round", named(1, 2, evalRoundTrunc))
	register("$trunc", named(1, 2, evalRoundTrunc))
}

func evalAdd(args []any) (any, error) {
	var total any = int32(0)
	var date bson.DateTime
	haveDate := false
	for _, v := range args {
		if nullish(v) {
			return nil, nil
		}
		switch x := v.(type) {
		case bson.DateTime:
			if haveDate {
				return nil, mongoerr.New(16612, "only one date allowed in an $add expression")
			}
			date, haveDate = x, true
		default:
			r, ok, _ := bsonkit.Arithmetic(bsonkit.Add, total, v, true)
			if !ok {
				return nil, mongoerr.New(16554, "$add only supports numeric or date types, not %s", typeName(v))
			}
			total = r
		}
	}
	if !haveDate {
		return total, nil
	}
	ms, ok := numToInt64Rounded(total)
	if !ok {
		return nil, mongoerr.New(mongoerr.Overflow, "date overflow in $add")
	}
	return bson.DateTime(int64(date) + ms), nil
}

func evalSubtract(args []any) (any, error) {
	l, r := args[0], args[1]
	if nullish(l) || nullish(r) {
		return nil, nil
	}
	if bsonkit.IsNumber(l) && bsonkit.IsNumber(r) {
		v, _, _ := bsonkit.Arithmetic(bsonkit.Subtract, l, r, true)
		return v, nil
	}
	if d, ok := l.(bson.DateTime); ok {
		switch y := r.(type) {
		case bson.DateTime:
			return int64(d) - int64(y), nil
		default:
			if bsonkit.IsNumber(y) {
				ms, ok := numToInt64Rounded(y)
				if !ok {
					return nil, mongoerr.New(mongoerr.Overflow, "date overflow in $subtract")
				}
				return bson.DateTime(int64(d) - ms), nil
			}
			return nil, mongoerr.New(16613, "can't $subtract %s from Date", typeName(r))
		}
	}
	return nil, mongoerr.New(16556, "can't $subtract %s from %s", typeName(r), typeName(l))
}

func evalMultiply(args []any) (any, error) {
	var prod any = int32(1)
	for _, v := range args {
		if nullish(v) {
			return nil, nil
		}
		r, ok, _ := bsonkit.Arithmetic(bsonkit.Multiply, prod, v, true)
		if !ok {
			return nil, mongoerr.New(16555, "$multiply only supports numeric types, not %s", typeName(v))
		}
		prod = r
	}
	return prod, nil
}

func evalDivide(args []any) (any, error) {
	l, r := args[0], args[1]
	if bsonkit.IsNumber(l) && bsonkit.IsNumber(r) {
		if isDecimal(l) || isDecimal(r) {
			return decimalDivide(l, r)
		}
		x, _ := toFloat(l)
		y, _ := toFloat(r)
		if y == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "can't $divide by zero")
		}
		return x / y, nil
	}
	if nullish(l) || nullish(r) {
		return nil, nil
	}
	return nil, mongoerr.New(mongoerr.TypeMismatch, "$divide only supports numeric types, not %s and %s", typeName(l), typeName(r))
}

func decimalDivide(l, r any) (any, error) {
	x, okx := numToBig(toDecimal(l))
	y, oky := numToBig(toDecimal(r))
	if oky && y.Sign() == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "can't $divide by zero")
	}
	if !okx || !oky || (x.IsInf() && y.IsInf()) {
		return decNaN, nil
	}
	return bigToDec(new(big.Float).SetPrec(bigPrec).Quo(x, y)), nil
}

func evalMod(args []any) (any, error) {
	l, r := args[0], args[1]
	if bsonkit.IsNumber(l) && bsonkit.IsNumber(r) {
		if isDecimal(l) || isDecimal(r) {
			x, okx := numToBig(toDecimal(l))
			y, oky := numToBig(toDecimal(r))
			if oky && y.Sign() == 0 {
				return nil, mongoerr.New(16610, "can't $mod by zero")
			}
			if !okx || !oky || x.IsInf() {
				return decNaN, nil
			}
			if y.IsInf() {
				return toDecimal(l), nil
			}
			// x - trunc(x/y)*y
			q := new(big.Float).SetPrec(bigPrec).Quo(x, y)
			qi, _ := q.Int(nil)
			qf := new(big.Float).SetPrec(bigPrec).SetInt(qi)
			return bigToDec(new(big.Float).SetPrec(bigPrec).Sub(x, qf.Mul(qf, y))), nil
		}
		rf, _ := toFloat(r)
		if rf == 0 {
			return nil, mongoerr.New(16610, "can't $mod by zero")
		}
		_, lDouble := l.(float64)
		_, rDouble := r.(float64)
		if lDouble || (rDouble && rf != math.Trunc(rf)) {
			lf, _ := toFloat(l)
			return math.Mod(lf, rf), nil
		}
		x, _ := numToInt64Rounded(l)
		y, _ := numToInt64Rounded(r)
		if y == -1 {
			return intResult(0, isLong(l) || isLong(r)), nil // avoids MinInt64 % -1 overflow
		}
		return intResult(x%y, isLong(l) || isLong(r) || rDouble && !fitsInt32(y)), nil
	}
	if nullish(l) || nullish(r) {
		return nil, nil
	}
	return nil, mongoerr.New(16611, "$mod only supports numeric types, not %s and %s", typeName(l), typeName(r))
}

func fitsInt32(i int64) bool { return i >= math.MinInt32 && i <= math.MaxInt32 }

// unaryMath compiles a one-argument numeric operator: null/missing give null and non-numbers
// are rejected with mongod's 28765.
func unaryMath(f func(v any) (any, error)) opCompiler {
	return named(1, 1, func(name string, args []any) (any, error) {
		v := args[0]
		if nullish(v) {
			return nil, nil
		}
		if !bsonkit.IsNumber(v) {
			return nil, mongoerr.New(28765, "%s only supports numeric types, not %s", name, typeName(v))
		}
		return f(v)
	})
}

func absNum(v any) (any, error) {
	switch x := v.(type) {
	case int32:
		if x == math.MinInt32 {
			return -int64(x), nil
		}
		if x < 0 {
			return -x, nil
		}
		return x, nil
	case int64:
		if x == math.MinInt64 {
			return nil, mongoerr.New(28680, "can't take $abs of long long min")
		}
		if x < 0 {
			return -x, nil
		}
		return x, nil
	case float64:
		return math.Abs(x), nil
	case bson.Decimal128:
		f, ok := decToBig(x)
		if !ok {
			return decNaN, nil
		}
		return bigToDec(f.Abs(f)), nil
	}
	return v, nil
}

// roundFn applies ceil or floor: integers are unchanged, decimals are rounded exactly.
func roundFn(v any, ff func(float64) float64, up bool) any {
	switch x := v.(type) {
	case float64:
		return ff(x)
	case bson.Decimal128:
		f, ok := decToBig(x)
		if !ok || f.IsInf() {
			return x
		}
		i, _ := f.Int(nil) // truncates toward zero
		t := new(big.Float).SetPrec(bigPrec).SetInt(i)
		if c := f.Cmp(t); up && c > 0 {
			t.Add(t, big.NewFloat(1))
		} else if !up && c < 0 {
			t.Sub(t, big.NewFloat(1))
		}
		return bigToDec(t)
	}
	return v
}

func sqrtNum(v any) (any, error) {
	if d, ok := v.(bson.Decimal128); ok {
		f, ok := decToBig(d)
		if !ok {
			return decNaN, nil
		}
		if f.Sign() < 0 {
			return nil, mongoerr.New(28714, "$sqrt's argument must be greater than or equal to 0")
		}
		if f.IsInf() {
			return d, nil
		}
		return bigToDec(new(big.Float).SetPrec(bigPrec).Sqrt(f)), nil
	}
	f, _ := toFloat(v)
	if f < 0 {
		return nil, mongoerr.New(28714, "$sqrt's argument must be greater than or equal to 0")
	}
	return math.Sqrt(f), nil
}

func logOf(name string, v any, fn func(float64) float64) (any, error) {
	f, _ := toFloat(v)
	if !(f > 0) && !math.IsNaN(f) {
		code := int32(28766)
		if name == "$log10" {
			code = 28761
		}
		return nil, mongoerr.New(code, "%s's argument must be a positive number, but is %s", name, fmtNum(v))
	}
	if isDecimal(v) {
		return toDecimal(fn(f)), nil
	}
	return fn(f), nil
}

func evalLog(args []any) (any, error) {
	n, b := args[0], args[1]
	if nullish(n) || nullish(b) {
		return nil, nil
	}
	if !bsonkit.IsNumber(n) {
		return nil, mongoerr.New(28756, "$log's argument must be numeric, not %s", typeName(n))
	}
	if !bsonkit.IsNumber(b) {
		return nil, mongoerr.New(28757, "$log's base must be numeric, not %s", typeName(b))
	}
	x, _ := toFloat(n)
	y, _ := toFloat(b)
	if !(x > 0) && !math.IsNaN(x) {
		return nil, mongoerr.New(28758, "$log's argument must be a positive number, but is %s", fmtNum(n))
	}
	if (!(y > 0) || y == 1) && !math.IsNaN(y) {
		return nil, mongoerr.New(28759, "$log's base must be a positive number not equal to 1, but is %s", fmtNum(b))
	}
	r := math.Log(x) / math.Log(y)
	if isDecimal(n) || isDecimal(b) {
		return toDecimal(r), nil
	}
	return r, nil
}

func evalPow(args []any) (any, error) {
	base, exp := args[0], args[1]
	if nullish(base) || nullish(exp) {
		return nil, nil
	}
	if !bsonkit.IsNumber(base) {
		return nil, mongoerr.New(28762, "$pow's base must be numeric, not %s", typeName(base))
	}
	if !bsonkit.IsNumber(exp) {
		return nil, mongoerr.New(28763, "$pow's exponent must be numeric, not %s", typeName(exp))
	}
	bf, _ := toFloat(base)
	ef, _ := toFloat(exp)
	if bf == 0 && ef < 0 {
		return nil, mongoerr.New(28764, "$pow cannot take a base of 0 and a negative exponent")
	}
	if isDecimal(base) || isDecimal(exp) {
		return toDecimal(math.Pow(bf, ef)), nil
	}
	if !isIntegral(base) || !isIntegral(exp) {
		return math.Pow(bf, ef), nil
	}
	b, _ := bsonkit.ToInt64Exact(base)
	e, _ := bsonkit.ToInt64Exact(exp)
	wide := isLong(base) || isLong(exp)
	if e < 0 {
		switch b {
		case 1:
			return intResult(1, wide), nil
		case -1:
			if e%2 == 0 {
				return intResult(1, wide), nil
			}
			return intResult(-1, wide), nil
		}
		return math.Pow(bf, ef), nil
	}
	// Exact integer power by squaring; overflow falls back to double.
	result, acc, n := int64(1), b, e
	for n > 0 {
		if n&1 == 1 {
			r, of := mulOverflow(result, acc)
			if of {
				return math.Pow(bf, ef), nil
			}
			result = r
		}
		n >>= 1
		if n > 0 {
			a, of := mulOverflow(acc, acc)
			if of {
				return math.Pow(bf, ef), nil
			}
			acc = a
		}
	}
	return intResult(result, wide), nil
}

func mulOverflow(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, false
	}
	r := a * b
	if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, true
	}
	return r, false
}

// evalRoundTrunc implements $round (half to even) and $trunc at an optional decimal place
// in [-20, 100].
func evalRoundTrunc(name string, args []any) (any, error) {
	v := args[0]
	place := int64(0)
	if len(args) == 2 {
		p := args[1]
		if nullish(p) {
			return nil, nil
		}
		pi, ok := bsonkit.ToInt64Exact(p)
		if !ok || pi < -20 || pi > 100 {
			return nil, mongoerr.New(51083, "cannot apply %s with precision value %s value must be in [-20, 100]", name, formatValue(p))
		}
		place = pi
	}
	if nullish(v) {
		return nil, nil
	}
	if !bsonkit.IsNumber(v) {
		return nil, mongoerr.New(51081, "%s only supports numeric types, not %s", name, typeName(v))
	}
	trunc := name == "$trunc"
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return x, nil
		}
		// Like mongod, round the double's 15-significant-digit decimal form, so that
		// 2.675 rounds to 2.68 although its binary value is slightly below.
		f, _ := numToBig(toDecimal(x))
		r, _ := roundBig(f, place, trunc).Float64()
		return r, nil
	case bson.Decimal128:
		f, ok := decToBig(x)
		if !ok || f.IsInf() {
			return x, nil
		}
		return bigToDec(roundBig(f, place, trunc)), nil
	}
	if place >= 0 {
		return v, nil
	}
	i, _ := bsonkit.ToInt64Exact(v)
	f := new(big.Float).SetPrec(bigPrec).SetInt64(i)
	r, _ := roundBig(f, place, trunc).Int64()
	return intResult(r, isLong(v) || !fitsInt32(r)), nil
}

// roundBig rounds f to place decimal digits, half to even (or truncating).
func roundBig(f *big.Float, place int64, trunc bool) *big.Float {
	scale := new(big.Float).SetPrec(bigPrec).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(place)), nil))
	x := new(big.Float).SetPrec(bigPrec)
	if place >= 0 {
		x.Mul(f, scale)
	} else {
		x.Quo(f, scale)
	}
	i, _ := x.Int(nil) // toward zero
	if !trunc {
		frac := new(big.Float).SetPrec(bigPrec).Sub(x, new(big.Float).SetPrec(bigPrec).SetInt(i))
		frac.Abs(frac)
		c := frac.Cmp(big.NewFloat(0.5))
		if c > 0 || (c == 0 && i.Bit(0) == 1) {
			if x.Sign() < 0 {
				i.Sub(i, big.NewInt(1))
			} else {
				i.Add(i, big.NewInt(1))
			}
		}
	}
	r := new(big.Float).SetPrec(bigPrec).SetInt(i)
	if place >= 0 {
		return r.Quo(r, scale)
	}
	return r.Mul(r, scale)
}

func abs64(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}
