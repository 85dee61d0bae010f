package query

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Projection is a compiled find projection. It is immutable and safe for concurrent use.
type Projection struct {
	root      *projNode
	inclusion bool // else exclusion mode: everything not excluded is kept
	vars      expr.Vars
	sc        bsonkit.StringCompare // collation for $elemMatch projections
	empty     bool
}

type projKind int

const (
	projInternal projKind = iota // has children
	projInclude
	projExclude
	projComputed
	projSlice
	projElemMatch
	projPositional
)

// projNode is one step of the projection tree; leaves say what happens to the field.
type projNode struct {
	kind     projKind
	children map[string]*projNode
	order    []string // children in spec order (computed fields are appended in it)
	computed *expr.Expr
	skip     int64 // $slice: elements to skip (negative: from the end)
	limit    int64 // $slice: elements to keep; -1 means all after skip
	elem     leaf  // $elemMatch
	hasCalc  bool  // the subtree holds computed fields
}

// CompileProjection parses a find/findAndModify projection.
func CompileProjection(spec bson.D, opts Options) (*Projection, error) {
	p := &Projection{root: &projNode{}, vars: opts.Vars, sc: opts.Collation.StringCompare()}
	if len(spec) == 0 {
		p.empty = true
		return p, nil
	}
	type item struct {
		path string
		node *projNode
	}
	var items []item
	var flatten func(prefix string, d bson.D) error
	flatten = func(prefix string, d bson.D) error {
		for _, e := range d {
			path := prefix + e.Key
			if err := checkProjPath(path); err != nil {
				return err
			}
			if sub, ok := e.Value.(bson.D); ok && len(sub) > 0 && !strings.HasPrefix(sub[0].Key, "$") {
				if err := flatten(path+".", sub); err != nil { // {a: {b: 1}} is {"a.b": 1}
					return err
				}
				continue
			}
			n, err := parseProjValue(path, e.Value)
			if err != nil {
				return err
			}
			items = append(items, item{path, n})
		}
		return nil
	}
	if err := flatten("", spec); err != nil {
		return nil, err
	}

	// The mode comes from the first field (other than _id) that includes or excludes.
	mode, idMode := projKind(-1), projKind(-1)
	for _, it := range items {
		k := it.node.kind
		if k == projSlice {
			continue
		}
		if k != projExclude {
			k = projInclude
		}
		if it.path == "_id" {
			idMode = k
			continue
		}
		if mode < 0 {
			mode = k
			continue
		}
		if k != mode {
			if mode == projExclude {
				return nil, mongoerr.New(31253, "Cannot do inclusion on field %s in exclusion projection", it.path)
			}
			return nil, mongoerr.New(31254, "Cannot do exclusion on field %s in inclusion projection", it.path)
		}
	}
	hasSlice := false
	for _, it := range items {
		hasSlice = hasSlice || it.node.kind == projSlice
	}
	p.inclusion = mode == projInclude || (mode < 0 && idMode == projInclude && !hasSlice)

	positional := false
	for _, it := range items {
		path := it.path
		if strings.HasSuffix(path, ".$") {
			if positional {
				return nil, badValue("Cannot specify more than one positional projection per query.")
			}
			positional = true
			path = strings.TrimSuffix(path, ".$")
		}
		if path == "_id" && it.node.kind == projInclude {
			continue // _id is handled below
		}
		if it.node.kind == projExclude && p.inclusion && path != "_id" {
			return nil, mongoerr.New(31254, "Cannot do exclusion on field %s in inclusion projection", path)
		}
		if err := p.root.insert(path, it.node); err != nil {
			return nil, err
		}
	}
	if p.inclusion {
		if _, excluded := p.root.children["_id"]; !excluded {
			// _id is included unless explicitly excluded.
			if err := p.root.insert("_id", &projNode{kind: projInclude}); err != nil {
				return nil, err
			}
		} else if p.root.children["_id"].kind == projExclude {
			p.root.remove("_id")
		}
	}
	return p, nil
}

func checkProjPath(path string) error {
	for i, part := range strings.Split(path, ".") {
		if part == "" {
			return badValue("FieldPath field names may not be empty strings.")
		}
		if strings.HasPrefix(part, "$") && !(part == "$" && i > 0 && strings.HasSuffix(path, ".$")) {
			return mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return nil
}

// parseProjValue compiles the value of one projection field.
func parseProjValue(path string, v any) (*projNode, error) {
	if strings.HasSuffix(path, ".$") {
		if !truthy(v) || !isIncludeFlag(v) {
			return nil, badValue("positional projection '%s' must be an inclusion", path)
		}
		return &projNode{kind: projPositional}, nil
	}
	if isIncludeFlag(v) {
		if truthy(v) {
			return &projNode{kind: projInclude}, nil
		}
		return &projNode{kind: projExclude}, nil
	}
	if d, ok := v.(bson.D); ok && len(d) == 0 {
		return nil, mongoerr.New(51270, "An empty sub-projection is not a valid value. Found empty object at path %s", path)
	}
	if d, ok := v.(bson.D); ok && len(d) == 1 {
		switch d[0].Key {
		case "$slice":
			return parseSliceSpec(d[0].Value)
		case "$elemMatch":
			if strings.Contains(path, ".") {
				return nil, badValue("Cannot use $elemMatch projection on a nested field.")
			}
			fp, err := parseElemMatch(d[0].Value)
			if err != nil {
				return nil, err
			}
			return &projNode{kind: projElemMatch, elem: fp.leaf()}, nil
		case "$meta":
			return nil, badValue("$meta projection is not supported by this server")
		}
	}
	x, err := expr.Compile(v)
	if err != nil {
		return nil, err
	}
	return &projNode{kind: projComputed, computed: x}, nil
}

func isIncludeFlag(v any) bool {
	_, isBool := v.(bool)
	return isBool || bsonkit.IsNumber(v)
}

func parseSliceSpec(v any) (*projNode, error) {
	if arr, ok := v.(bson.A); ok {
		if len(arr) != 2 {
			return nil, badValue("$slice array wrong size")
		}
		skip, ok1 := bsonkit.ToInt64Exact(arr[0])
		limit, ok2 := bsonkit.ToInt64Exact(arr[1])
		if !ok1 || !ok2 {
			return nil, badValue("$slice array args must be numbers")
		}
		if limit <= 0 {
			return nil, badValue("$slice limit must be positive")
		}
		return &projNode{kind: projSlice, skip: skip, limit: limit}, nil
	}
	if !bsonkit.IsNumber(v) {
		return nil, badValue("$slice only supports numbers and [skip, limit] arrays")
	}
	n, ok := truncToInt64(v)
	if !ok {
		return nil, badValue("$slice only supports numbers and [skip, limit] arrays")
	}
	if n >= 0 {
		return &projNode{kind: projSlice, skip: 0, limit: n}, nil
	}
	return &projNode{kind: projSlice, skip: n, limit: -1}, nil
}

func (n *projNode) remove(key string) {
	delete(n.children, key)
	for i, k := range n.order {
		if k == key {
			n.order = append(n.order[:i:i], n.order[i+1:]...)
			return
		}
	}
}

// insert places leaf at path, rejecting paths that overlap another projected path.
func (n *projNode) insert(path string, leafNode *projNode) error {
	parts := strings.Split(path, ".")
	cur := n
	for i, part := range parts {
		if cur.kind != projInternal {
			return mongoerr.New(31250, "Path collision at %s remaining portion %s", path, strings.Join(parts[i:], "."))
		}
		if leafNode.kind == projComputed {
			cur.hasCalc = true
		}
		if cur.children == nil {
			cur.children = map[string]*projNode{}
		}
		child, exists := cur.children[part]
		if i == len(parts)-1 {
			if exists {
				return mongoerr.New(31250, "Path collision at %s", path)
			}
			cur.children[part] = leafNode
			cur.order = append(cur.order, part)
			return nil
		}
		if !exists {
			child = &projNode{}
			cur.children[part] = child
			cur.order = append(cur.order, part)
		}
		cur = child
	}
	return nil
}

// Apply projects doc; matchPos is the positional index from MatchPositional (for `field.$`).
// The result is a new document but may share embedded values with doc.
func (p *Projection) Apply(doc bson.D, matchPos int) (bson.D, error) {
	if p.empty {
		return doc, nil
	}
	a := projApply{root: doc, vars: p.vars, sc: p.sc, matchPos: matchPos}
	if p.inclusion {
		return a.include(p.root, doc)
	}
	return a.exclude(p.root, doc)
}

type projApply struct {
	root     bson.D
	vars     expr.Vars
	sc       bsonkit.StringCompare
	matchPos int
}

func (a *projApply) include(n *projNode, d bson.D) (bson.D, error) {
	out := make(bson.D, 0, len(n.children))
	for _, e := range d {
		child := n.children[e.Key]
		if child == nil || child.kind == projComputed {
			continue
		}
		v, keep, err := a.includeValue(child, e.Value)
		if err != nil {
			return nil, err
		}
		if keep {
			out = append(out, bson.E{Key: e.Key, Value: v})
		}
	}
	if !n.hasCalc {
		return out, nil
	}
	for _, key := range n.order {
		child := n.children[key]
		switch {
		case child.kind == projComputed:
			v, err := child.computed.Eval(a.root, a.vars)
			if err != nil {
				return nil, err
			}
			if !bsonkit.IsMissing(v) {
				out = bsonkit.Set(out, key, v)
			}
		case child.kind == projInternal && child.hasCalc:
			// Computed fields below a path the document lacks (or holds a scalar at)
			// create the embedded document.
			if cur, ok := bsonkit.Get(out, key); ok {
				switch cur.(type) {
				case bson.D, bson.A:
					continue
				}
			}
			sub, err := a.include(child, nil)
			if err != nil {
				return nil, err
			}
			out = bsonkit.Set(out, key, sub)
		}
	}
	return out, nil
}

// includeValue applies an inclusion-mode node to a field value; keep=false drops the field.
func (a *projApply) includeValue(n *projNode, v any) (any, bool, error) {
	switch n.kind {
	case projInclude:
		return v, true, nil
	case projSlice:
		return sliceValue(n, v), true, nil
	case projElemMatch:
		arr, ok := v.(bson.A)
		if !ok {
			return nil, false, nil
		}
		c := matchCtx{vars: a.vars, sc: a.sc, pos: -1, elemIdx: -1}
		if !n.elem.matchValue(arr, &c) {
			return nil, false, c.err
		}
		return bson.A{arr[c.elemIdx]}, true, nil
	case projPositional:
		arr, ok := v.(bson.A)
		if !ok {
			return v, true, nil
		}
		if a.matchPos < 0 || a.matchPos >= len(arr) {
			return nil, false, mongoerr.New(51246, "positional operator '.$' couldn't find a matching element in the array")
		}
		return bson.A{arr[a.matchPos]}, true, nil
	case projInternal:
		switch x := v.(type) {
		case bson.D:
			sub, err := a.include(n, x)
			return sub, err == nil, err
		case bson.A:
			out := make(bson.A, 0, len(x))
			for _, e := range x {
				switch e.(type) {
				case bson.D, bson.A:
					pe, keep, err := a.includeValue(n, e)
					if err != nil {
						return nil, false, err
					}
					if keep {
						out = append(out, pe)
					}
				}
			}
			return out, true, nil
		}
		if n.hasCalc {
			sub, err := a.include(n, nil)
			return sub, err == nil, err
		}
	}
	return nil, false, nil
}

func (a *projApply) exclude(n *projNode, d bson.D) (bson.D, error) {
	out := make(bson.D, 0, len(d))
	for _, e := range d {
		child := n.children[e.Key]
		if child == nil {
			out = append(out, e)
			continue
		}
		switch child.kind {
		case projExclude:
			continue
		case projSlice:
			out = append(out, bson.E{Key: e.Key, Value: sliceValue(child, e.Value)})
		case projInternal:
			out = append(out, bson.E{Key: e.Key, Value: a.excludeValue(child, e.Value)})
		default:
			out = append(out, e)
		}
	}
	return out, nil
}

func (a *projApply) excludeValue(n *projNode, v any) any {
	switch x := v.(type) {
	case bson.D:
		sub, _ := a.exclude(n, x)
		return sub
	case bson.A:
		out := make(bson.A, len(x))
		for i, e := range x {
			out[i] = a.excludeValue(n, e)
		}
		return out
	}
	return v
}

// sliceValue applies $slice; non-arrays are returned unchanged.
func sliceValue(n *projNode, v any) any {
	arr, ok := v.(bson.A)
	if !ok {
		return v
	}
	l := int64(len(arr))
	start := n.skip
	if start < 0 {
		start = max(0, l+start)
	}
	start = min(start, l)
	end := l
	if n.limit >= 0 {
		end = min(l, start+n.limit)
	}
	return append(bson.A{}, arr[start:end]...)
}
