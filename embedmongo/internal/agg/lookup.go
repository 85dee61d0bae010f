package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// namespaceArg parses a collection argument: "coll" (in the default database) or {db, coll}.
func namespaceArg(v any, defaultDB, stageName, field string) (db, coll string, err error) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "", "", mongoerr.New(mongoerr.InvalidNamespace, "%s: invalid namespace, '%s' must not be empty", stageName, field)
		}
		return defaultDB, x, nil
	case bson.D:
		db = defaultDB
		for _, e := range x {
			s, ok := e.Value.(string)
			switch {
			case (e.Key == "db" || e.Key == "coll") && !ok:
				return "", "", mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s.%s' is the wrong type '%s', expected type 'string'",
					stageName, field, e.Key, bsonkit.TypeName(e.Value))
			case e.Key == "db":
				db = s
			case e.Key == "coll":
				coll = s
			default:
				return "", "", mongoerr.New(40415, "BSON field '%s.%s.%s' is an unknown field.", stageName, field, e.Key)
			}
		}
		if coll == "" {
			return "", "", mongoerr.New(mongoerr.Location40414, "BSON field '%s.%s.coll' is missing but a required field", stageName, field)
		}
		return db, coll, nil
	}
	return "", "", mongoerr.New(mongoerr.TypeMismatch, "%s '%s' must be a string or an object, found %s",
		stageName, field, bsonkit.TypeName(v))
}

// subPipeline parses a nested pipeline argument (an array of stage documents).
func subPipeline(v any, stageName string) ([]bson.D, error) {
	arr, ok := v.(bson.A)
	if !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s argument 'pipeline' must be an array, is type %s",
			stageName, bsonkit.TypeName(v))
	}
	out := make([]bson.D, len(arr))
	for i, s := range arr {
		d, ok := s.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "%s pipeline must be an array of objects, found %s",
				stageName, bsonkit.TypeName(s))
		}
		out[i] = d
	}
	return out, nil
}

type lookupSpec struct {
	db, from     string
	as           []string
	localField   []string
	foreignField string
	let          bson.D
	letExprs     []*expr.Expr
	pipeline     []bson.D
	hasPipeline  bool
}

func parseLookup(r *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $lookup specification must be an Object, but found %s", bsonkit.TypeName(spec))
	}
	l := &lookupSpec{}
	var fromArg any
	var asStr, localStr string
	str := func(e bson.E) (string, error) {
		s, ok := e.Value.(string)
		if !ok {
			return "", mongoerr.New(mongoerr.FailedToParse, "$lookup argument '%s: %s' must be a string, is type %s",
				e.Key, fmtValue(e.Value), bsonkit.TypeName(e.Value))
		}
		return s, nil
	}
	var err error
	for _, e := range d {
		switch e.Key {
		case "from":
			fromArg = e.Value
		case "as":
			asStr, err = str(e)
		case "localField":
			localStr, err = str(e)
		case "foreignField":
			l.foreignField, err = str(e)
		case "let":
			var ok bool
			if l.let, ok = e.Value.(bson.D); !ok {
				err = mongoerr.New(mongoerr.FailedToParse, "$lookup argument 'let' must be an object, is type %s", bsonkit.TypeName(e.Value))
			}
		case "pipeline":
			l.pipeline, err = subPipeline(e.Value, "$lookup")
			l.hasPipeline = true
		default:
			err = mongoerr.New(mongoerr.FailedToParse, "unknown argument to $lookup: %s", e.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	if asStr == "" {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'as' field for a $lookup")
	}
	if l.as, err = parseFieldPath(asStr); err != nil {
		return nil, err
	}
	if (localStr == "") != (l.foreignField == "") {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires both or neither of 'localField' and 'foreignField' to be specified")
	}
	if localStr == "" && !l.hasPipeline {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified")
	}
	if l.let != nil && !l.hasPipeline {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup with 'let' requires 'pipeline' to be specified")
	}
	if localStr != "" {
		if l.localField, err = parseFieldPath(localStr); err != nil {
			return nil, err
		}
		if _, err = parseFieldPath(l.foreignField); err != nil {
			return nil, err
		}
	}
	if fromArg == nil {
		if !StartsWithDocuments(l.pipeline) {
			return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'from' field for a $lookup")
		}
	} else if l.db, l.from, err = namespaceArg(fromArg, r.opts.DB, "$lookup", "from"); err != nil {
		return nil, err
	}
	for _, e := range l.let {
		ex, err := expr.Compile(e.Value)
		if err != nil {
			return nil, err
		}
		l.letExprs = append(l.letExprs, ex)
	}
	// Compile the sub-pipeline once now to report its errors before running; without `let`
	// this compiled form is also the one used for every document.
	probeVars := copyVars(r.opts.Vars)
	for _, e := range l.let {
		probeVars[e.Key] = nil
	}
	shared, err := r.withVars(probeVars).compile(l.pipeline, ctxLookup)
	if err != nil {
		return nil, err
	}
	if l.let != nil {
		shared = nil
	}
	return func(in []bson.D) ([]bson.D, error) {
		var foreign []bson.D
		if l.from != "" {
			var err error
			if foreign, err = r.collection(l.db, l.from); err != nil {
				return nil, err
			}
		}
		out := make([]bson.D, len(in))
		for i, doc := range in {
			matched, err := l.join(r, doc, foreign, shared)
			if err != nil {
				return nil, err
			}
			out[i] = setField(doc, l.as, bson.A(toAnySlice(matched)))
		}
		return out, nil
	}, nil
}

// join computes the `as` array of one local document.
func (l *lookupSpec) join(r *runner, doc bson.D, foreign []bson.D, shared []stage) ([]bson.D, error) {
	matched := foreign
	if l.localField != nil {
		m, err := query.Compile(equalityFilter(l.foreignField, localValues(doc, l.localField)), query.Options{Collation: r.opts.Collation})
		if err != nil {
			return nil, err
		}
		matched = nil
		for _, f := range foreign {
			ok, err := m.Match(f)
			if err != nil {
				return nil, err
			}
			if ok {
				matched = append(matched, f)
			}
		}
	}
	if !l.hasPipeline {
		return matched, nil
	}
	stages := shared
	if stages == nil {
		vars := copyVars(r.opts.Vars)
		for i, e := range l.let {
			v, err := l.letExprs[i].Eval(doc, r.opts.Vars)
			if err != nil {
				return nil, err
			}
			vars[e.Key] = v
		}
		var err error
		if stages, err = r.withVars(vars).compile(l.pipeline, ctxLookup); err != nil {
			return nil, err
		}
	}
	return runStages(stages, matched)
}

// localValues collects the values of a local field path as $lookup does: arrays along the
// path are traversed and a trailing array contributes its elements; nothing found is null.
func localValues(doc bson.D, path []string) bson.A {
	var vals bson.A
	var walk func(v any, rest []string)
	walk = func(v any, rest []string) {
		if len(rest) == 0 {
			if a, ok := v.(bson.A); ok {
				vals = append(vals, a...)
			} else if !bsonkit.IsMissing(v) {
				vals = append(vals, v)
			}
			return
		}
		switch x := v.(type) {
		case bson.D:
			if fv, ok := bsonkit.Get(x, rest[0]); ok {
				walk(fv, rest[1:])
			}
		case bson.A:
			for _, el := range x {
				if _, isDoc := el.(bson.D); isDoc {
					walk(el, rest)
				}
			}
		}
	}
	walk(doc, path)
	if len(vals) == 0 {
		vals = bson.A{nil}
	}
	return vals
}

// equalityFilter matches foreign documents whose field equals any of vals, with query
// semantics (arrays match by element, null matches missing). Regexes are compared as values,
// not applied as patterns, so they go through $eq.
func equalityFilter(field string, vals bson.A) bson.D {
	var plain bson.A
	var ors bson.A
	for _, v := range vals {
		if _, isRegex := v.(bson.Regex); isRegex {
			ors = append(ors, bson.D{{Key: field, Value: bson.D{{Key: "$eq", Value: v}}}})
		} else {
			plain = append(plain, v)
		}
	}
	if ors == nil {
		return bson.D{{Key: field, Value: bson.D{{Key: "$in", Value: plain}}}}
	}
	if plain != nil {
		ors = append(ors, bson.D{{Key: field, Value: bson.D{{Key: "$in", Value: plain}}}})
	}
	return bson.D{{Key: "$or", Value: ors}}
}

func copyVars(v expr.Vars) expr.Vars {
	out := make(expr.Vars, len(v)+4)
	for k, val := range v {
		out[k] = val
	}
	return out
}

func toAnySlice(docs []bson.D) []any {
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = d
	}
	return out
}

func parseUnionWith(r *runner, spec any, _ pipeCtx) (stage, error) {
	var db, coll string
	var pipeline []bson.D
	var err error
	switch x := spec.(type) {
	case string:
		db, coll = r.opts.DB, x
	case bson.D:
		for _, e := range x {
			switch e.Key {
			case "coll":
				if db, coll, err = namespaceArg(e.Value, r.opts.DB, "$unionWith", "coll"); err != nil {
					return nil, err
				}
			case "pipeline":
				if pipeline, err = subPipeline(e.Value, "$unionWith"); err != nil {
					return nil, err
				}
			default:
				return nil, mongoerr.New(40415, "BSON field '$unionWith.%s' is an unknown field.", e.Key)
			}
		}
		if coll == "" && !StartsWithDocuments(pipeline) {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$unionWith stage without explicit collection must have a pipeline with $documents as first stage")
		}
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $unionWith stage specification must be an object or string, but found %s", bsonkit.TypeName(spec))
	}
	stages, err := r.compile(pipeline, ctxUnion)
	if err != nil {
		return nil, err
	}
	return func(in []bson.D) ([]bson.D, error) {
		var other []bson.D
		if coll != "" {
			var err error
			if other, err = r.collection(db, coll); err != nil {
				return nil, err
			}
		}
		more, err := runStages(stages, other)
		if err != nil {
			return nil, err
		}
		return append(append(make([]bson.D, 0, len(in)+len(more)), in...), more...), nil
	}, nil
}

func parseFacet(r *runner, spec any, _ pipeCtx) (stage, error) {
	d, ok := spec.(bson.D)
	if !ok || len(d) == 0 {
		return nil, mongoerr.New(40169, "the $facet specification must be a non-empty object, but found: %s", fmtValue(spec))
	}
	type facet struct {
		name   string
		stages []stage
	}
	facets := make([]facet, 0, len(d))
	for _, e := range d {
		if _, err := parseFieldPath(e.Key); err != nil {
			return nil, err
		}
		arr, ok := e.Value.(bson.A)
		if !ok {
			return nil, mongoerr.New(40170, "arguments to $facet must be arrays, %s is type %s", e.Key, bsonkit.TypeName(e.Value))
		}
		pipeline, err := subPipeline(arr, "$facet")
		if err != nil {
			return nil, mongoerr.New(40171, "subpipeline must be an array of objects")
		}
		stages, err := r.compile(pipeline, ctxFacet)
		if err != nil {
			return nil, err
		}
		facets = append(facets, facet{e.Key, stages})
	}
	return func(in []bson.D) ([]bson.D, error) {
		out := make(bson.D, 0, len(facets))
		for _, f := range facets {
			docs, err := runStages(f.stages, in)
			if err != nil {
				return nil, err
			}
			out = append(out, bson.E{Key: f.name, Value: bson.A(toAnySlice(docs))})
		}
		return []bson.D{out}, nil
	}, nil
}
