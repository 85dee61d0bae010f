package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Set operators treat arrays as sets: duplicates are dropped and the output order is
// unspecified (we keep first-seen order).

func init() {
	register("$setUnion", ranged(0, -1, func(a []any) (any, error) { return setCombine("$setUnion", 17043, a, false) }))
	register("$setIntersection", ranged(0, -1, func(a []any) (any, error) { return setCombine("$setIntersection", 17047, a, true) }))
	register("$setDifference", fixed(2, evalSetDifference))
	register("$setEquals", named(2, -1, evalSetEquals))
	register("$setIsSubset", fixed(2, evalSetIsSubset))
	register("$allElementsTrue", fixed(1, func(a []any) (any, error) { return elementsTrue("$allElementsTrue", 17040, a[0], true) }))
	register("$anyElementTrue", fixed(1, func(a []any) (any, error) { return elementsTrue("$anyElementTrue", 17041, a[0], false) }))
}

func contains(set bson.A, v any) bool {
	for _, e := range set {
		if bsonkit.Equal(e, v) {
			return true
		}
	}
	return false
}

func dedupe(a bson.A) bson.A {
	out := bson.A{}
	for _, e := range a {
		if !contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func setCombine(op string, code int32, args []any, intersect bool) (any, error) {
	var out bson.A
	for i, v := range args {
		if nullish(v) {
			return nil, nil
		}
		a, ok := asArray(v)
		if !ok {
			return nil, mongoerr.New(code, "All operands of %s must be arrays. One argument is of type: %s", op, typeName(v))
		}
		switch {
		case i == 0:
			out = dedupe(a)
		case intersect:
			kept := bson.A{}
			for _, e := range out {
				if contains(a, e) {
					kept = append(kept, e)
				}
			}
			out = kept
		default:
			for _, e := range a {
				if !contains(out, e) {
					out = append(out, e)
				}
			}
		}
	}
	if out == nil {
		out = bson.A{}
	}
	return out, nil
}

func evalSetDifference(args []any) (any, error) {
	if nullish(args[0]) || nullish(args[1]) {
		return nil, nil
	}
	a, ok := asArray(args[0])
	if !ok {
		return nil, mongoerr.New(17048, "both operands of $setDifference must be arrays. First argument is of type: %s", typeName(args[0]))
	}
	b, ok := asArray(args[1])
	if !ok {
		return nil, mongoerr.New(17049, "both operands of $setDifference must be arrays. Second argument is of type: %s", typeName(args[1]))
	}
	out := bson.A{}
	for _, e := range dedupe(a) {
		if !contains(b, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func evalSetEquals(_ string, args []any) (any, error) {
	var first bson.A
	for i, v := range args {
		a, ok := asArray(v)
		if !ok {
			return nil, mongoerr.New(17044, "All operands of $setEquals must be arrays. One argument is of type: %s", typeName(v))
		}
		if i == 0 {
			first = a
			continue
		}
		for _, e := range a {
			if !contains(first, e) {
				return false, nil
			}
		}
		for _, e := range first {
			if !contains(a, e) {
				return false, nil
			}
		}
	}
	return true, nil
}

func evalSetIsSubset(args []any) (any, error) {
	a, ok := asArray(args[0])
	if !ok {
		return nil, mongoerr.New(17046, "both operands of $setIsSubset must be arrays. First argument is of type: %s", typeName(args[0]))
	}
	b, ok := asArray(args[1])
	if !ok {
		return nil, mongoerr.New(17042, "both operands of $setIsSubset must be arrays. Second argument is of type: %s", typeName(args[1]))
	}
	for _, e := range a {
		if !contains(b, e) {
			return false, nil
		}
	}
	return true, nil
}

func elementsTrue(op string, code int32, v any, all bool) (any, error) {
	a, ok := asArray(v)
	if !ok {
		return nil, mongoerr.New(code, "%s's argument must be an array, but is %s", op, typeName(v))
	}
	for _, e := range a {
		if Truthy(e) != all {
			return !all, nil
		}
	}
	return all, nil
}
