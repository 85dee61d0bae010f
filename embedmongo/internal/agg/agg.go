// Package agg runs aggregation pipelines.
package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Env is the engine's side of stages that touch other collections ($lookup, $unionWith,
// $out, $merge).
type Env interface {
	// Docs returns a snapshot of the documents of db.coll in natural order (empty if absent).
	Docs(db, coll string) ([]bson.D, error)
	// ReplaceCollection atomically replaces db.coll's documents (creating it), for $out.
	// Indexes of an existing collection are kept and enforced, as in mongod.
	ReplaceCollection(db, coll string, docs []bson.D) error
	// FindOne returns the first document of db.coll matching filter, or nil.
	FindOne(db, coll string, filter bson.D) (bson.D, error)
	// Insert inserts doc into db.coll (creating it); a duplicate _id gives error 11000.
	Insert(db, coll string, doc bson.D) error
	// Replace replaces the document of db.coll whose _id equals id.
	Replace(db, coll string, id any, doc bson.D) error
}

// Options is what a pipeline runs with.
type Options struct {
	DB   string // database of the aggregate command (default for $lookup/$out/$merge)
	Vars expr.Vars
	Env  Env
}

// Run executes pipeline over input and returns the output documents. A trailing $out or $merge
// writes through Env and yields no documents.
func Run(pipeline []bson.D, input []bson.D, opts Options) ([]bson.D, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "agg: not implemented yet")
}
