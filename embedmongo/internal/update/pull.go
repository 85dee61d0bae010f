package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// pathOperators are the query operators that apply to a field's value; a $pull condition
// starting with one is matched against each element itself ({$pull: {a: {$gte: 6}}}).
var pathOperators = map[string]bool{
	"$eq": true, "$ne": true, "$gt": true, "$gte": true, "$lt": true, "$lte": true,
	"$in": true, "$nin": true, "$exists": true, "$type": true, "$regex": true, "$options": true,
	"$size": true, "$all": true, "$elemMatch": true, "$mod": true, "$not": true,
	"$bitsAllSet": true, "$bitsAllClear": true, "$bitsAnySet": true, "$bitsAnyClear": true,
	"$geoWithin": true, "$geoIntersects": true, "$near": true, "$nearSphere": true, "$within": true,
}

// pullKey is the field name an element is wrapped under to match it with an operator condition.
const pullKey = "e"

// newPull compiles $pull's three forms as mongod does: an operator condition matched against
// each element, a query document matched against document elements, or a value compared for
// equality with whole elements.
func newPull(f bson.E, up *Update) (leafOp, error) {
	qopts := query.Options{Vars: up.vars}
	switch v := f.Value.(type) {
	case bson.D:
		if len(v) > 0 && pathOperators[v[0].Key] {
			m, err := query.Compile(bson.D{{Key: pullKey, Value: v}}, qopts)
			if err != nil {
				return nil, err
			}
			return &cullOp{match: wrapMatch(m)}, nil
		}
		m, err := query.Compile(v, qopts)
		if err != nil {
			return nil, err
		}
		return &cullOp{match: func(e any) (bool, error) {
			d, ok := e.(bson.D)
			if !ok {
				return false, nil
			}
			return m.Match(d)
		}}, nil
	case bson.Regex:
		m, err := query.Compile(bson.D{{Key: pullKey, Value: v}}, qopts)
		if err != nil {
			return nil, err
		}
		return &cullOp{match: wrapMatch(m)}, nil
	}
	val := f.Value
	return &cullOp{match: func(e any) (bool, error) { return bsonkit.Equal(e, val), nil }}, nil
}

func wrapMatch(m *query.Matcher) func(any) (bool, error) {
	return func(e any) (bool, error) { return m.Match(bson.D{{Key: pullKey, Value: e}}) }
}

// bitOp is $bit: and/or/xor applied in order to an int or long field (a missing field
// starts at int 0).
type bitOp struct{ ops []bson.E }

func newBit(f bson.E) (leafOp, error) {
	spec, ok := f.Value.(bson.D)
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue,
			"The $bit modifier is not compatible with a %s. You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}",
			bsonkit.TypeName(f.Value))
	}
	if len(spec) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue,
			"You must pass in at least one bitwise operation. The format is: {$bit: {field: {and/or/xor: #}}")
	}
	for _, e := range spec {
		if e.Key != "and" && e.Key != "or" && e.Key != "xor" {
			return nil, mongoerr.New(mongoerr.BadValue,
				"The $bit modifier only supports 'and', 'or', and 'xor', not '%s' which is an unknown operator: {%s}",
				e.Key, formatElem(e.Key, e.Value))
		}
		switch e.Value.(type) {
		case int32, int64:
		default:
			return nil, mongoerr.New(mongoerr.BadValue,
				"The $bit modifier field must be an Integer(32/64 bit); a '%s' is not supported here: {%s}",
				bsonkit.TypeName(e.Value), formatElem(e.Key, e.Value))
		}
	}
	return &bitOp{ops: spec}, nil
}

func (o *bitOp) apply(c *applyCtx, name string, cur any) (any, bool, error) {
	var v any = int32(0)
	switch cur.(type) {
	case bsonkit.MissingType:
	case int32, int64:
		v = cur
	default:
		return nil, false, mongoerr.New(mongoerr.BadValue,
			"Cannot apply $bit to a value of non-integral type.{%s} has the field %s of non-integer type %s",
			idString(c.doc), name, bsonkit.TypeName(cur))
	}
	for _, e := range o.ops {
		v = bitwise(e.Key, v, e.Value)
	}
	if identical(cur, v) {
		return cur, false, nil
	}
	return v, true, nil
}

// bitwise combines two integers; the result is int64 when either operand is.
func bitwise(op string, a, b any) any {
	x, _ := bsonkit.ToInt64Exact(a)
	y, _ := bsonkit.ToInt64Exact(b)
	var r int64
	switch op {
	case "and":
		r = x & y
	case "or":
		r = x | y
	default:
		r = x ^ y
	}
	_, a32 := a.(int32)
	_, b32 := b.(int32)
	if a32 && b32 {
		return int32(r)
	}
	return r
}
