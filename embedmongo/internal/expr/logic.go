package expr

import (
	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Comparison, boolean and conditional operators.

func init() {
	cmpOp := func(test func(int) bool) opCompiler {
		return fixed(2, func(a []any) (any, error) { return test(bsonkit.Compare(a[0], a[1])), nil })
	}
	register("$eq", cmpOp(func(c int) bool { return c == 0 }))
	register("$ne", cmpOp(func(c int) bool { return c != 0 }))
	register("$gt", cmpOp(func(c int) bool { return c > 0 }))
	register("$gte", cmpOp(func(c int) bool { return c >= 0 }))
	register("$lt", cmpOp(func(c int) bool { return c < 0 }))
	register("$lte", cmpOp(func(c int) bool { return c <= 0 }))
	register("$cmp", fixed(2, func(a []any) (any, error) { return int32(bsonkit.Compare(a[0], a[1])), nil }))

	register("$and", compileAndOr(true))
	register("$or", compileAndOr(false))
	register("$not", fixed(1, func(a []any) (any, error) { return !Truthy(a[0]), nil }))

	register("$cond", compileCond)
	register("$ifNull", compileIfNull)
	register("$switch", compileSwitch)
}

// compileAndOr short-circuits: $and stops at the first falsy operand, $or at the first truthy.
func compileAndOr(isAnd bool) opCompiler {
	return func(name string, arg any) (node, error) {
		kids, err := compileAll(operandList(arg))
		if err != nil {
			return node{}, err
		}
		return dynamic(func(c *ctx) (any, error) {
			for _, k := range kids {
				v, err := k.eval(c)
				if err != nil {
					return nil, err
				}
				if Truthy(v) != isAnd {
					return !isAnd, nil
				}
			}
			return isAnd, nil
		}), nil
	}
}

func compileCond(name string, arg any) (node, error) {
	var ifN, thenN, elseN node
	if d, ok := asDoc(arg); ok {
		var have [3]bool
		for _, e := range d {
			n, err := compile(e.Value)
			if err != nil {
				return node{}, err
			}
			switch e.Key {
			case "if":
				ifN, have[0] = n, true
			case "then":
				thenN, have[1] = n, true
			case "else":
				elseN, have[2] = n, true
			default:
				return node{}, mongoerr.New(17083, "Unrecognized parameter to $cond: %s", e.Key)
			}
		}
		for i, p := range []string{"if", "then", "else"} {
			if !have[i] {
				return node{}, mongoerr.New(int32(17080+i), "Missing '%s' parameter to $cond", p)
			}
		}
	} else {
		kids, err := compileArity(name, arg, 3, 3)
		if err != nil {
			return node{}, err
		}
		ifN, thenN, elseN = kids[0], kids[1], kids[2]
	}
	if ifN.konst {
		if Truthy(ifN.val) {
			return thenN, nil
		}
		return elseN, nil
	}
	return dynamic(func(c *ctx) (any, error) {
		v, err := ifN.eval(c)
		if err != nil {
			return nil, err
		}
		if Truthy(v) {
			return thenN.eval(c)
		}
		return elseN.eval(c)
	}), nil
}

// compileIfNull returns the first operand that is not null/missing, else the last operand's
// value as is (which may itself be missing).
func compileIfNull(name string, arg any) (node, error) {
	vals := operandList(arg)
	if len(vals) < 2 {
		return node{}, mongoerr.New(1257300, "$ifNull needs at least two arguments, had: %d", len(vals))
	}
	kids, err := compileAll(vals)
	if err != nil {
		return node{}, err
	}
	return dynamic(func(c *ctx) (any, error) {
		for i, k := range kids {
			v, err := k.eval(c)
			if err != nil {
				return nil, err
			}
			if !nullish(v) || i == len(kids)-1 {
				return v, nil
			}
		}
		return nil, nil
	}), nil
}

func compileSwitch(name string, arg any) (node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return node{}, mongoerr.New(40060, "$switch requires an object as an argument, found: %s", typeName(arg))
	}
	type branch struct{ cond, then node }
	var branches []branch
	var def *node
	for _, e := range d {
		switch e.Key {
		case "branches":
			arr, ok := asArray(e.Value)
			if !ok {
				return node{}, mongoerr.New(40061, "$switch expected an array for 'branches', found: %s", typeName(e.Value))
			}
			for _, b := range arr {
				bd, ok := asDoc(b)
				if !ok {
					return node{}, mongoerr.New(40062, "$switch expected each branch to be an object, found: %s", typeName(b))
				}
				var br branch
				var hasCase, hasThen bool
				for _, be := range bd {
					n, err := compile(be.Value)
					if err != nil {
						return node{}, err
					}
					switch be.Key {
					case "case":
						br.cond, hasCase = n, true
					case "then":
						br.then, hasThen = n, true
					default:
						return node{}, mongoerr.New(40063, "$switch found an unknown argument to a branch: %s", be.Key)
					}
				}
				if !hasCase {
					return node{}, mongoerr.New(40064, "$switch requires each branch have a 'case' expression")
				}
				if !hasThen {
					return node{}, mongoerr.New(40065, "$switch requires each branch have a 'then' expression.")
				}
				branches = append(branches, br)
			}
		case "default":
			n, err := compile(e.Value)
			if err != nil {
				return node{}, err
			}
			def = &n
		default:
			return node{}, mongoerr.New(40067, "$switch found an unknown argument: %s", e.Key)
		}
	}
	if len(branches) == 0 {
		return node{}, mongoerr.New(40068, "$switch requires at least one branch.")
	}
	return dynamic(func(c *ctx) (any, error) {
		for _, b := range branches {
			v, err := b.cond.eval(c)
			if err != nil {
				return nil, err
			}
			if Truthy(v) {
				return b.then.eval(c)
			}
		}
		if def == nil {
			return nil, mongoerr.New(40066, "$switch could not find a matching branch for an input, and no default was specified.")
		}
		return def.eval(c)
	}), nil
}
