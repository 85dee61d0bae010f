package agg

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// parseBucket implements $bucket: documents are grouped by the boundary interval
// [b[i], b[i+1]) their groupBy value falls in (or the default bucket), output sorted by _id.
func parseBucket(r *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(40201, "Argument to $bucket stage must be an object, but found type: %s.", bsonkit.TypeName(spec))
	}
	var groupBy *expr.Expr
	var bounds bson.A
	var def any
	hasDefault := false
	output := bson.D{{Key: "count", Value: bson.D{{Key: "$sum", Value: int32(1)}}}}
	for _, e := range d {
		switch e.Key {
		case "groupBy":
			s, isStr := e.Value.(string)
			o, isObj := e.Value.(bson.D)
			if !(isStr && strings.HasPrefix(s, "$")) && !(isObj && isExpressionObject(o)) {
				return nil, mongoerr.New(40202, "The $bucket 'groupBy' field must be defined as a $-prefixed path or an expression, but found: %s.", fmtValue(e.Value))
			}
			var err error
			if groupBy, err = expr.Compile(e.Value); err != nil {
				return nil, err
			}
		case "boundaries":
			a, ok := e.Value.(bson.A)
			if !ok {
				return nil, mongoerr.New(40200, "The $bucket 'boundaries' field must be an array, but found type: %s.", bsonkit.TypeName(e.Value))
			}
			bounds = a
		case "default":
			def, hasDefault = e.Value, true
		case "output":
			o, ok := e.Value.(bson.D)
			if !ok {
				return nil, mongoerr.New(40196, "The $bucket 'output' field must be an object, but found type: %s.", bsonkit.TypeName(e.Value))
			}
			output = o
		default:
			return nil, mongoerr.New(40197, "Unrecognized option to $bucket: %s.", e.Key)
		}
	}
	if groupBy == nil || bounds == nil {
		return nil, mongoerr.New(40198, "$bucket requires 'groupBy' and 'boundaries' to be specified.")
	}
	if len(bounds) < 2 {
		return nil, mongoerr.New(40192, "The $bucket 'boundaries' field must have at least 2 values, but found %d value(s).", len(bounds))
	}
	for i := 1; i < len(bounds); i++ {
		if bsonkit.CanonicalType(bounds[i]) != bsonkit.CanonicalType(bounds[0]) {
			return nil, mongoerr.New(40193, "All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types %s and %s.",
				bsonkit.TypeName(bounds[0]), bsonkit.TypeName(bounds[i]))
		}
		if bsonkit.Compare(bounds[i-1], bounds[i]) >= 0 {
			return nil, mongoerr.New(40194, "The 'boundaries' option to $bucket must be sorted in ascending order")
		}
	}
	if hasDefault && bsonkit.CanonicalType(def) == bsonkit.CanonicalType(bounds[0]) &&
		bsonkit.Compare(def, bounds[0]) >= 0 && bsonkit.Compare(def, bounds[len(bounds)-1]) < 0 {
		return nil, mongoerr.New(40199, "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.")
	}
	specs, err := compileAccumulators(output)
	if err != nil {
		return nil, err
	}
	return func(in []bson.D) ([]bson.D, error) {
		groups := map[int][]accumulator{} // bucket index; len(bounds)-1 is the default bucket
		for _, doc := range in {
			v, err := groupBy.Eval(doc, r.opts.Vars)
			if err != nil {
				return nil, err
			}
			i := len(bounds) - 1
			if bsonkit.CanonicalType(v) == bsonkit.CanonicalType(bounds[0]) {
				if j := sort.Search(len(bounds), func(k int) bool { return bsonkit.Compare(bounds[k], v) > 0 }); j > 0 && j < len(bounds) {
					i = j - 1
				}
			}
			if i == len(bounds)-1 && !hasDefault {
				return nil, mongoerr.New(40066, "$switch could not find a matching branch for an input, and no default was specified.")
			}
			if groups[i] == nil {
				id := def
				if i < len(bounds)-1 {
					id = bounds[i]
				}
				if groups[i], err = newAccumulators(specs, id, r.opts.Vars); err != nil {
					return nil, err
				}
			}
			if err := feed(specs, groups[i], doc, r.opts.Vars); err != nil {
				return nil, err
			}
		}
		var out []bson.D
		for i := 0; i < len(bounds); i++ {
			accs := groups[i]
			if accs == nil {
				continue
			}
			id := def
			if i < len(bounds)-1 {
				id = bounds[i]
			}
			out = append(out, groupOutput(id, specs, accs))
		}
		sort.SliceStable(out, func(a, b int) bool { return bsonkit.Compare(out[a][0].Value, out[b][0].Value) < 0 })
		return out, nil
	}, nil
}
