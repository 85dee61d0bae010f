package expr

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

// Accumulators in expression form: with one operand that is an array they range over its
// elements, otherwise over the operands themselves.

func init() {
	register("$sum", accumulator(func(vals []any) any { return Sum(vals) }))
	register("$avg", accumulator(avg))
	register("$min", accumulator(func(vals []any) any { return extreme(vals, -1) }))
	register("$max", accumulator(func(vals []any) any { return extreme(vals, 1) }))
	register("$stdDevPop", accumulator(func(vals []any) any { return stdDev(vals, false) }))
	register("$stdDevSamp", accumulator(func(vals []any) any { return stdDev(vals, true) }))
}

func accumulator(f func(vals []any) any) opCompiler {
	return func(name string, arg any) (node, error) {
		kids, err := compileAll(operandList(arg))
		if err != nil {
			return node{}, err
		}
		return eager(kids, func(args []any) (any, error) {
			if len(args) == 1 {
				if a, ok := asArray(args[0]); ok {
					return f(a), nil
				}
			}
			return f(args), nil
		}), nil
	}
}

// Sum adds the numeric values (others are ignored) with MongoDB's type promotion; no numbers
// gives int32 0.
func Sum(vals []any) any {
	var total any = int32(0)
	for _, v := range vals {
		if !bsonkit.IsNumber(v) {
			continue
		}
		total, _, _ = bsonkit.Arithmetic(bsonkit.Add, total, v, true)
	}
	return total
}

func avg(vals []any) any {
	var total any = int32(0)
	n := 0
	for _, v := range vals {
		if bsonkit.IsNumber(v) {
			total, _, _ = bsonkit.Arithmetic(bsonkit.Add, total, v, true)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if d, ok := total.(bson.Decimal128); ok {
		r, _ := decimalDivide(d, int64(n))
		return r
	}
	f, _ := toFloat(total)
	return f / float64(n)
}

// extreme returns the smallest (dir -1) or largest (dir 1) non-null value, or null.
func extreme(vals []any, dir int) any {
	var best any
	found := false
	for _, v := range vals {
		if nullish(v) {
			continue
		}
		if !found || dir*bsonkit.Compare(v, best) > 0 {
			best, found = v, true
		}
	}
	if !found {
		return nil
	}
	return best
}

func stdDev(vals []any, sample bool) any {
	var nums []float64
	for _, v := range vals {
		if f, ok := toFloat(v); ok {
			nums = append(nums, f)
		}
	}
	n := float64(len(nums))
	if n == 0 || (sample && n < 2) {
		return nil
	}
	mean := 0.0
	for _, x := range nums {
		mean += x
	}
	mean /= n
	ss := 0.0
	for _, x := range nums {
		ss += (x - mean) * (x - mean)
	}
	if sample {
		return math.Sqrt(ss / (n - 1))
	}
	return math.Sqrt(ss / n)
}
