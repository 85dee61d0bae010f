package embedmongo

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/agg"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/storage"
)

// What a collection's options (create, collMod) make the commands do: a default collation,
// a view definition (viewOn + pipeline) and a validator.

// maxViewDepth is mongod's limit on views defined on views.
const maxViewDepth = 20

// collOptions returns coll's options (nil for a missing collection); read once per command.
func collOptions(coll *storage.Collection) bson.D {
	if coll == nil {
		return nil
	}
	return coll.OptionsRef()
}

func isView(opts bson.D) bool {
	_, ok := lookup(opts, "viewOn")
	return ok
}

// errOnView is mongod's answer to writes and index commands on a view.
func errOnView(db, name string) error {
	return &mongoerr.Error{Code: 166, Name: "CommandNotSupportedOnView",
		Msg: fmt.Sprintf("Namespace %s.%s is a view, not a collection", db, name)}
}

// operationCollation resolves the collation an operation runs with: its own collation
// argument when given, else the collection's default, else simple (nil).
func operationCollation(arg any, opts bson.D) (*collation.Collation, error) {
	if arg != nil {
		return collation.Parse(arg)
	}
	if v, ok := lookup(opts, "collation"); ok {
		return collation.Parse(v)
	}
	return nil, nil
}

// indexFilter is the filter storage may narrow candidates with: none under a non-simple
// collation, since indexes hold strings in binary order and would miss collation-equal ones
// (the matcher still applies the whole filter).
func indexFilter(filter bson.D, coll *collation.Collation) bson.D {
	if coll != nil {
		return nil
	}
	return filter
}

func matchAll(bson.D) (bool, error) { return true, nil }

// view is a resolved view: the collection it finally reads and the pipelines of the views
// on the way, innermost first.
type view struct {
	source    string
	pipeline  []bson.D
	collation *collation.Collation
}

// resolveView follows db.name's view definition down to a collection; nil when name is not
// a view.
func (s *Server) resolveView(db, name string) (*view, error) {
	var v *view
	source := name
	for depth := 0; ; depth++ {
		opts := collOptions(s.store.Collection(db, source))
		on, ok := lookup(opts, "viewOn")
		if !ok {
			break
		}
		if depth >= maxViewDepth {
			return nil, &mongoerr.Error{Code: 149, Name: "ViewDepthLimitExceeded",
				Msg: fmt.Sprintf("View depth too deep or view cycle detected. Maximum depth is %d", maxViewDepth)}
		}
		if v == nil {
			v = &view{}
			c, err := operationCollation(nil, opts)
			if err != nil {
				return nil, err
			}
			v.collation = c
		}
		p, _ := lookup(opts, "pipeline")
		stages, err := pipelineStages(p)
		if err != nil {
			return nil, err
		}
		v.pipeline = append(stages, v.pipeline...)
		source, _ = on.(string)
	}
	if v != nil {
		v.source = source
	}
	return v, nil
}

func pipelineStages(p any) ([]bson.D, error) {
	if p == nil {
		return nil, nil
	}
	arr, ok := p.(bson.A)
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "'pipeline' must be an array")
	}
	stages := make([]bson.D, 0, len(arr))
	for _, s := range arr {
		d, ok := s.(bson.D)
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		stages = append(stages, d)
	}
	return stages, nil
}

// sourceDocs returns the documents of the collection under view v.
func (s *Server) sourceDocs(db string, v *view) ([]bson.D, error) {
	src := s.store.Collection(db, v.source)
	if src == nil {
		return nil, nil
	}
	found, err := src.Find(nil, matchAll)
	if err != nil {
		return nil, err
	}
	docs := make([]bson.D, len(found))
	for i, d := range found {
		docs[i] = d.Doc
	}
	return docs, nil
}

// scan returns the documents of db.name that match, reading through the view's pipeline when
// name is a view. filter only narrows candidates by index (nil: scan everything).
func (c *cmdCtx) scan(name string, coll *storage.Collection, opts bson.D, filter bson.D, match storage.MatchFunc, vars expr.Vars) ([]storage.Doc, error) {
	if coll == nil {
		return nil, nil
	}
	if !isView(opts) {
		return coll.Find(filter, match)
	}
	v, err := c.srv.resolveView(c.db, name)
	if err != nil {
		return nil, err
	}
	docs, err := c.srv.viewDocs(c.db, v, vars)
	if err != nil {
		return nil, err
	}
	out := make([]storage.Doc, 0, len(docs))
	for _, d := range docs {
		ok, err := match(d)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, storage.Doc{Doc: d})
		}
	}
	return out, nil
}

// viewDocs computes the documents of view v.
func (s *Server) viewDocs(db string, v *view, vars expr.Vars) ([]bson.D, error) {
	input, err := s.sourceDocs(db, v)
	if err != nil {
		return nil, err
	}
	return agg.Run(v.pipeline, input, agg.Options{DB: db, Vars: vars, Env: &aggEnv{srv: s}, Collation: v.collation})
}
