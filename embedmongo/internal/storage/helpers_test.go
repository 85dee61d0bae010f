package storage

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

func openMem(t testing.TB) *Store {
	t.Helper()
	s, err := Open(Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustColl(t testing.TB, s *Store, name string) *Collection {
	t.Helper()
	c, err := s.CollectionOrCreate("db", name)
	require.NoError(t, err)
	return c
}

func insertAll(t testing.TB, c *Collection, docs ...bson.D) []RecordID {
	t.Helper()
	var ids []RecordID
	require.NoError(t, c.Write(func(tx *Tx) error {
		for _, d := range docs {
			id, err := tx.Insert(d)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	}))
	return ids
}

func all(bson.D) (bool, error) { return true, nil }

// refMatch is a reference matcher for the filters the planner understands, over top-level
// fields, with MongoDB's array semantics (an array field matches when the whole array or one
// of its elements does). It lets these tests run independently of package query.
func refMatch(filter bson.D) MatchFunc {
	return func(doc bson.D) (bool, error) { return refMatchDoc(filter, doc), nil }
}

func refMatchDoc(filter bson.D, doc bson.D) bool {
	for _, e := range filter {
		if e.Key == "$and" {
			for _, sub := range e.Value.(bson.A) {
				if !refMatchDoc(sub.(bson.D), doc) {
					return false
				}
			}
			continue
		}
		v, ok := bsonkit.Get(doc, e.Key)
		if !ok {
			v = bsonkit.Missing
		}
		ops, isOps := e.Value.(bson.D)
		if !isOps || len(ops) == 0 || !strings.HasPrefix(ops[0].Key, "$") {
			ops = bson.D{{Key: "$eq", Value: e.Value}}
		}
		for _, op := range ops {
			if !anyValue(v, func(x any) bool { return refOp(op.Key, op.Value, x) }) {
				return false
			}
		}
	}
	return true
}

// anyValue applies pred to v and, for an array, to each element.
func anyValue(v any, pred func(any) bool) bool {
	if pred(v) {
		return true
	}
	if a, ok := v.(bson.A); ok {
		for _, e := range a {
			if pred(e) {
				return true
			}
		}
	}
	return false
}

func refOp(op string, want, x any) bool {
	if bsonkit.IsMissing(x) {
		return false
	}
	switch op {
	case "$eq":
		return bsonkit.Compare(x, want) == 0
	case "$in":
		for _, w := range want.(bson.A) {
			if bsonkit.Compare(x, w) == 0 {
				return true
			}
		}
		return false
	}
	if bsonkit.CanonicalType(x) != bsonkit.CanonicalType(want) {
		return false
	}
	c := bsonkit.Compare(x, want)
	switch op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	case "$lte":
		return c <= 0
	}
	panic("refOp: " + op)
}

func ids(docs []Doc) []any {
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i], _ = bsonkit.Get(d.Doc, "_id")
	}
	return out
}
