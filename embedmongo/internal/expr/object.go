package expr

import (
	"math/rand/v2"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Object operators, variables ($let) and $literal/$rand.

func init() {
	register("$literal", func(_ string, arg any) (node, error) { return constant(arg), nil })
	register("$let", compileLet)
	register("$getField", compileGetField)
	register("$setField", func(name string, arg any) (node, error) { return compileSetField(name, arg, false) })
	register("$unsetField", func(name string, arg any) (node, error) { return compileSetField(name, arg, true) })
	register("$mergeObjects", ranged(0, -1, evalMergeObjects))
	register("$objectToArray", fixed(1, evalObjectToArray))
	register("$arrayToObject", fixed(1, evalArrayToObject))
	register("$rand", compileRand)
}

func compileLet(name string, arg any) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(16874, "$let only supports an object as its argument")
	}
	var varsArg, inArg any
	var haveVars, haveIn bool
	for _, e := range d {
		switch e.Key {
		case "vars":
			varsArg, haveVars = e.Value, true
		case "in":
			inArg, haveIn = e.Value, true
		default:
			return node{}, mongoerr.New(16875, "Unrecognized parameter to $let: %s", e.Key)
		}
	}
	if !haveVars {
		return node{}, mongoerr.New(16876, "Missing 'vars' parameter to $let")
	}
	if !haveIn {
		return node{}, mongoerr.New(16877, "Missing 'in' parameter to $let")
	}
	vd, ok := asDoc(varsArg)
	if !ok {
		return node{}, mongoerr.New(10065, "invalid parameter: expected an object (vars)")
	}
	names := make([]string, len(vd))
	vals := make([]node, len(vd))
	for i, e := range vd {
		if err := validateVarWrite(e.Key); err != nil {
			return node{}, err
		}
		n, err := compile(e.Value)
		if err != nil {
			return node{}, err
		}
		names[i], vals[i] = e.Key, n
	}
	in, err := compile(inArg)
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		// All variables are evaluated in the outer scope before any is bound.
		inner := *c
		for i, v := range vals {
			x, err := v.eval(c)
			if err != nil {
				return nil, err
			}
			inner.scope = &scope{name: names[i], val: x, next: inner.scope}
		}
		return in.eval(&inner)
	}), nil
}

// constString compiles a parameter that must be a constant string (the 'field' of
// $getField/$setField).
func constString(op string, arg any, nonConstCode, typeCode int32) (string, error) {
	n, err := compile(arg)
	if err != nil {
		return "", err
	}
	if !n.konst {
		return "", mongoerr.New(nonConstCode, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", op)
	}
	s, ok := n.val.(string)
	if !ok {
		return "", mongoerr.New(typeCode, "%s requires 'field' to evaluate to type String, but got %s", op, typeName(n.val))
	}
	return s, nil
}

var currentNode = dynamic(func(c *ctx) (any, error) { return c.current, nil })

func compileGetField(name string, arg any) (node, error) {
	fieldArg, input := arg, currentNode
	if d, ok := asDoc(arg); ok && (len(d) == 0 || !strings.HasPrefix(d[0].Key, "$")) {
		fieldArg = nil
		haveField := false
		for _, e := range d {
			switch e.Key {
			case "field":
				fieldArg, haveField = e.Value, true
			case "input":
				n, err := compile(e.Value)
				if err != nil {
					return node{}, err
				}
				input = n
			default:
				return node{}, mongoerr.New(3041701, "$getField found an unknown argument: %s", e.Key)
			}
		}
		if !haveField {
			return node{}, mongoerr.New(3041702, "$getField requires 'field' to be specified")
		}
	}
	field, err := constString(name, fieldArg, 5654601, 5654602)
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		in, err := input.eval(c)
		if err != nil {
			return nil, err
		}
		switch {
		case bsonkit.IsMissing(in):
			return bsonkit.Missing, nil
		case nullish(in):
			return nil, nil
		}
		d, ok := asDoc(in)
		if !ok {
			return bsonkit.Missing, nil
		}
		if v, ok := bsonkit.Get(d, field); ok {
			return v, nil
		}
		return bsonkit.Missing, nil
	}), nil
}

// compileSetField handles $setField and $unsetField (a $setField whose value is $$REMOVE).
func compileSetField(name string, arg any, unset bool) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(4161100, "%s only supports an object as its argument", name)
	}
	var fieldArg, inputArg, valueArg any
	var haveField, haveInput, haveValue bool
	for _, e := range d {
		switch {
		case e.Key == "field":
			fieldArg, haveField = e.Value, true
		case e.Key == "input":
			inputArg, haveInput = e.Value, true
		case e.Key == "value" && !unset:
			valueArg, haveValue = e.Value, true
		default:
			return node{}, mongoerr.New(4161101, "%s found an unknown argument: %s", name, e.Key)
		}
	}
	switch {
	case !haveField:
		return node{}, mongoerr.New(4161102, "%s requires 'field' to be specified", name)
	case !haveInput:
		return node{}, mongoerr.New(4161103, "%s requires 'input' to be specified", name)
	case !haveValue && !unset:
		return node{}, mongoerr.New(4161104, "%s requires 'value' to be specified", name)
	}
	field, err := constString(name, fieldArg, 4161106, 4161107)
	if err != nil {
		return node{}, err
	}
	input, err := compile(inputArg)
	if err != nil {
		return node{}, err
	}
	value := constant(bsonkit.Missing)
	if !unset {
		if value, err = compile(valueArg); err != nil {
			return node{}, err
		}
	}
	return dynamic(func(c *ctx) (any, error) {
		in, err := input.eval(c)
		if err != nil {
			return nil, err
		}
		if nullish(in) {
			return nil, nil
		}
		doc, ok := asDoc(in)
		if !ok {
			return nil, mongoerr.New(4161105, "%s requires 'input' to evaluate to type Object", name)
		}
		v, err := value.eval(c)
		if err != nil {
			return nil, err
		}
		out := make(bson.D, 0, len(doc)+1)
		found := false
		for _, e := range doc {
			if e.Key == field {
				found = true
				if bsonkit.IsMissing(v) {
					continue
				}
				e.Value = v
			}
			out = append(out, e)
		}
		if !found && !bsonkit.IsMissing(v) {
			out = append(out, bson.E{Key: field, Value: v})
		}
		return out, nil
	}), nil
}

func evalMergeObjects(args []any) (any, error) {
	out := bson.D{}
	for _, a := range args {
		if nullish(a) {
			continue
		}
		d, ok := asDoc(a)
		if !ok {
			return nil, mongoerr.New(40400, "$mergeObjects requires object inputs, but input %s is of type %s", formatValue(a), typeName(a))
		}
		for _, e := range d {
			if bsonkit.IsMissing(e.Value) {
				continue
			}
			out = bsonkit.Set(out, e.Key, e.Value)
		}
	}
	return out, nil
}

func evalObjectToArray(args []any) (any, error) {
	v := args[0]
	if nullish(v) {
		return nil, nil
	}
	d, ok := asDoc(v)
	if !ok {
		return nil, mongoerr.New(40390, "$objectToArray requires a document input, found: %s", typeName(v))
	}
	out := make(bson.A, len(d))
	for i, e := range d {
		out[i] = bson.D{{Key: "k", Value: e.Key}, {Key: "v", Value: e.Value}}
	}
	return out, nil
}

func evalArrayToObject(args []any) (any, error) {
	v := args[0]
	if nullish(v) {
		return nil, nil
	}
	arr, ok := asArray(v)
	if !ok {
		return nil, mongoerr.New(40386, "$arrayToObject requires an array input, found: %s", typeName(v))
	}
	out := bson.D{}
	if len(arr) == 0 {
		return out, nil
	}
	_, pairs := asArray(arr[0])
	for _, el := range arr {
		var key, val any
		if pairs {
			p, ok := asArray(el)
			if !ok {
				return nil, mongoerr.New(40391, "$arrayToObject requires a consistent input format. Elements must all be arrays or all be objects. Array was detected, now found: %s", typeName(el))
			}
			if len(p) != 2 {
				return nil, mongoerr.New(40397, "$arrayToObject requires an array of size 2 arrays,found array of size: %d", len(p))
			}
			key, val = p[0], p[1]
			if _, ok := key.(string); !ok {
				return nil, mongoerr.New(40395, "$arrayToObject requires an array of key-value pairs, where the key must be of type string. Found key type: %s", typeName(key))
			}
		} else {
			d, ok := asDoc(el)
			if !ok {
				if _, isArr := asArray(el); isArr {
					return nil, mongoerr.New(40391, "$arrayToObject requires a consistent input format. Elements must all be arrays or all be objects. Object was detected, now found: array")
				}
				return nil, mongoerr.New(40398, "Unrecognised input type format for $arrayToObject: %s", typeName(el))
			}
			if len(d) != 2 {
				return nil, mongoerr.New(40392, "$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number of keys:%d", len(d))
			}
			k, hasK := bsonkit.Get(d, "k")
			vv, hasV := bsonkit.Get(d, "v")
			if !hasK || !hasV {
				return nil, mongoerr.New(40393, "$arrayToObject requires an object with keys 'k' and 'v'. Missing either or both keys from: %s", formatValue(d))
			}
			if _, ok := k.(string); !ok {
				return nil, mongoerr.New(40394, "$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: %s", typeName(k))
			}
			key, val = k, vv
		}
		ks := key.(string)
		if strings.IndexByte(ks, 0) >= 0 {
			return nil, mongoerr.New(4940400, "Key field cannot contain an embedded null byte")
		}
		out = bsonkit.Set(out, ks, val)
	}
	return out, nil
}

func compileRand(name string, arg any) (node, error) {
	if d, ok := asDoc(arg); !ok || len(d) != 0 {
		return node{}, mongoerr.New(3040501, "$rand not allowed with arguments")
	}
	return dynamic(func(*ctx) (any, error) { return rand.Float64(), nil }), nil
}
