package update

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// pushOp is $push, with the $each/$position/$sort/$slice modifiers.
type pushOp struct {
	each     bson.A
	position *int64
	slice    *int64
	sort     *pushSort
}

type pushSort struct {
	dir     int    // whole-element sort direction when fields is empty
	pattern bson.D // {field: 1|-1, ...}
}

func newPush(f bson.E) (leafOp, error) {
	spec, isDoc := f.Value.(bson.D)
	hasEach := false
	if isDoc {
		_, hasEach = bsonkit.Get(spec, "$each")
	}
	if !hasEach {
		return &pushOp{each: bson.A{f.Value}}, nil
	}
	o := &pushOp{}
	seen := map[string]bool{}
	for _, e := range spec {
		if seen[e.Key] {
			return nil, mongoerr.New(mongoerr.BadValue, "Only one %s is supported.", e.Key)
		}
		seen[e.Key] = true
		switch e.Key {
		case "$each":
			arr, ok := e.Value.(bson.A)
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue,
					"The argument to $each in $push must be an array but it was of type: %s", bsonkit.TypeName(e.Value))
			}
			o.each = arr
		case "$slice":
			n, ok := integral(e.Value)
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue,
					"The value for $slice must be an integer value but was given type: %s", bsonkit.TypeName(e.Value))
			}
			o.slice = &n
		case "$position":
			n, ok := integral(e.Value)
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue,
					"The value for $position must be an integer value, not of type: %s", bsonkit.TypeName(e.Value))
			}
			o.position = &n
		case "$sort":
			s, err := parsePushSort(e.Value)
			if err != nil {
				return nil, err
			}
			o.sort = s
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "Unrecognized clause in $push: %s", e.Key)
		}
	}
	return o, nil
}

func integral(v any) (int64, bool) {
	if !bsonkit.IsNumber(v) {
		return 0, false
	}
	return bsonkit.ToInt64Exact(v)
}

func parsePushSort(v any) (*pushSort, error) {
	if d, ok := v.(bson.D); ok {
		if len(d) == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "The $sort pattern is empty when it should be a set of fields.")
		}
		for _, e := range d {
			if e.Key == "" || strings.HasPrefix(e.Key, ".") || strings.HasSuffix(e.Key, ".") || strings.Contains(e.Key, "..") {
				return nil, mongoerr.New(mongoerr.BadValue, "The $sort field is a dotted field but has an empty part: %s", e.Key)
			}
			n, ok := integral(e.Value)
			if !ok || (n != 1 && n != -1) {
				return nil, mongoerr.New(mongoerr.BadValue, "The $sort element value must be either 1 or -1")
			}
		}
		return &pushSort{pattern: d}, nil
	}
	if !bsonkit.IsNumber(v) {
		return nil, mongoerr.New(mongoerr.BadValue,
			"The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields")
	}
	n, ok := integral(v)
	if !ok || (n != 1 && n != -1) {
		return nil, mongoerr.New(mongoerr.BadValue, "The $sort element value must be either 1 or -1")
	}
	return &pushSort{dir: int(n)}, nil
}

func (s *pushSort) less(a, b any) bool {
	if len(s.pattern) == 0 {
		return bsonkit.Compare(a, b)*s.dir < 0
	}
	for _, e := range s.pattern {
		dir, _ := integral(e.Value)
		c := bsonkit.Compare(sortKey(a, e.Key), sortKey(b, e.Key))
		if c != 0 {
			return c*int(dir) < 0
		}
	}
	return false
}

// sortKey extracts a $sort field from an element; absent fields (and non-documents) sort as null.
func sortKey(v any, path string) any {
	d, ok := v.(bson.D)
	if !ok {
		return nil
	}
	k := bsonkit.GetPath(d, path)
	if bsonkit.IsMissing(k) {
		return nil
	}
	return k
}

func (o *pushOp) apply(c *applyCtx, name string, cur any) (any, bool, error) {
	var arr bson.A
	switch x := cur.(type) {
	case bsonkit.MissingType:
	case bson.A:
		arr = x
	default:
		return nil, false, mongoerr.New(mongoerr.BadValue,
			"The field '%s' must be an array but is of type %s in document {%s}", c.pathString(), bsonkit.TypeName(cur), idString(c.doc))
	}
	pos := int64(len(arr))
	if o.position != nil {
		pos = *o.position
		if pos < 0 {
			pos = max(0, int64(len(arr))+pos)
		}
		pos = min(pos, int64(len(arr)))
	}
	out := make(bson.A, 0, len(arr)+len(o.each))
	out = append(out, arr[:pos]...)
	out = append(out, o.each...)
	out = append(out, arr[pos:]...)
	if o.sort != nil {
		sort.SliceStable(out, func(i, j int) bool { return o.sort.less(out[i], out[j]) })
	}
	if o.slice != nil {
		n := *o.slice
		switch {
		case n >= 0 && n < int64(len(out)):
			out = out[:n]
		case n < 0 && -n < int64(len(out)):
			out = out[int64(len(out))+n:]
		}
	}
	if !bsonkit.IsMissing(cur) && identical(cur, out) {
		return cur, false, nil
	}
	return out, true, nil
}

// addToSetOp is $addToSet (with $each): appends the values not already present, comparing
// whole values as mongod does (documents by field names and order too).
type addToSetOp struct{ vals bson.A }

func newAddToSet(f bson.E) (leafOp, error) {
	vals := bson.A{f.Value}
	if d, ok := f.Value.(bson.D); ok && len(d) > 0 && d[0].Key == "$each" {
		arr, ok := d[0].Value.(bson.A)
		if !ok {
			return nil, mongoerr.New(mongoerr.BadValue,
				"The argument to $each in $addToSet must be an array but it was of type %s", bsonkit.TypeName(d[0].Value))
		}
		if len(d) > 1 {
			return nil, mongoerr.New(mongoerr.BadValue, "Found unexpected fields after $each in $addToSet: %s", formatValue(d))
		}
		vals = nil
		for _, v := range arr {
			if !containsEqual(vals, v) {
				vals = append(vals, v)
			}
		}
	}
	return &addToSetOp{vals: vals}, nil
}

func containsEqual(arr bson.A, v any) bool {
	for _, e := range arr {
		if bsonkit.Equal(e, v) {
			return true
		}
	}
	return false
}

func (o *addToSetOp) apply(c *applyCtx, name string, cur any) (any, bool, error) {
	switch x := cur.(type) {
	case bsonkit.MissingType:
		return append(bson.A{}, o.vals...), true, nil
	case bson.A:
		var out bson.A
		for _, v := range o.vals {
			if containsEqual(x, v) {
				continue
			}
			if out == nil {
				out = make(bson.A, len(x), len(x)+len(o.vals))
				copy(out, x)
			}
			out = append(out, v)
		}
		if out == nil {
			return cur, false, nil
		}
		return out, true, nil
	}
	return nil, false, mongoerr.New(mongoerr.BadValue,
		"Cannot apply $addToSet to non-array field. Field named '%s' has non-array type %s", name, bsonkit.TypeName(cur))
}

// popOp is $pop: 1 removes the last element, -1 the first.
type popOp struct{ front bool }

func newPop(f bson.E) (leafOp, error) {
	if !bsonkit.IsNumber(f.Value) {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Expected a number in: %s", formatElem(f.Key, f.Value))
	}
	n, ok := bsonkit.ToInt64Exact(f.Value)
	if !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Expected an integer: %s", formatElem(f.Key, f.Value))
	}
	if n != 1 && n != -1 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$pop expects 1 or -1, found: %d", n)
	}
	return &popOp{front: n == -1}, nil
}

func (o *popOp) apply(c *applyCtx, _ string, cur any) (any, bool, error) {
	switch x := cur.(type) {
	case bsonkit.MissingType:
		return cur, false, nil
	case bson.A:
		if len(x) == 0 {
			return cur, false, nil
		}
		if o.front {
			return append(bson.A{}, x[1:]...), true, nil
		}
		return append(bson.A{}, x[:len(x)-1]...), true, nil
	}
	return nil, false, mongoerr.New(mongoerr.TypeMismatch,
		"Path '%s' contains an element of non-array type '%s'", c.pathString(), bsonkit.TypeName(cur))
}

// cullOp is $pull and $pullAll: removes the elements match selects.
type cullOp struct {
	match func(elem any) (bool, error)
}

func newPullAll(f bson.E) (leafOp, error) {
	vals, ok := f.Value.(bson.A)
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue,
			"$pullAll requires an array argument but was given a %s", bsonkit.TypeName(f.Value))
	}
	return &cullOp{match: func(e any) (bool, error) { return containsEqual(vals, e), nil }}, nil
}

func (o *cullOp) apply(_ *applyCtx, _ string, cur any) (any, bool, error) {
	switch x := cur.(type) {
	case bsonkit.MissingType:
		return cur, false, nil
	case bson.A:
		var out bson.A
		for i, e := range x {
			hit, err := o.match(e)
			if err != nil {
				return nil, false, err
			}
			if hit && out == nil {
				out = make(bson.A, i, len(x))
				copy(out, x[:i])
			} else if !hit && out != nil {
				out = append(out, e)
			}
		}
		if out == nil {
			return cur, false, nil
		}
		return out, true, nil
	}
	// mongod names $pull here for $pullAll too.
	return nil, false, mongoerr.New(mongoerr.BadValue, "Cannot apply $pull to a non-array value")
}
