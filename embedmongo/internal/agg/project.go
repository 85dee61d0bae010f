package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// projMode is the kind of a compiled projection tree.
type projMode int

const (
	modeUnset     projMode = iota
	modeInclusion          // $project with included and/or computed fields
	modeExclusion          // $project with excluded fields, $unset
	modeAddFields          // $addFields/$set: computed fields over the whole document
)

// projNode is one level of a projection: its fields in specification order.
type projNode struct {
	order    []string
	kids     map[string]*projKid
	computed bool // whether this subtree holds computed fields
}

type projKid struct {
	include bool
	exclude bool
	ex      *expr.Expr // computed field
	sub     *projNode
}

func newProjNode() *projNode { return &projNode{kids: map[string]*projKid{}} }

// projection is a compiled $project, $addFields/$set or $unset.
type projection struct {
	mode projMode
	root *projNode
}

func (p *projection) errf(code int32, format string, args ...any) error {
	return mongoerr.New(code, format, args...)
}

// wrapErr prefixes a parse error as mongod does for projection-style stages.
func wrapErr(stageName string, err error) error {
	if e := mongoerr.As(err); e != nil {
		return mongoerr.New(e.Code, "Invalid %s :: caused by :: %s", stageName, e.Msg)
	}
	return err
}

// insert adds a leaf at path, reporting mongod's path-collision errors.
func (p *projection) insert(path []string, leaf *projKid) error {
	n := p.root
	for i, part := range path {
		kid, ok := n.kids[part]
		if i == len(path)-1 {
			if ok {
				return p.errf(31250, "Path collision at %s", strings.Join(path, "."))
			}
			n.kids[part] = leaf
			n.order = append(n.order, part)
			return nil
		}
		if !ok {
			kid = &projKid{sub: newProjNode()}
			n.kids[part] = kid
			n.order = append(n.order, part)
		} else if kid.sub == nil {
			return p.errf(31249, "Path collision at %s remaining portion %s",
				strings.Join(path, "."), strings.Join(path[i+1:], "."))
		}
		n = kid.sub
	}
	return nil
}

// isExpressionObject reports whether an object in a projection is an expression ({$op: ...})
// rather than a nested specification.
func isExpressionObject(d bson.D) bool { return len(d) > 0 && strings.HasPrefix(d[0].Key, "$") }

// parseSpec walks spec (recursively for nested objects) and fills the tree; a top-level _id
// flag goes to idFlag (-1 unset, 0 excluded, 1 included) since it does not decide the mode.
func (p *projection) parseSpec(spec bson.D, prefix []string, idFlag *int) error {
	for _, e := range spec {
		if strings.HasSuffix(e.Key, ".$") {
			return p.errf(31324, "Cannot use positional projection in aggregation projection")
		}
		if strings.Contains(e.Key, ".$.") {
			return p.errf(31394, "As of 4.4, it's illegal to specify positional operator in the middle of a path.Positional projection may only be used at the end, for example: a.b.$. If the query previously used a form like a.b.$.d, remove the parts following the '$' and the results will be equivalent.")
		}
		parts, err := parseFieldPath(e.Key)
		if err != nil {
			return err
		}
		path := append(append([]string(nil), prefix...), parts...)
		full := strings.Join(path, ".")
		if d, ok := e.Value.(bson.D); ok && isExpressionObject(d) && len(d) > 1 {
			// {$op: ..., other: ...} is neither an expression nor a sub-projection.
			return mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
		if d, ok := e.Value.(bson.D); ok && !isExpressionObject(d) {
			if len(d) == 0 {
				if p.mode == modeAddFields {
					if err := p.addComputed(path, bson.D{}); err != nil {
						return err
					}
					continue
				}
				return p.errf(51270, "An empty sub-projection is not a valid value. Found empty object at path")
			}
			if err := p.parseSpec(d, path, idFlag); err != nil {
				return err
			}
			continue
		}
		if p.mode != modeAddFields {
			if flag, ok := projectionFlag(e.Value); ok {
				if full == "_id" {
					*idFlag = 0
					if flag {
						*idFlag = 1
					}
					continue
				}
				if flag {
					if p.mode == modeExclusion {
						return p.errf(31253, "Cannot do inclusion on field %s in exclusion projection", full)
					}
					p.mode = modeInclusion
					if err := p.insert(path, &projKid{include: true}); err != nil {
						return err
					}
				} else {
					if p.mode == modeInclusion {
						return p.errf(31254, "Cannot do exclusion on field %s in inclusion projection", full)
					}
					p.mode = modeExclusion
					if err := p.insert(path, &projKid{exclude: true}); err != nil {
						return err
					}
				}
				continue
			}
			if p.mode == modeExclusion {
				return p.errf(31252, "Cannot use expression other than $meta in exclusion projection")
			}
			p.mode = modeInclusion
		}
		if err := p.addComputed(path, e.Value); err != nil {
			return err
		}
	}
	return nil
}

func (p *projection) addComputed(path []string, e any) error {
	ex, err := expr.Compile(e)
	if err != nil {
		return err
	}
	if err := p.insert(path, &projKid{ex: ex}); err != nil {
		return err
	}
	n := p.root
	for _, part := range path {
		n.computed = true
		if k := n.kids[part]; k.sub != nil {
			n = k.sub
		}
	}
	return nil
}

// projectionFlag interprets a $project value as inclusion (true) or exclusion (false): booleans
// and numbers (zero excludes); other values are expressions.
func projectionFlag(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case int32, int64, float64, bson.Decimal128:
		return expr.Truthy(x), true
	}
	return false, false
}

func parseProject(r *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(15969, "$project specification must be an object")
	}
	p, err := compileProject(d)
	if err != nil {
		return nil, err
	}
	return p.stage(r), nil
}

// compileProject compiles a $project specification.
func compileProject(spec bson.D) (*projection, error) {
	p := &projection{root: newProjNode()}
	if len(spec) == 0 {
		return nil, wrapErr("$project", p.errf(51272, "projection specification must have at least one field"))
	}
	idFlag := -1
	if err := p.parseSpec(spec, nil, &idFlag); err != nil {
		return nil, wrapErr("$project", err)
	}
	if p.mode == modeUnset { // only _id was given
		p.mode = modeExclusion
		if idFlag == 1 {
			p.mode = modeInclusion
		}
	}
	_, idGiven := p.root.kids["_id"]
	switch {
	case p.mode == modeInclusion && idFlag != 0 && !idGiven:
		// _id is included unless excluded explicitly; it keeps its input position.
		p.root.kids["_id"] = &projKid{include: true}
		p.root.order = append([]string{"_id"}, p.root.order...)
	case p.mode == modeExclusion && idFlag == 0:
		if idGiven {
			return nil, wrapErr("$project", p.errf(31250, "Path collision at _id"))
		}
		p.root.kids["_id"] = &projKid{exclude: true}
		p.root.order = append(p.root.order, "_id")
	}
	return p, nil
}

func parseAddFields(name string) func(*runner, any, pipeCtx) (stage, error) {
	return func(r *runner, spec any, _ pipeCtx) (stage, error) {
		d, ok := spec.(bson.D)
		if !ok {
			return nil, mongoerr.New(40272, "%s specification stage must be an object, got %s",
				name, bsonkit.TypeName(spec))
		}
		p := &projection{mode: modeAddFields, root: newProjNode()}
		if len(d) == 0 {
			return nil, wrapErr(name, p.errf(40177, "specification must have at least one field"))
		}
		if err := p.parseSpec(d, nil, new(int)); err != nil {
			return nil, wrapErr(name, err)
		}
		return p.stage(r), nil
	}
}

func parseUnset(r *runner, spec any, _ pipeCtx) (stage, error) {
	var fields []string
	switch x := spec.(type) {
	case string:
		fields = []string{x}
	case bson.A:
		if len(x) == 0 {
			return nil, mongoerr.New(31119, "$unset specification must be a string or an array with at least one field")
		}
		for _, f := range x {
			s, ok := f.(string)
			if !ok {
				return nil, mongoerr.New(31120, "$unset specification must be a string or an array containing only string values")
			}
			fields = append(fields, s)
		}
	default:
		return nil, mongoerr.New(31002, "$unset specification must be a string or an array")
	}
	p := &projection{mode: modeExclusion, root: newProjNode()}
	for _, f := range fields {
		parts, err := parseFieldPath(f)
		if err != nil {
			return nil, wrapErr("$unset", err)
		}
		if err := p.insert(parts, &projKid{exclude: true}); err != nil {
			return nil, wrapErr("$unset", err)
		}
	}
	return p.stage(r), nil
}

// stage wraps the projection as a pipeline stage evaluating with the runner's variables.
func (p *projection) stage(r *runner) stage {
	return func(in []bson.D) ([]bson.D, error) {
		out := make([]bson.D, len(in))
		for i, d := range in {
			pd, err := p.apply(d, r.opts.Vars)
			if err != nil {
				return nil, err
			}
			out[i] = pd
		}
		return out, nil
	}
}

// apply projects one document.
func (p *projection) apply(doc bson.D, vars expr.Vars) (bson.D, error) {
	switch p.mode {
	case modeExclusion:
		return excludeDoc(p.root, doc), nil
	case modeInclusion:
		return computeDoc(p.root, includeDoc(p.root, doc), doc, vars)
	default:
		return computeDoc(p.root, doc, doc, vars)
	}
}

func includeDoc(n *projNode, d bson.D) bson.D {
	out := bson.D{}
	for _, e := range d {
		kid := n.kids[e.Key]
		switch {
		case kid == nil || kid.ex != nil:
		case kid.include:
			out = append(out, e)
		case kid.sub != nil:
			if v := includeValue(kid.sub, e.Value); !bsonkit.IsMissing(v) {
				out = append(out, bson.E{Key: e.Key, Value: v})
			}
		}
	}
	return out
}

// includeValue applies a nested inclusion: documents are projected, arrays element-wise
// (dropping scalars), and scalars vanish.
func includeValue(n *projNode, v any) any {
	switch x := v.(type) {
	case bson.D:
		return includeDoc(n, x)
	case bson.A:
		out := bson.A{}
		for _, el := range x {
			if pv := includeValue(n, el); !bsonkit.IsMissing(pv) {
				out = append(out, pv)
			}
		}
		return out
	}
	return bsonkit.Missing
}

func excludeDoc(n *projNode, d bson.D) bson.D {
	out := make(bson.D, 0, len(d))
	for _, e := range d {
		kid := n.kids[e.Key]
		switch {
		case kid == nil || kid.include:
			out = append(out, e)
		case kid.exclude:
		case kid.sub != nil:
			out = append(out, bson.E{Key: e.Key, Value: excludeValue(kid.sub, e.Value)})
		}
	}
	return out
}

// excludeValue applies a nested exclusion; non-document values are kept as they are.
func excludeValue(n *projNode, v any) any {
	switch x := v.(type) {
	case bson.D:
		return excludeDoc(n, x)
	case bson.A:
		out := make(bson.A, len(x))
		for i, el := range x {
			out[i] = excludeValue(n, el)
		}
		return out
	}
	return v
}

// computeDoc adds n's computed fields (evaluated against root) to d: existing fields are
// replaced in place, new ones appended, and a Missing result removes the field.
func computeDoc(n *projNode, d bson.D, root bson.D, vars expr.Vars) (bson.D, error) {
	if !n.computed {
		return d, nil
	}
	out := make(bson.D, len(d), len(d)+len(n.order))
	copy(out, d)
	for _, name := range n.order {
		kid := n.kids[name]
		switch {
		case kid.ex != nil:
			v, err := kid.ex.Eval(root, vars)
			if err != nil {
				return nil, err
			}
			if bsonkit.IsMissing(v) {
				out = bsonkit.Remove(out, name)
			} else {
				out = bsonkit.Set(out, name, v)
			}
		case kid.sub != nil && kid.sub.computed:
			cur, ok := bsonkit.Get(out, name)
			if !ok {
				cur = bsonkit.Missing
			}
			v, err := computeValue(kid.sub, cur, root, vars)
			if err != nil {
				return nil, err
			}
			out = bsonkit.Set(out, name, v)
		}
	}
	return out, nil
}

// computeValue adds computed fields below a path: into a document, into each element of an
// array, and otherwise into a new document that replaces the value.
func computeValue(n *projNode, v any, root bson.D, vars expr.Vars) (any, error) {
	switch x := v.(type) {
	case bson.D:
		return computeDoc(n, x, root, vars)
	case bson.A:
		out := make(bson.A, len(x))
		for i, el := range x {
			cv, err := computeValue(n, el, root, vars)
			if err != nil {
				return nil, err
			}
			out[i] = cv
		}
		return out, nil
	}
	return computeDoc(n, bson.D{}, root, vars)
}
