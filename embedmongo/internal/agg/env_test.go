package agg

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// fakeEnv is an in-memory test double of Env: collections keyed by "db.coll".
type fakeEnv struct{ colls map[string][]bson.D }

func newFakeEnv(t *testing.T, colls map[string]string) *fakeEnv {
	e := &fakeEnv{colls: map[string][]bson.D{}}
	for ns, js := range colls {
		e.colls[ns] = jsonDocs(t, js)
	}
	return e
}

func (e *fakeEnv) Docs(db, coll string) ([]bson.D, error) { return e.colls[db+"."+coll], nil }

func (e *fakeEnv) ReplaceCollection(db, coll string, docs []bson.D) error {
	seen := map[string]bool{}
	for _, d := range docs {
		id, _ := bsonkit.Get(d, "_id")
		k := fmtValue(id)
		if seen[k] {
			return mongoerr.New(mongoerr.DuplicateKey, "E11000 duplicate key error")
		}
		seen[k] = true
	}
	e.colls[db+"."+coll] = docs
	return nil
}

func (e *fakeEnv) FindOne(db, coll string, filter bson.D) (bson.D, error) {
	m, err := query.Compile(filter, query.Options{})
	if err != nil {
		return nil, err
	}
	for _, d := range e.colls[db+"."+coll] {
		if ok, err := m.Match(d); err != nil || ok {
			return d, err
		}
	}
	return nil, nil
}

func (e *fakeEnv) Insert(db, coll string, doc bson.D) error {
	id, _ := bsonkit.Get(doc, "_id")
	for _, d := range e.colls[db+"."+coll] {
		if other, _ := bsonkit.Get(d, "_id"); bsonkit.Equal(id, other) {
			return mongoerr.New(mongoerr.DuplicateKey, "E11000 duplicate key error")
		}
	}
	e.colls[db+"."+coll] = append(e.colls[db+"."+coll], doc)
	return nil
}

func (e *fakeEnv) Replace(db, coll string, id any, doc bson.D) error {
	docs := e.colls[db+"."+coll]
	for i, d := range docs {
		if other, _ := bsonkit.Get(d, "_id"); bsonkit.Equal(id, other) {
			docs[i] = doc
			return nil
		}
	}
	return mongoerr.New(mongoerr.NoSuchKey, "no document with _id %v", id)
}
