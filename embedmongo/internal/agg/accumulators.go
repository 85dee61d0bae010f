package agg

import (
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// accumulator folds the values of one group for one output field.
type accumulator interface {
	add(v any) error
	result() any
}

// accumulatorFactories builds fresh accumulator state per group.
var accumulatorFactories = map[string]func() accumulator{
	"$sum":          func() accumulator { return &sumAcc{sum: int32(0)} },
	"$avg":          func() accumulator { return &avgAcc{sum: int32(0)} },
	"$min":          func() accumulator { return &minMaxAcc{sign: -1} },
	"$max":          func() accumulator { return &minMaxAcc{sign: 1} },
	"$first":        func() accumulator { return &firstAcc{} },
	"$last":         func() accumulator { return &lastAcc{} },
	"$push":         func() accumulator { return &pushAcc{list: bson.A{}} },
	"$addToSet":     func() accumulator { return &addToSetAcc{set: bson.A{}} },
	"$count":        func() accumulator { return &sumAcc{sum: int32(0)} }, // fed 1 per document
	"$mergeObjects": func() accumulator { return &mergeAcc{doc: bson.D{}} },
	"$stdDevPop":    func() accumulator { return &stdDevAcc{} },
	"$stdDevSamp":   func() accumulator { return &stdDevAcc{sample: true} },
}

// nullish reports the values most accumulators skip.
func nullish(v any) bool {
	switch v.(type) {
	case nil, bson.Null, bson.Undefined, bsonkit.MissingType:
		return true
	}
	return false
}

type sumAcc struct{ sum any }

func (a *sumAcc) add(v any) error {
	if isNumber(v) {
		a.sum, _, _ = bsonkit.Arithmetic(bsonkit.Add, a.sum, v, true)
	}
	return nil
}
func (a *sumAcc) result() any { return a.sum }

type avgAcc struct {
	sum any
	n   int64
}

func (a *avgAcc) add(v any) error {
	if isNumber(v) {
		a.sum, _, _ = bsonkit.Arithmetic(bsonkit.Add, a.sum, v, true)
		a.n++
	}
	return nil
}

func (a *avgAcc) result() any {
	if a.n == 0 {
		return nil
	}
	if d, ok := a.sum.(bson.Decimal128); ok {
		f, _, err := big.ParseFloat(d.String(), 10, 200, big.ToNearestEven)
		if err == nil {
			f.Quo(f, new(big.Float).SetInt64(a.n))
			if r, err := bson.ParseDecimal128(f.Text('g', 34)); err == nil {
				return r
			}
		}
	}
	f, _ := bsonkit.ToFloat64(a.sum)
	return f / float64(a.n)
}

// minMaxAcc keeps the smallest (sign -1) or largest (sign 1) non-null value.
type minMaxAcc struct {
	sign int
	val  any
	set  bool
}

func (a *minMaxAcc) add(v any) error {
	if nullish(v) {
		return nil
	}
	if !a.set || bsonkit.Compare(v, a.val)*a.sign > 0 {
		a.val, a.set = v, true
	}
	return nil
}

func (a *minMaxAcc) result() any {
	if !a.set {
		return nil
	}
	return a.val
}

type firstAcc struct {
	val any
	set bool
}

func (a *firstAcc) add(v any) error {
	if !a.set {
		a.val, a.set = v, true
	}
	return nil
}
func (a *firstAcc) result() any { return missingToNull(a.val) }

type lastAcc struct{ val any }

func (a *lastAcc) add(v any) error { a.val = v; return nil }
func (a *lastAcc) result() any     { return missingToNull(a.val) }

func missingToNull(v any) any {
	if bsonkit.IsMissing(v) {
		return nil
	}
	return v
}

type pushAcc struct{ list bson.A }

func (a *pushAcc) add(v any) error {
	if !bsonkit.IsMissing(v) {
		a.list = append(a.list, v)
	}
	return nil
}
func (a *pushAcc) result() any { return a.list }

type addToSetAcc struct {
	set  bson.A
	seen keyedSet
}

func (a *addToSetAcc) add(v any) error {
	if !bsonkit.IsMissing(v) && a.seen.insert(v) {
		a.set = append(a.set, v)
	}
	return nil
}
func (a *addToSetAcc) result() any { return a.set }

type mergeAcc struct{ doc bson.D }

func (a *mergeAcc) add(v any) error {
	if nullish(v) {
		return nil
	}
	d, ok := v.(bson.D)
	if !ok {
		return mongoerr.New(40400, "$mergeObjects requires object inputs, but input %s is of type %s",
			fmtValue(v), bsonkit.TypeName(v))
	}
	for _, e := range d {
		a.doc = bsonkit.Set(a.doc, e.Key, e.Value)
	}
	return nil
}
func (a *mergeAcc) result() any { return a.doc }

// stdDevAcc uses Welford's online algorithm over the numeric inputs.
type stdDevAcc struct {
	sample   bool
	n        float64
	mean, m2 float64
}

func (a *stdDevAcc) add(v any) error {
	f, ok := bsonkit.ToFloat64(v)
	if !ok {
		return nil
	}
	a.n++
	delta := f - a.mean
	a.mean += delta / a.n
	a.m2 += delta * (f - a.mean)
	return nil
}

func (a *stdDevAcc) result() any {
	if a.sample {
		if a.n < 2 {
			return nil
		}
		return math.Sqrt(a.m2 / (a.n - 1))
	}
	if a.n == 0 {
		return nil
	}
	return math.Sqrt(a.m2 / a.n)
}
