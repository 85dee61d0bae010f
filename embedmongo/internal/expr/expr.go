// Package expr evaluates MongoDB aggregation expressions.
//
// An expression is compiled once into a tree of closures (Compile) and then evaluated against
// documents (Expr.Eval); Eval compiles and evaluates in one step. Results may share structure
// with the expression and with the input document: callers must bsonkit.DeepCopy a result
// before mutating it.
package expr

import (
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Vars maps variable names (without the "$$" prefix) to values: "NOW" (bson.DateTime) and
// user variables from `let`. ROOT and CURRENT are supplied by Eval from its doc argument
// unless set here (CURRENT may be rebound).
type Vars map[string]any

// Expr is a compiled expression, safe for concurrent use.
type Expr struct{ n node }

// Compile parses e once so it can be evaluated many times. Parse-time errors (unknown
// operators, wrong arity, malformed field paths) are reported here.
func Compile(e any) (*Expr, error) {
	n, err := compile(e)
	if err != nil {
		return nil, err
	}
	return &Expr{n: n}, nil
}

// IsConstant reports whether the expression depends on neither the document nor variables,
// and if so its value.
func (x *Expr) IsConstant() (any, bool) { return x.n.val, x.n.konst }

// Eval evaluates the compiled expression against doc ($$ROOT and $$CURRENT) with vars.
func (x *Expr) Eval(doc bson.D, vars Vars) (any, error) {
	if x.n.konst {
		return x.n.val, nil
	}
	return x.n.fn(newCtx(doc, vars))
}

// Eval evaluates expression e against doc ($$ROOT and $$CURRENT) with vars. Field paths that
// do not exist evaluate to bsonkit.Missing.
func Eval(e any, doc bson.D, vars Vars) (any, error) {
	n, err := compile(e)
	if err != nil {
		return nil, err
	}
	if n.konst {
		return n.val, nil
	}
	return n.fn(newCtx(doc, vars))
}

// Truthy reports MongoDB's truthiness: false, null, Missing, undefined and numeric zero are
// false; everything else (including empty strings and arrays) is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case nil, bson.Null, bson.Undefined, bsonkit.MissingType:
		return false
	case int32:
		return x != 0
	case int64:
		return x != 0
	case int:
		return x != 0
	case float64:
		return x != 0
	case bson.Decimal128:
		return !isDecimalZero(x)
	}
	return true
}

func isDecimalZero(d bson.Decimal128) bool {
	h, l := d.GetBytes()
	// BID layout: sign (1 bit), exponent (14), coefficient (113 bits: 49 high + 64 low). Any
	// exponent with a zero coefficient is zero. Combination bits 11 mark infinities and NaNs.
	if (h>>61)&3 == 3 {
		return false
	}
	return l == 0 && h&((1<<49)-1) == 0
}

// node is a compiled expression: either a constant (konst, val) or a function of the context.
type node struct {
	fn    func(c *ctx) (any, error)
	konst bool
	val   any
}

func (n node) eval(c *ctx) (any, error) {
	if n.konst {
		return n.val, nil
	}
	return n.fn(c)
}

func constant(v any) node {
	return node{konst: true, val: v, fn: func(*ctx) (any, error) { return v, nil }}
}

func dynamic(fn func(c *ctx) (any, error)) node { return node{fn: fn} }

// ctx is the per-evaluation state: the document and the variables in scope.
type ctx struct {
	root    any
	current any
	vars    Vars
	scope   *scope
	top     *ctx // the evaluation's root context, which caches $$NOW so it is stable
	now     any
}

// scope is one variable bound by $let, $map, $filter or $reduce; scopes chain outward.
type scope struct {
	name string
	val  any
	next *scope
}

func newCtx(doc bson.D, vars Vars) *ctx {
	var root any = doc
	if doc == nil {
		root = bson.D{}
	}
	c := &ctx{root: root, current: root, vars: vars}
	c.top = c
	if v, ok := vars["ROOT"]; ok {
		c.root = v
		c.current = v
	}
	if v, ok := vars["CURRENT"]; ok {
		c.current = v
	}
	return c
}

// with returns a child context with name bound to val.
func (c *ctx) with(name string, val any) *ctx {
	n := *c
	n.scope = &scope{name: name, val: val, next: c.scope}
	return &n
}

func (c *ctx) lookup(name string) (any, error) {
	for s := c.scope; s != nil; s = s.next {
		if s.name == name {
			return s.val, nil
		}
	}
	switch name {
	case "ROOT":
		return c.root, nil
	case "CURRENT":
		return c.current, nil
	case "REMOVE":
		return bsonkit.Missing, nil
	}
	if v, ok := c.vars[name]; ok {
		return v, nil
	}
	switch name {
	case "NOW":
		if c.top.now == nil {
			c.top.now = bson.NewDateTimeFromTime(time.Now())
		}
		return c.top.now, nil
	case "CLUSTER_TIME":
		return nil, mongoerr.New(51144, "Builtin variable '$$CLUSTER_TIME' is not available")
	}
	return nil, mongoerr.New(17276, "Use of undefined variable: %s", name)
}

// compile turns an expression value into a node.
func compile(e any) (node, error) {
	switch x := e.(type) {
	case string:
		if strings.HasPrefix(x, "$") {
			return compilePath(x)
		}
	case bson.D:
		return compileObject(x)
	case bson.M:
		return compileObject(bsonkit.ToD(x))
	case bson.A:
		return compileArray(x)
	case []any:
		return compileArray(bson.A(x))
	}
	return constant(e), nil
}
