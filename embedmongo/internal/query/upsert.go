package query

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// UpsertSeed builds the document an upsert starts from: the filter's equality conditions on
// fields ({a: 1}, {a: {$eq: 1}}, {a: {$in: [1]}}, inside $and or a single-clause $or, dotted
// paths as embedded documents). Other conditions contribute nothing.
func UpsertSeed(filter bson.D) (bson.D, error) {
	var eqs []bson.E
	collectEqualities(filter, &eqs)
	for i := range eqs {
		for j := 0; j < i; j++ {
			a, b := eqs[j].Key, eqs[i].Key
			if a == b {
				return nil, mongoerr.New(mongoerr.NotSingleValueField,
					"cannot infer query fields to set, path '%s' is matched twice", a)
			}
			if strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".") {
				return nil, mongoerr.New(mongoerr.NotSingleValueField,
					"cannot infer query fields to set, both paths '%s' and '%s' are matched", b, a)
			}
		}
	}
	out := bson.D{}
	for _, e := range eqs {
		out = setPath(out, strings.Split(e.Key, "."), e.Value)
	}
	return out, nil
}

func collectEqualities(filter bson.D, eqs *[]bson.E) {
	for _, e := range filter {
		switch {
		case e.Key == "$and":
			for _, c := range asArray(e.Value) {
				if d, ok := c.(bson.D); ok {
					collectEqualities(d, eqs)
				}
			}
		case e.Key == "$or":
			if arr := asArray(e.Value); len(arr) == 1 {
				if d, ok := arr[0].(bson.D); ok {
					collectEqualities(d, eqs)
				}
			}
		case strings.HasPrefix(e.Key, "$"):
		default:
			if v, ok := equalityValue(e.Value); ok {
				*eqs = append(*eqs, bson.E{Key: e.Key, Value: v})
			}
		}
	}
}

func asArray(v any) bson.A {
	a, _ := v.(bson.A)
	return a
}

// equalityValue returns the value a field condition pins the field to, if any.
func equalityValue(v any) (any, bool) {
	if _, isRe := v.(bson.Regex); isRe {
		return nil, false
	}
	ops, isOps := isOperatorDoc(v)
	if !isOps {
		return normalize(v), true
	}
	var val any
	found := false
	for _, op := range ops {
		var x any
		switch op.Key {
		case "$eq":
			x = op.Value
		case "$in":
			arr, _ := op.Value.(bson.A)
			if len(arr) != 1 {
				continue
			}
			if _, isRe := arr[0].(bson.Regex); isRe {
				continue
			}
			x = arr[0]
		default:
			continue
		}
		if !found {
			val, found = normalize(x), true
		}
	}
	return val, found
}

// setPath sets a dotted path in d, creating embedded documents along the way.
func setPath(d bson.D, parts []string, v any) bson.D {
	if len(parts) == 1 {
		return append(d, bson.E{Key: parts[0], Value: v})
	}
	for i := range d {
		if d[i].Key == parts[0] {
			if sub, ok := d[i].Value.(bson.D); ok {
				d[i].Value = setPath(sub, parts[1:], v)
				return d
			}
		}
	}
	return append(d, bson.E{Key: parts[0], Value: setPath(bson.D{}, parts[1:], v)})
}
