package query

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
)

// matchCtx is the per-Match state shared by all nodes: it carries $expr variables, the
// positional index found so far and the first evaluation error.
type matchCtx struct {
	vars expr.Vars
	sc   bsonkit.StringCompare // the collation's string order; nil = binary
	pos  int                   // array offset of the first array traversal that made a leaf match; -1 none
	err  error                 // first runtime error ($expr evaluation)
	// elemIdx is set by leaves that look inside an array themselves ($elemMatch) to the
	// index of the matching element, so the path walker can report it as the position.
	elemIdx int
}

func (c *matchCtx) record(idx int) {
	if c.pos < 0 && idx >= 0 {
		c.pos = idx
	}
}

// node is one compiled filter clause, matched against a document.
type node interface {
	match(doc bson.D, c *matchCtx) bool
}

type andNode []node

func (n andNode) match(doc bson.D, c *matchCtx) bool {
	for _, child := range n {
		if !child.match(doc, c) || c.err != nil {
			return false
		}
	}
	return true
}

type orNode []node

func (n orNode) match(doc bson.D, c *matchCtx) bool {
	for _, child := range n {
		saved := c.pos
		if child.match(doc, c) {
			return true
		}
		if c.err != nil {
			return false
		}
		c.pos = saved // a failed branch must not leave its position behind
	}
	return false
}

// notNode negates its child; positions found under a negation never count.
type notNode struct{ child node }

func (n notNode) match(doc bson.D, c *matchCtx) bool {
	saved := c.pos
	ok := n.child.match(doc, c)
	c.pos = saved
	return !ok && c.err == nil
}

type norNode []node

func (n norNode) match(doc bson.D, c *matchCtx) bool {
	saved := c.pos
	defer func() { c.pos = saved }()
	for _, child := range n {
		if child.match(doc, c) || c.err != nil {
			return false
		}
	}
	return true
}

type constNode bool

func (n constNode) match(bson.D, *matchCtx) bool { return bool(n) }

// exprNode evaluates an aggregation expression ($expr) for its truthiness.
type exprNode struct{ e *expr.Expr }

func (n exprNode) match(doc bson.D, c *matchCtx) bool {
	v, err := n.e.Eval(doc, c.vars)
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return false
	}
	return expr.Truthy(v)
}
