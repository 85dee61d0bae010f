package update

import (
	"sort"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// maxPadding bounds how far setting an index past an array's end may pad it with nulls.
const maxPadding = 1500000

// applyCtx carries one Apply call's state. path is the stack of field names from the root to
// the value being updated (used only to build messages).
type applyCtx struct {
	u        *Update
	doc      bson.D // the original document (for _id in messages, $rename sources)
	matchPos int
	insert   bool
	path     []string
	pathBuf  [8]string
	renamed  map[*renameOp]any // rename sources found in doc
}

// tombstone marks a removed field while a document copy is being built.
type tombstone struct{}

func (u *Update) applyOperators(doc bson.D, matchPos int, insert bool) (bson.D, bool, error) {
	c := &applyCtx{u: u, doc: doc, matchPos: matchPos, insert: insert}
	c.path = c.pathBuf[:0]
	if len(u.renames) > 0 {
		if err := c.prepareRenames(); err != nil {
			return nil, false, err
		}
	}
	nv, changed, err := c.applyObject(u.root, "", doc, true)
	if err != nil {
		return nil, false, err
	}
	if !changed {
		return doc, false, nil
	}
	out, _ := nv.(bson.D)
	if out == nil {
		out = bson.D{}
	}
	return out, true, nil
}

func (c *applyCtx) pathString() string { return strings.Join(c.path, ".") }

// applyNode applies n to cur (bsonkit.Missing when absent), the value of field name. It
// returns the new value (Missing to remove it) and whether anything changed.
func (c *applyCtx) applyNode(n *node, name string, cur any) (any, bool, error) {
	switch {
	case n.leaf != nil:
		return n.leaf.apply(c, name, cur)
	case n.array:
		return c.applyArrayNode(n, name, cur)
	}
	return c.applyObject(n, name, cur, false)
}

// children returns n's children in application order, with the positional child resolved to
// the matched index (and merged with a same-named child, as mongod does).
func (c *applyCtx) children(n *node) ([]child, error) {
	if n.positional == nil {
		return n.fields, nil
	}
	if c.matchPos < 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "The positional operator did not find the match needed from the query.")
	}
	name := strconv.Itoa(c.matchPos)
	out := make([]child, 0, len(n.fields)+1)
	placed := false
	for _, ch := range n.fields {
		if !placed && ch.name == name {
			merged, err := mergeNodes(ch.n, n.positional, c.pathString()+"."+name)
			if err != nil {
				return nil, err
			}
			out = append(out, child{name, merged})
			placed = true
			continue
		}
		if !placed && fieldLess(name, ch.name) {
			out = append(out, child{name, n.positional})
			placed = true
		}
		out = append(out, ch)
	}
	if !placed {
		out = append(out, child{name, n.positional})
	}
	return out, nil
}

func (c *applyCtx) applyObject(n *node, name string, cur any, root bool) (any, bool, error) {
	kids, err := c.children(n)
	if err != nil {
		return nil, false, err
	}
	switch x := cur.(type) {
	case bson.D:
		return c.applyToDoc(kids, x, root)
	case bson.A:
		return c.applyToArray(kids, name, x)
	case bsonkit.MissingType:
		var out bson.D
		for _, k := range kids {
			c.path = append(c.path, k.name)
			nv, changed, err := c.applyNode(k.n, k.name, bsonkit.Missing)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, false, err
			}
			if changed && !bsonkit.IsMissing(nv) {
				out = append(out, bson.E{Key: k.name, Value: nv})
			}
		}
		if out == nil {
			return bsonkit.Missing, false, nil
		}
		return out, true, nil
	}
	return c.applyToScalar(kids, name, cur)
}

// applyToScalar handles children below a value that cannot hold fields: updates that would
// create something fail with PathNotViable; the others ($unset, $pull, ...) are no-ops.
func (c *applyCtx) applyToScalar(kids []child, name string, cur any) (any, bool, error) {
	for _, k := range kids {
		c.path = append(c.path, k.name)
		nv, changed, err := c.applyNode(k.n, k.name, bsonkit.Missing)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, false, err
		}
		if changed && !bsonkit.IsMissing(nv) {
			return nil, false, mongoerr.New(mongoerr.PathNotViable,
				"Cannot create field '%s' in element {%s}", k.name, formatElem(name, cur))
		}
	}
	return cur, false, nil
}

func (c *applyCtx) applyToDoc(kids []child, doc bson.D, root bool) (any, bool, error) {
	var out bson.D
	removed := false
	for _, k := range kids {
		idx := -1
		var cur any = bsonkit.Missing
		for i := range doc {
			if doc[i].Key == k.name {
				idx, cur = i, doc[i].Value
				break
			}
		}
		c.path = append(c.path, k.name)
		nv, changed, err := c.applyNode(k.n, k.name, cur)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, false, err
		}
		if !changed {
			continue
		}
		if root {
			if err := c.checkTopLevel(k, cur, nv); err != nil {
				return nil, false, err
			}
		}
		if out == nil {
			out = make(bson.D, len(doc), len(doc)+len(kids))
			copy(out, doc)
		}
		switch {
		case idx >= 0 && bsonkit.IsMissing(nv):
			out[idx].Value = tombstone{}
			removed = true
		case idx >= 0:
			out[idx].Value = nv
		case !bsonkit.IsMissing(nv):
			out = append(out, bson.E{Key: k.name, Value: nv})
		}
	}
	if out == nil {
		return doc, false, nil
	}
	if removed {
		kept := out[:0]
		for _, e := range out {
			if _, dead := e.Value.(tombstone); !dead {
				kept = append(kept, e)
			}
		}
		out = kept
	}
	return out, true, nil
}

// checkTopLevel enforces what mongod validates on changed top-level fields: _id is immutable
// once present and must be storable, and top-level names may not start with '$'.
func (c *applyCtx) checkTopLevel(k child, old, nv any) error {
	if k.name == "_id" {
		if !bsonkit.IsMissing(old) {
			return mongoerr.New(mongoerr.ImmutableField,
				"Performing an update on the path '%s' would modify the immutable field '_id'", k.n.path)
		}
		return checkIDValue(nv)
	}
	if strings.HasPrefix(k.name, "$") && !bsonkit.IsMissing(nv) {
		return mongoerr.New(mongoerr.DollarPrefixedFieldName,
			"The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.",
			k.name, k.name)
	}
	return nil
}

func checkIDValue(v any) error {
	switch v.(type) {
	case bson.A, bson.Regex, bson.Undefined:
		return mongoerr.New(mongoerr.InvalidIdField, "The '_id' value cannot be of type %s", bsonkit.TypeName(v))
	}
	return nil
}

// applyToArray applies named children to array elements by index; non-numeric names cannot be
// created inside an array.
func (c *applyCtx) applyToArray(kids []child, name string, arr bson.A) (any, bool, error) {
	var out bson.A
	for _, k := range kids {
		i, ok := parseIndex(k.name)
		if !ok {
			c.path = append(c.path, k.name)
			nv, changed, err := c.applyNode(k.n, k.name, bsonkit.Missing)
			c.path = c.path[:len(c.path)-1]
			if err != nil {
				return nil, false, err
			}
			if changed && !bsonkit.IsMissing(nv) {
				return nil, false, mongoerr.New(mongoerr.PathNotViable,
					"Cannot create field '%s' in element {%s}", k.name, formatElem(name, arr))
			}
			continue
		}
		src := arr
		if out != nil {
			src = out
		}
		var cur any = bsonkit.Missing
		if i < len(src) {
			cur = src[i]
		}
		c.path = append(c.path, k.name)
		nv, changed, err := c.applyNode(k.n, k.name, cur)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, false, err
		}
		if !changed {
			continue
		}
		if bsonkit.IsMissing(nv) {
			if i >= len(src) {
				continue
			}
			nv = nil // $unset of an array element leaves null in its place
		}
		if out == nil {
			out = make(bson.A, len(arr), max(len(arr), i+1))
			copy(out, arr)
		}
		if i >= len(out) {
			if i-len(out) > maxPadding {
				return nil, false, mongoerr.New(mongoerr.BadValue,
					"can't backfill more than %d elements", maxPadding)
			}
			for len(out) < i {
				out = append(out, nil)
			}
			out = append(out, nv)
		} else {
			out[i] = nv
		}
	}
	if out == nil {
		return arr, false, nil
	}
	return out, true, nil
}

// parseIndex parses an array index path component (decimal digits).
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// applyArrayNode applies `$[]` and `$[<id>]` children to every array element they select.
func (c *applyCtx) applyArrayNode(n *node, name string, cur any) (any, bool, error) {
	arr, ok := cur.(bson.A)
	if !ok {
		if bsonkit.IsMissing(cur) {
			return nil, false, mongoerr.New(mongoerr.BadValue,
				"The path '%s' must exist in the document in order to apply array updates.", c.pathString())
		}
		return nil, false, mongoerr.New(mongoerr.BadValue,
			"Cannot apply array updates to non-array element %s", formatElem(name, cur))
	}
	var out bson.A
	for i, e := range arr {
		var sel *node
		for _, k := range n.elems {
			if k.name != "" {
				ok, err := c.u.filter(k.name).match(e)
				if err != nil {
					return nil, false, err
				}
				if !ok {
					continue
				}
			}
			if sel == nil {
				sel = k.n
				continue
			}
			merged, err := mergeNodes(sel, k.n, c.pathString()+"."+strconv.Itoa(i))
			if err != nil {
				return nil, false, err
			}
			sel = merged
		}
		if sel == nil {
			continue
		}
		idx := strconv.Itoa(i)
		c.path = append(c.path, idx)
		nv, changed, err := c.applyNode(sel, idx, e)
		c.path = c.path[:len(c.path)-1]
		if err != nil {
			return nil, false, err
		}
		if !changed {
			continue
		}
		if bsonkit.IsMissing(nv) {
			nv = nil
		}
		if out == nil {
			out = make(bson.A, len(arr))
			copy(out, arr)
		}
		out[i] = nv
	}
	if out == nil {
		return arr, false, nil
	}
	return out, true, nil
}

// mergeNodes combines two subtrees that apply to the same element at run time (positional `$`
// matching a numeric field, or several array filters selecting one element). Two modifiers on
// one path conflict.
func mergeNodes(a, b *node, path string) (*node, error) {
	switch {
	case a == nil:
		return b, nil
	case b == nil:
		return a, nil
	case a.isLeaf() || b.isLeaf() || a.array != b.array:
		return nil, mongoerr.New(mongoerr.ConflictingUpdateOperators, "Update created a conflict at '%s'", path)
	}
	m := &node{array: a.array, path: a.path}
	var err error
	if m.positional, err = mergeNodes(a.positional, b.positional, path+".$"); err != nil {
		return nil, err
	}
	m.fields, err = mergeChildren(a.fields, b.fields, path)
	if err != nil {
		return nil, err
	}
	m.elems, err = mergeChildren(a.elems, b.elems, path)
	if err != nil {
		return nil, err
	}
	if !m.array {
		sort.Slice(m.fields, func(i, j int) bool { return fieldLess(m.fields[i].name, m.fields[j].name) })
	}
	return m, nil
}

func mergeChildren(a, b []child, path string) ([]child, error) {
	out := append([]child(nil), a...)
	for _, cb := range b {
		found := false
		for i := range out {
			if out[i].name == cb.name {
				merged, err := mergeNodes(out[i].n, cb.n, path+"."+cb.name)
				if err != nil {
					return nil, err
				}
				out[i].n = merged
				found = true
				break
			}
		}
		if !found {
			out = append(out, cb)
		}
	}
	return out, nil
}
