package expr

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// opCompiler compiles the argument of one operator ({$name: arg}).
type opCompiler func(name string, arg any) (node, error)

// ops is the operator table; each topic file registers its operators in init.
var ops = map[string]opCompiler{}

func register(name string, c opCompiler) { ops[name] = c }

// compileObject compiles an operator call ({$op: arg}) or an object expression.
func compileObject(d bson.D) (node, error) {
	if len(d) == 0 {
		return constant(bson.D{}), nil
	}
	if strings.HasPrefix(d[0].Key, "$") {
		if len(d) > 1 {
			return node{}, mongoerr.New(15983, "an expression specification must contain exactly one field, the name of the expression. Found %d fields in %s", len(d), formatValue(d))
		}
		c, ok := ops[d[0].Key]
		if !ok {
			return node{}, errInvalidOp("Unrecognized expression '%s'", d[0].Key)
		}
		return c(d[0].Key, d[0].Value)
	}
	keys := make([]string, len(d))
	kids := make([]node, len(d))
	allConst := true
	seen := make(map[string]bool, len(d))
	for i, e := range d {
		if err := validFieldName(e.Key); err != nil {
			return node{}, err
		}
		if seen[e.Key] {
			return node{}, mongoerr.New(16406, "duplicate field name specified in object literal: %s", formatValue(d))
		}
		seen[e.Key] = true
		n, err := compile(e.Value)
		if err != nil {
			return node{}, err
		}
		keys[i], kids[i] = e.Key, n
		allConst = allConst && n.konst
	}
	build := func(c *ctx) (any, error) {
		out := make(bson.D, 0, len(kids))
		for i, k := range kids {
			v, err := k.eval(c)
			if err != nil {
				return nil, err
			}
			if !bsonkit.IsMissing(v) {
				out = append(out, bson.E{Key: keys[i], Value: v})
			}
		}
		return out, nil
	}
	if allConst {
		v, _ := build(nil)
		return constant(v), nil
	}
	return dynamic(build), nil
}

// compileArray compiles an array of expressions; Missing elements become null, as in mongod.
func compileArray(a bson.A) (node, error) {
	kids := make([]node, len(a))
	allConst := true
	for i, e := range a {
		n, err := compile(e)
		if err != nil {
			return node{}, err
		}
		kids[i] = n
		allConst = allConst && n.konst
	}
	build := func(c *ctx) (any, error) {
		out := make(bson.A, len(kids))
		for i, k := range kids {
			v, err := k.eval(c)
			if err != nil {
				return nil, err
			}
			if bsonkit.IsMissing(v) {
				v = nil
			}
			out[i] = v
		}
		return out, nil
	}
	if allConst {
		v, _ := build(nil)
		return constant(v), nil
	}
	return dynamic(build), nil
}

// operandList splits an operator argument into operands: an array's elements, or the single
// value itself.
func operandList(arg any) []any {
	switch x := arg.(type) {
	case bson.A:
		return x
	case []any:
		return x
	}
	return []any{arg}
}

func compileAll(vals []any) ([]node, error) {
	out := make([]node, len(vals))
	for i, v := range vals {
		n, err := compile(v)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// compileArity compiles the operands of name, checking their count as mongod does
// (max < 0: unbounded).
func compileArity(name string, arg any, lo, hi int) ([]node, error) {
	vals := operandList(arg)
	n := len(vals)
	if lo == hi && n != lo {
		return nil, mongoerr.New(16020, "Expression %s takes exactly %d arguments. %d were passed in.", name, lo, n)
	}
	if n < lo || (hi >= 0 && n > hi) {
		if hi < 0 {
			return nil, mongoerr.New(16020, "Expression %s takes at least %d arguments. %d were passed in.", name, lo, n)
		}
		return nil, mongoerr.New(28667, "Expression %s takes at least %d arguments, and at most %d, but %d were passed in.", name, lo, hi, n)
	}
	return compileAll(vals)
}

// applyFn computes an operator's result from its evaluated operands.
type applyFn func(args []any) (any, error)

// eager builds a node that evaluates all operands, then applies f. Constant operands are
// folded at compile time when f succeeds on them (errors are left for evaluation time).
func eager(kids []node, f applyFn) node {
	allConst := true
	for _, k := range kids {
		allConst = allConst && k.konst
	}
	if allConst {
		vals := make([]any, len(kids))
		for i, k := range kids {
			vals[i] = k.val
		}
		if v, err := f(vals); err == nil {
			return constant(v)
		}
	}
	return dynamic(func(c *ctx) (any, error) {
		var buf [4]any
		vals := buf[:0]
		if len(kids) > len(buf) {
			vals = make([]any, 0, len(kids))
		}
		for _, k := range kids {
			v, err := k.eval(c)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		return f(vals)
	})
}

// fixed registers-style helper: an operator with exactly n operands.
func fixed(n int, f applyFn) opCompiler { return ranged(n, n, f) }

// ranged is an operator with lo..hi operands (hi < 0: unbounded).
func ranged(lo, hi int, f applyFn) opCompiler {
	return func(name string, arg any) (node, error) {
		kids, err := compileArity(name, arg, lo, hi)
		if err != nil {
			return node{}, err
		}
		return eager(kids, f), nil
	}
}

// named is like ranged but hands the operator name to f (for error messages).
func named(lo, hi int, f func(name string, args []any) (any, error)) opCompiler {
	return func(name string, arg any) (node, error) {
		kids, err := compileArity(name, arg, lo, hi)
		if err != nil {
			return node{}, err
		}
		return eager(kids, func(args []any) (any, error) { return f(name, args) }), nil
	}
}

// argObject parses an operator argument that must be a document of named parameters.
// required lists mandatory names; allowed lists all accepted names.
func argObject(name string, arg any, allowed []string) (map[string]node, error) {
	d, ok := asDoc(arg)
	if !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s expects an object of named arguments but found: %s", name, bsonkit.TypeName(arg))
	}
	out := make(map[string]node, len(d))
	for _, e := range d {
		known := false
		for _, a := range allowed {
			if a == e.Key {
				known = true
				break
			}
		}
		if !known {
			return nil, mongoerr.New(mongoerr.FailedToParse, "%s found an unknown argument: %s", name, e.Key)
		}
		n, err := compile(e.Value)
		if err != nil {
			return nil, err
		}
		out[e.Key] = n
	}
	return out, nil
}

func asDoc(v any) (bson.D, bool) {
	switch x := v.(type) {
	case bson.D:
		return x, true
	case bson.M, bson.Raw:
		return bsonkit.ToD(x), true
	}
	return nil, false
}

func asArray(v any) (bson.A, bool) {
	switch x := v.(type) {
	case bson.A:
		return x, true
	case []any:
		return bson.A(x), true
	}
	return nil, false
}

// nullish reports null, undefined or Missing: the values most operators map to null.
func nullish(v any) bool {
	switch v.(type) {
	case nil, bson.Null, bson.Undefined, bsonkit.MissingType:
		return true
	}
	return false
}

func errInvalidOp(format string, args ...any) error {
	e := mongoerr.New(168, format, args...)
	e.Name = "InvalidPipelineOperator"
	return e
}

// typeName is the type name mongod uses in messages.
func typeName(v any) string { return bsonkit.TypeName(v) }

// formatValue renders a value for error messages (relaxed extended JSON).
func formatValue(v any) string {
	if bsonkit.IsMissing(v) {
		return "MISSING"
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return "?"
	}
	s := string(b)
	s = strings.TrimPrefix(s, `{"v":`)
	return strings.TrimSuffix(s, "}")
}
