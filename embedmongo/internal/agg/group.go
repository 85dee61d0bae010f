package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// accSpec is one compiled output field of $group: name: {op: argument}.
type accSpec struct {
	field string
	op    string
	arg   *expr.Expr // nil for $count and n-accumulators
	n     *nSpec     // $firstN, $top, ...
}

// groupID is the compiled _id of $group: one expression, or a document of expressions.
type groupID struct {
	single *expr.Expr
	names  []string
	fields []*expr.Expr
}

func compileGroupID(v any) (*groupID, error) {
	if d, ok := v.(bson.D); ok && len(d) > 0 && !isExpressionObject(d) {
		g := &groupID{}
		for _, e := range d {
			ex, err := expr.Compile(e.Value)
			if err != nil {
				return nil, err
			}
			g.names = append(g.names, e.Key)
			g.fields = append(g.fields, ex)
		}
		return g, nil
	}
	ex, err := expr.Compile(v)
	if err != nil {
		return nil, err
	}
	return &groupID{single: ex}, nil
}

// eval computes a document's group key. Like mongod, a missing single key groups as null, a
// missing field of a one-field key document becomes null, and with several fields it is omitted.
func (g *groupID) eval(doc bson.D, vars expr.Vars) (any, error) {
	if g.single != nil {
		v, err := g.single.Eval(doc, vars)
		return missingToNull(v), err
	}
	out := make(bson.D, 0, len(g.names))
	for i, ex := range g.fields {
		v, err := ex.Eval(doc, vars)
		if err != nil {
			return nil, err
		}
		if bsonkit.IsMissing(v) {
			if len(g.fields) > 1 {
				continue
			}
			v = nil
		}
		out = append(out, bson.E{Key: g.names[i], Value: v})
	}
	return out, nil
}

// compileAccumulators parses `field: {$op: arg}` entries (of $group, $bucket's output).
func compileAccumulators(fields bson.D) ([]accSpec, error) {
	var accs []accSpec
	for _, e := range fields {
		if strings.Contains(e.Key, ".") {
			return nil, mongoerr.New(40235, "The field name '%s' cannot contain '.'", e.Key)
		}
		if strings.HasPrefix(e.Key, "$") {
			return nil, mongoerr.New(40236, "The field name '%s' cannot be an operator name", e.Key)
		}
		d, ok := e.Value.(bson.D)
		if !ok {
			return nil, mongoerr.New(40234, "The field '%s' must be an accumulator object", e.Key)
		}
		if len(d) != 1 {
			return nil, mongoerr.New(40238, "The field '%s' must specify one accumulator", e.Key)
		}
		op, arg := d[0].Key, d[0].Value
		if _, ok := accumulatorFactories[op]; !ok && !nAccumulators[op] {
			return nil, mongoerr.New(15952, "unknown group operator '%s'", op)
		}
		spec := accSpec{field: e.Key, op: op}
		if nAccumulators[op] {
			var err error
			if spec.n, err = parseNSpec(op, arg); err != nil {
				return nil, err
			}
		} else if op == "$count" {
			if ad, ok := arg.(bson.D); !ok || len(ad) != 0 {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "$count takes no arguments, i.e. $count:{}")
			}
		} else {
			if _, isArr := arg.(bson.A); isArr {
				return nil, mongoerr.New(40237, "The %s accumulator is a unary operator", op)
			}
			ex, err := expr.Compile(arg)
			if err != nil {
				return nil, err
			}
			spec.arg = ex
		}
		accs = append(accs, spec)
	}
	return accs, nil
}

// newAccumulators builds the accumulator state of the group with the given key.
func newAccumulators(specs []accSpec, key any, vars expr.Vars) ([]accumulator, error) {
	out := make([]accumulator, len(specs))
	for i, s := range specs {
		if s.n != nil {
			a, err := s.n.newAcc(key, vars)
			if err != nil {
				return nil, err
			}
			out[i] = a
			continue
		}
		out[i] = accumulatorFactories[s.op]()
	}
	return out, nil
}

// feed adds one document to a group's accumulators.
func feed(specs []accSpec, accs []accumulator, doc bson.D, vars expr.Vars) error {
	for i, s := range specs {
		if s.n != nil {
			if err := accs[i].(*nAcc).addDoc(doc, vars); err != nil {
				return err
			}
			continue
		}
		var v any = int32(1)
		if s.arg != nil {
			var err error
			if v, err = s.arg.Eval(doc, vars); err != nil {
				return err
			}
		}
		if err := accs[i].add(v); err != nil {
			return err
		}
	}
	return nil
}

func groupOutput(id any, specs []accSpec, accs []accumulator) bson.D {
	out := make(bson.D, 0, len(specs)+1)
	out = append(out, bson.E{Key: "_id", Value: id})
	for i, s := range specs {
		out = append(out, bson.E{Key: s.field, Value: accs[i].result()})
	}
	return out
}

func parseGroup(r *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(15947, "a group's fields must be specified in an object")
	}
	var id *groupID
	var rest bson.D
	for _, e := range d {
		if e.Key == "_id" {
			var err error
			if id, err = compileGroupID(e.Value); err != nil {
				return nil, err
			}
			continue
		}
		rest = append(rest, e)
	}
	if id == nil {
		return nil, mongoerr.New(15955, "a group specification must include an _id")
	}
	specs, err := compileAccumulators(rest)
	if err != nil {
		return nil, err
	}
	return func(in []bson.D) ([]bson.D, error) {
		table := groupTable{coll: r.opts.Collation}
		var groups [][]accumulator
		for _, doc := range in {
			key, err := id.eval(doc, r.opts.Vars)
			if err != nil {
				return nil, err
			}
			i, created := table.index(key)
			if created {
				accs, err := newAccumulators(specs, key, r.opts.Vars)
				if err != nil {
					return nil, err
				}
				groups = append(groups, accs)
			}
			if err := feed(specs, groups[i], doc, r.opts.Vars); err != nil {
				return nil, err
			}
		}
		out := make([]bson.D, len(groups))
		for i, accs := range groups {
			out[i] = groupOutput(table.keys[i], specs, accs)
		}
		return out, nil
	}, nil
}
