package query

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

// leaf is a predicate on the value(s) a dotted path resolves to. The value may be
// bsonkit.Missing when the path does not exist.
type leaf interface {
	matchValue(v any, c *matchCtx) bool
}

// wholeArrayLeaf marks leaves that look at an array field as a whole ($elemMatch, $size)
// instead of also being tried against each element of it.
type wholeArrayLeaf interface {
	wholeArray()
}

// pathNode applies a leaf predicate to the values at a dotted path, with MongoDB's implicit
// array traversal: a path through an array of documents resolves in each element, and an
// array at the end of the path matches if any element (or the array itself) does.
type pathNode struct {
	parts    []string
	pred     leaf
	traverse bool // expand an array found at the end of the path
	// Storage for the common cases, so compiling {field: value} allocates one node.
	one [1]string
	eq  cmpLeaf
}

func newPathNode(path string, pred leaf) *pathNode {
	_, whole := pred.(wholeArrayLeaf)
	p := &pathNode{pred: pred, traverse: !whole}
	p.setPath(path)
	return p
}

// newEqNode compiles {path: value}, the hot case.
func newEqNode(path string, v any) *pathNode {
	p := &pathNode{traverse: true}
	p.eq = cmpLeaf{op: opEQ, rhs: v}
	p.pred = &p.eq
	p.setPath(path)
	return p
}

func (p *pathNode) setPath(path string) {
	if strings.IndexByte(path, '.') < 0 {
		p.one[0] = path
		p.parts = p.one[:]
		return
	}
	p.parts = strings.Split(path, ".")
}

func splitPath(path string) []string {
	if strings.IndexByte(path, '.') < 0 {
		return []string{path}
	}
	return strings.Split(path, ".")
}

func (p *pathNode) match(doc bson.D, c *matchCtx) bool {
	return p.walkDoc(doc, 0, c, -1)
}

// walkDoc resolves parts[i:] inside doc; arrIdx is the offset in the outermost array
// traversed so far (-1 if none), which becomes the match position.
func (p *pathNode) walkDoc(doc bson.D, i int, c *matchCtx, arrIdx int) bool {
	key := p.parts[i]
	for k := range doc {
		if doc[k].Key == key {
			return p.walkValue(doc[k].Value, i+1, c, arrIdx)
		}
	}
	return p.leafMatch(bsonkit.Missing, c, arrIdx)
}

// walkValue continues with v, the value found at parts[:i].
func (p *pathNode) walkValue(v any, i int, c *matchCtx, arrIdx int) bool {
	if i == len(p.parts) {
		if arr, ok := v.(bson.A); ok && p.traverse {
			for j, e := range arr {
				if p.leafMatch(e, c, pick(arrIdx, j)) {
					return true
				}
				if c.err != nil {
					return false
				}
			}
		}
		return p.leafMatch(v, c, arrIdx)
	}
	switch x := v.(type) {
	case bson.D:
		return p.walkDoc(x, i, c, arrIdx)
	case bson.A:
		// A numeric component indexes the array; it is also a field name for any
		// documents in the array ({"a.0": ...} matches {a: [{"0": ...}]}).
		if idx, ok := bsonkit.ArrayIndex(p.parts[i]); ok && idx < len(x) {
			if p.walkValue(x[idx], i+1, c, arrIdx) {
				return true
			}
		}
		// Arrays nested directly in arrays are not traversed, as in mongod.
		for j, e := range x {
			if d, ok := e.(bson.D); ok {
				if p.walkDoc(d, i, c, pick(arrIdx, j)) {
					return true
				}
				if c.err != nil {
					return false
				}
			}
		}
		return false
	default:
		// A scalar where a document was expected: the path does not exist.
		return p.leafMatch(bsonkit.Missing, c, arrIdx)
	}
}

func (p *pathNode) leafMatch(v any, c *matchCtx, arrIdx int) bool {
	c.elemIdx = -1
	if !p.pred.matchValue(v, c) {
		return false
	}
	if arrIdx >= 0 {
		c.record(arrIdx)
	} else {
		c.record(c.elemIdx)
	}
	return true
}

func pick(outer, inner int) int {
	if outer >= 0 {
		return outer
	}
	return inner
}
