package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// withID returns doc with a generated ObjectId _id in front when it has none, as mongod does
// for documents written by $out and $merge.
func withID(doc bson.D) bson.D {
	if _, ok := bsonkit.Get(doc, "_id"); ok {
		return doc
	}
	return append(bson.D{{Key: "_id", Value: bson.NewObjectID()}}, doc...)
}

func parseOut(r *runner, spec any, _ pipeCtx) (stage, error) {
	var db, coll string
	switch x := spec.(type) {
	case string:
		if x == "" {
			return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid $out target namespace, collection name must not be empty")
		}
		db, coll = r.opts.DB, x
	case bson.D:
		for _, e := range x {
			s, ok := e.Value.(string)
			switch {
			case e.Key == "timeseries":
				return nil, mongoerr.New(mongoerr.NotImplemented, "$out to a time-series collection is not supported by embedmongo")
			case e.Key != "db" && e.Key != "coll":
				return nil, mongoerr.New(40415, "BSON field '$out.%s' is an unknown field.", e.Key)
			case !ok:
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$out.%s' is the wrong type '%s', expected type 'string'",
					e.Key, bsonkit.TypeName(e.Value))
			case e.Key == "db":
				db = s
			default:
				coll = s
			}
		}
		if db == "" {
			return nil, mongoerr.New(mongoerr.Location40414, "BSON field '$out.db' is missing but a required field")
		}
		if coll == "" {
			return nil, mongoerr.New(mongoerr.Location40414, "BSON field '$out.coll' is missing but a required field")
		}
	default:
		return nil, mongoerr.New(16990, "$out only supports a string or object argument, but found %s", bsonkit.TypeName(spec))
	}
	return func(in []bson.D) ([]bson.D, error) {
		if r.opts.Env == nil {
			return nil, mongoerr.New(mongoerr.InternalError, "$out needs a storage environment")
		}
		docs := make([]bson.D, len(in))
		for i, d := range in {
			docs[i] = withID(d)
		}
		return nil, r.opts.Env.ReplaceCollection(db, coll, docs)
	}, nil
}

// mergeSpec is a compiled $merge.
type mergeSpec struct {
	db, coll       string
	on             []string
	let            bson.D
	letExprs       []*expr.Expr
	whenMatched    string // replace, keepExisting, merge, fail, or "pipeline"
	pipeline       []bson.D
	whenNotMatched string // insert, discard, fail
}

func parseMerge(r *runner, spec any, _ pipeCtx) (stage, error) {
	m := &mergeSpec{on: []string{"_id"}, whenMatched: "merge", whenNotMatched: "insert"}
	var err error
	switch x := spec.(type) {
	case string:
		if m.db, m.coll, err = namespaceArg(x, r.opts.DB, "$merge", "into"); err != nil {
			return nil, err
		}
	case bson.D:
		if err := m.parseDoc(x, r.opts.DB); err != nil {
			return nil, err
		}
	default:
		return nil, mongoerr.New(51182, "$merge only supports a string or object argument, but found %s", bsonkit.TypeName(spec))
	}
	if m.whenMatched == "pipeline" {
		probe := copyVars(r.opts.Vars)
		probe["new"] = nil
		for _, e := range m.let {
			probe[e.Key] = nil
			ex, err := expr.Compile(e.Value)
			if err != nil {
				return nil, err
			}
			m.letExprs = append(m.letExprs, ex)
		}
		if _, err := r.withVars(probe).compile(m.pipeline, ctxUpdate); err != nil {
			return nil, err
		}
	}
	return func(in []bson.D) ([]bson.D, error) {
		if r.opts.Env == nil {
			return nil, mongoerr.New(mongoerr.InternalError, "$merge needs a storage environment")
		}
		for _, d := range in {
			if err := m.mergeOne(r, d); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}, nil
}

func (m *mergeSpec) parseDoc(d bson.D, defaultDB string) error {
	var err error
	hasInto := false
	for _, e := range d {
		switch e.Key {
		case "into":
			hasInto = true
			if m.db, m.coll, err = namespaceArg(e.Value, defaultDB, "$merge", "into"); err != nil {
				return err
			}
		case "on":
			if m.on, err = parseMergeOn(e.Value); err != nil {
				return err
			}
		case "let":
			var ok bool
			if m.let, ok = e.Value.(bson.D); !ok {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$merge.let' is the wrong type '%s', expected type 'object'", bsonkit.TypeName(e.Value))
			}
		case "whenMatched":
			switch v := e.Value.(type) {
			case string:
				switch v {
				case "replace", "keepExisting", "merge", "fail":
					m.whenMatched = v
				default:
					return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '$merge.whenMatched' is not a valid value.", v)
				}
			case bson.A:
				if m.pipeline, err = subPipeline(v, "$merge"); err != nil {
					return err
				}
				m.whenMatched = "pipeline"
			default:
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field '$merge.whenMatched' is the wrong type '%s', expected types '[string, array']", bsonkit.TypeName(e.Value))
			}
		case "whenNotMatched":
			s, _ := e.Value.(string)
			switch s {
			case "insert", "discard", "fail":
				m.whenNotMatched = s
			default:
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '$merge.whenNotMatched' is not a valid value.", fmtValue(e.Value))
			}
		default:
			return mongoerr.New(40415, "BSON field '$merge.%s' is an unknown field.", e.Key)
		}
	}
	if !hasInto {
		return mongoerr.New(mongoerr.Location40414, "BSON field '$merge.into' is missing but a required field")
	}
	if m.let != nil && m.whenMatched != "pipeline" {
		return mongoerr.New(51199, "Cannot use 'let' variables with 'whenMatched: %s' mode", m.whenMatched)
	}
	return nil
}

func parseMergeOn(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		if _, err := parseFieldPath(x); err != nil {
			return nil, err
		}
		return []string{x}, nil
	case bson.A:
		if len(x) == 0 {
			return nil, mongoerr.New(51187, "If explicitly specifying $merge 'on', must include at least one field")
		}
		out := make([]string, len(x))
		for i, el := range x {
			s, ok := el.(string)
			if !ok {
				return nil, mongoerr.New(51134, "$merge 'on' array elements must be strings, but found %s", bsonkit.TypeName(el))
			}
			if _, err := parseFieldPath(s); err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, mongoerr.New(51186, "$merge 'on' field must be either a string or an array of strings, but found %s", bsonkit.TypeName(v))
}

// mergeOne writes one source document into the target collection.
func (m *mergeSpec) mergeOne(r *runner, doc bson.D) error {
	env := r.opts.Env
	if len(m.on) == 1 && m.on[0] == "_id" {
		doc = withID(doc)
	}
	filter := make(bson.D, 0, len(m.on))
	for _, f := range m.on {
		v := getField(doc, strings.Split(f, "."))
		if _, isArr := v.(bson.A); isArr || nullish(v) {
			return mongoerr.New(51132, "$merge write error: 'on' field '%s' cannot be missing, null, undefined or an array", f)
		}
		filter = append(filter, bson.E{Key: f, Value: bson.D{{Key: "$eq", Value: v}}})
	}
	existing, err := env.FindOne(m.db, m.coll, filter)
	if err != nil {
		return err
	}
	if existing == nil {
		switch m.whenNotMatched {
		case "insert":
			return env.Insert(m.db, m.coll, withID(doc))
		case "fail":
			return mongoerr.New(13113, "$merge could not find a matching document in the target collection for at least one document in the source collection")
		}
		return nil
	}
	id, _ := bsonkit.Get(existing, "_id")
	var updated bson.D
	switch m.whenMatched {
	case "keepExisting":
		return nil
	case "fail":
		// mongod fails the insert on the unique index backing 'on', and reports its key.
		pattern, value := make(bson.D, len(m.on)), make(bson.D, len(m.on))
		dup := make([]string, len(m.on))
		for i, f := range m.on {
			v := getField(doc, strings.Split(f, "."))
			pattern[i] = bson.E{Key: f, Value: int32(1)}
			value[i] = bson.E{Key: f, Value: v}
			dup[i] = f + ": " + fmtValue(v)
		}
		index := "_id_"
		if len(m.on) != 1 || m.on[0] != "_id" {
			index = strings.Join(m.on, "_1_") + "_1"
		}
		err := mongoerr.New(mongoerr.DuplicateKey, "$merge failed due to a DuplicateKey error :: caused by :: E11000 duplicate key error collection: %s.%s index: %s dup key: { %s }",
			m.db, m.coll, index, strings.Join(dup, ", "))
		err.Extra = bson.D{{Key: "keyPattern", Value: pattern}, {Key: "keyValue", Value: value}}
		return err
	case "replace":
		updated = doc
	case "merge":
		updated = append(make(bson.D, 0, len(existing)+len(doc)), existing...)
		for _, e := range doc {
			updated = bsonkit.Set(updated, e.Key, e.Value)
		}
	case "pipeline":
		vars := copyVars(r.opts.Vars)
		if m.let == nil {
			vars["new"] = doc
		}
		for i, e := range m.let {
			v, err := m.letExprs[i].Eval(doc, r.opts.Vars)
			if err != nil {
				return err
			}
			vars[e.Key] = v
		}
		if updated, err = ApplyUpdatePipeline(m.pipeline, existing, vars); err != nil {
			return err
		}
	}
	newID, ok := bsonkit.Get(updated, "_id")
	if !ok {
		updated = append(bson.D{{Key: "_id", Value: id}}, updated...)
	} else if bsonkit.Compare(newID, id) != 0 || bsonkit.TypeCode(newID) != bsonkit.TypeCode(id) {
		return mongoerr.New(mongoerr.ImmutableField, "$merge failed to update the matching document, did you attempt to modify the _id or the shard key? :: caused by :: Performing an update on the path '_id' would modify the immutable field '_id'")
	}
	return env.Replace(m.db, m.coll, id, updated)
}
