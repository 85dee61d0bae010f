package update

import (
	"math"
	"reflect"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// leafOp is one modifier at one path. apply gets the field's current value (bsonkit.Missing
// when absent) and returns the new value (Missing removes the field) and whether it changed.
type leafOp interface {
	apply(c *applyCtx, name string, cur any) (any, bool, error)
}

func newLeaf(op string, f bson.E, up *Update) (leafOp, error) {
	switch op {
	case "$set":
		return &setOp{val: f.Value}, nil
	case "$setOnInsert":
		return &setOp{val: f.Value, onInsert: true}, nil
	case "$unset":
		return unsetOp{}, nil
	case "$inc", "$mul":
		return newArithOp(op, f)
	case "$min", "$max":
		return &compareOp{val: f.Value, max: op == "$max"}, nil
	case "$currentDate":
		return newCurrentDate(f, up)
	case "$push":
		return newPush(f)
	case "$addToSet":
		return newAddToSet(f)
	case "$pop":
		return newPop(f)
	case "$pull":
		return newPull(f, up)
	case "$pullAll":
		return newPullAll(f)
	case "$bit":
		return newBit(f)
	}
	return nil, mongoerr.New(mongoerr.FailedToParse, "Unknown modifier: %s", op)
}

// setOp is $set, and $setOnInsert (a no-op unless the upsert inserts).
type setOp struct {
	val      any
	onInsert bool
}

func (o *setOp) apply(c *applyCtx, _ string, cur any) (any, bool, error) {
	if o.onInsert && !c.insert {
		return cur, false, nil
	}
	if identical(cur, o.val) {
		return cur, false, nil
	}
	return o.val, true, nil
}

type unsetOp struct{}

func (unsetOp) apply(_ *applyCtx, _ string, cur any) (any, bool, error) {
	if bsonkit.IsMissing(cur) {
		return cur, false, nil
	}
	return bsonkit.Missing, true, nil
}

// arithOp is $inc or $mul, with mongod's numeric promotion (int32 overflow widens to int64;
// int64 overflow fails).
type arithOp struct {
	name string
	op   bsonkit.Arith
	val  any
}

func newArithOp(op string, f bson.E) (leafOp, error) {
	if !bsonkit.IsNumber(f.Value) {
		verb := "increment"
		if op == "$mul" {
			verb = "multiply"
		}
		return nil, mongoerr.New(mongoerr.TypeMismatch, "Cannot %s with non-numeric argument: {%s}", verb, formatElem(f.Key, f.Value))
	}
	if op == "$mul" {
		return &arithOp{name: op, op: bsonkit.Multiply, val: f.Value}, nil
	}
	return &arithOp{name: op, op: bsonkit.Add, val: f.Value}, nil
}

func (o *arithOp) apply(c *applyCtx, name string, cur any) (any, bool, error) {
	if bsonkit.IsMissing(cur) {
		if o.op == bsonkit.Multiply {
			return zeroOf(o.val), true, nil
		}
		return o.val, true, nil
	}
	if !bsonkit.IsNumber(cur) {
		return nil, false, mongoerr.New(mongoerr.TypeMismatch,
			"Cannot apply %s to a value of non-numeric type. {%s} has the field '%s' of non-numeric type %s",
			o.name, idString(c.doc), name, bsonkit.TypeName(cur))
	}
	res, _, overflow := bsonkit.Arithmetic(o.op, cur, o.val, false)
	if overflow {
		return nil, false, mongoerr.New(mongoerr.BadValue,
			"Failed to apply %s operations to current value (%s) for document {%s}", o.name, safeNumString(cur), idString(c.doc))
	}
	if identical(cur, res) {
		return cur, false, nil
	}
	return res, true, nil
}

func zeroOf(v any) any {
	switch v.(type) {
	case int32:
		return int32(0)
	case int64:
		return int64(0)
	case bson.Decimal128:
		d, _ := bson.ParseDecimal128("0")
		return d
	}
	return 0.0
}

// safeNumString renders a number as mongod's SafeNum debug string.
func safeNumString(v any) string {
	switch v.(type) {
	case int32:
		return "(NumberInt)" + bsonkit.FormatNumber(v)
	case int64:
		return "(NumberLong)" + bsonkit.FormatNumber(v)
	case float64:
		return "(NumberDouble)" + bsonkit.FormatNumber(v)
	case bson.Decimal128:
		return "(NumberDecimal)" + bsonkit.FormatNumber(v)
	}
	return formatValue(v)
}

// compareOp is $min / $max: set when the argument sorts below / above the current value.
type compareOp struct {
	val any
	max bool
}

func (o *compareOp) apply(_ *applyCtx, _ string, cur any) (any, bool, error) {
	if bsonkit.IsMissing(cur) {
		return o.val, true, nil
	}
	cmp := bsonkit.Compare(o.val, cur)
	if cmp == 0 || (o.max && cmp < 0) || (!o.max && cmp > 0) {
		return cur, false, nil
	}
	return o.val, true, nil
}

// currentDateOp is $currentDate; the clock is $$NOW when the server supplies it.
type currentDateOp struct {
	timestamp bool
	up        *Update
}

var tsCounter atomic.Uint32

func newCurrentDate(f bson.E, up *Update) (leafOp, error) {
	switch v := f.Value.(type) {
	case bool:
		return &currentDateOp{up: up}, nil
	case bson.D:
		if len(v) == 1 && v[0].Key == "$type" {
			switch v[0].Value {
			case "date":
				return &currentDateOp{up: up}, nil
			case "timestamp":
				return &currentDateOp{timestamp: true, up: up}, nil
			}
			return nil, mongoerr.New(mongoerr.BadValue,
				"The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
		}
		for _, e := range v {
			if e.Key != "$type" {
				return nil, mongoerr.New(mongoerr.BadValue,
					"Unrecognized $currentDate option: %s", e.Key)
			}
		}
	}
	return nil, mongoerr.New(mongoerr.BadValue,
		"%s is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).",
		formatElem(f.Key, f.Value))
}

func (o *currentDateOp) apply(_ *applyCtx, _ string, cur any) (any, bool, error) {
	now, ok := o.up.vars["NOW"].(bson.DateTime)
	if !ok {
		now = bson.NewDateTimeFromTime(time.Now())
	}
	var v any = now
	if o.timestamp {
		v = bson.Timestamp{T: uint32(int64(now) / 1000), I: tsCounter.Add(1)}
	}
	if identical(cur, v) {
		return cur, false, nil
	}
	return v, true, nil
}

// identical reports whether a and b would encode to the same BSON (same types, same field
// names and order): mongod treats only such an update as a no-op.
func identical(a, b any) bool {
	switch x := a.(type) {
	case bsonkit.MissingType:
		return bsonkit.IsMissing(b)
	case nil:
		return b == nil
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int32:
		y, ok := b.(int32)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case bson.D:
		y, ok := b.(bson.D)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Key != y[i].Key || !identical(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case bson.A:
		y, ok := b.(bson.A)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !identical(x[i], y[i]) {
				return false
			}
		}
		return true
	case bson.ObjectID, bson.DateTime, bson.Timestamp, bson.Decimal128, bson.Regex,
		bson.MinKey, bson.MaxKey, bson.Undefined, bson.Null, bson.DBPointer, bson.JavaScript,
		bson.Symbol:
		return a == b
	}
	return reflect.DeepEqual(a, b)
}
