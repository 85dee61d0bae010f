package storage

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func key(kv ...any) bson.D {
	d := bson.D{}
	for i := 0; i < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return d
}

func doc(id int32, kv ...any) bson.D {
	return append(bson.D{{Key: "_id", Value: id}}, key(kv...)...)
}

// TestUniqueIndexes inserts docs in order into a collection with one index and checks which
// insert fails with DuplicateKey.
func TestUniqueIndexes(t *testing.T) {
	tests := []struct {
		name    string
		spec    IndexSpec
		docs    []bson.D
		failAt  int // index into docs of the insert that must fail; -1 for none
		message string
	}{
		{
			name: "scalar duplicate",
			spec: IndexSpec{Key: key("email", int32(1)), Unique: true},
			docs: []bson.D{doc(1, "email", "a"), doc(2, "email", "b"), doc(3, "email", "a")}, failAt: 2,
			message: `E11000 duplicate key error collection: db.c index: email_1 dup key: { email: "a" }`,
		},
		{
			name: "numbers compare by value",
			spec: IndexSpec{Key: key("n", int32(1)), Unique: true},
			docs: []bson.D{doc(1, "n", int32(5)), doc(2, "n", 5.0)}, failAt: 1,
		},
		{
			name: "missing fields index as null",
			spec: IndexSpec{Key: key("email", int32(1)), Unique: true},
			docs: []bson.D{doc(1), doc(2, "email", nil)}, failAt: 1,
			message: `E11000 duplicate key error collection: db.c index: email_1 dup key: { email: null }`,
		},
		{
			name: "sparse skips missing fields",
			spec: IndexSpec{Key: key("email", int32(1)), Unique: true, Sparse: true},
			docs: []bson.D{doc(1), doc(2), doc(3, "email", "x"), doc(4, "email", "x")}, failAt: 3,
		},
		{
			name: "compound unique needs all fields equal",
			spec: IndexSpec{Key: key("a", int32(1), "b", int32(-1)), Unique: true},
			docs: []bson.D{doc(1, "a", int32(1), "b", int32(1)), doc(2, "a", int32(1), "b", int32(2)),
				doc(3, "a", int32(2), "b", int32(1)), doc(4, "b", int32(2), "a", int32(1))},
			failAt:  3,
			message: `E11000 duplicate key error collection: db.c index: a_1_b_-1 dup key: { a: 1, b: 2 }`,
		},
		{
			name: "multikey elements collide across documents",
			spec: IndexSpec{Key: key("tags", int32(1)), Unique: true},
			docs: []bson.D{doc(1, "tags", bson.A{"x", "y"}), doc(2, "tags", bson.A{"z"}), doc(3, "tags", "y")}, failAt: 2,
		},
		{
			name: "repeated element within one document is fine",
			spec: IndexSpec{Key: key("tags", int32(1)), Unique: true},
			docs: []bson.D{doc(1, "tags", bson.A{"x", "x"}), doc(2, "tags", bson.A{"y"})}, failAt: -1,
		},
		{
			name: "an array value is not a duplicate of an array element key",
			spec: IndexSpec{Key: key("tags", int32(1)), Unique: true},
			docs: []bson.D{doc(1, "tags", bson.A{"x", "y"}), doc(2, "tags", bson.A{bson.A{"x", "y"}})}, failAt: -1,
		},
		{
			name: "dotted path through array of documents",
			spec: IndexSpec{Key: key("a.b", int32(1)), Unique: true},
			docs: []bson.D{doc(1, "a", bson.A{bson.D{{Key: "b", Value: int32(1)}}, bson.D{{Key: "b", Value: int32(2)}}}),
				doc(2, "a", bson.D{{Key: "b", Value: int32(2)}})}, failAt: 1,
		},
		{
			name: "partial index only constrains matching documents",
			spec: IndexSpec{Key: key("u", int32(1)), Unique: true,
				PartialFilterExpression: key("active", true)},
			docs: []bson.D{doc(1, "u", "a", "active", false), doc(2, "u", "a", "active", false),
				doc(3, "u", "a", "active", true), doc(4, "u", "a", "active", true)}, failAt: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openMem(t)
			c := mustColl(t, s, "c")
			n, err := c.CreateIndexes([]IndexSpec{tt.spec})
			if tt.spec.PartialFilterExpression != nil && err != nil && mongoerr.Is(err, mongoerr.CannotCreateIndex) {
				t.Skipf("query package cannot compile the partial filter yet: %v", err)
			}
			require.NoError(t, err)
			require.Equal(t, 1, n)
			for i, d := range tt.docs {
				err := c.Write(func(tx *Tx) error { _, err := tx.Insert(d); return err })
				if i == tt.failAt {
					require.True(t, mongoerr.Is(err, mongoerr.DuplicateKey), "insert %d: %v", i, err)
					if tt.message != "" {
						require.Equal(t, tt.message, mongoerr.As(err).Msg)
					}
					require.EqualValues(t, i, c.Count(), "a failed insert leaves nothing behind")
					return
				}
				require.NoError(t, err, "insert %d", i)
			}
			require.Equal(t, -1, tt.failAt)

			// Building the same index over the same data agrees with incremental maintenance.
			require.NoError(t, c.DropIndex(c.Indexes()[1].Name))
			_, err = c.CreateIndexes([]IndexSpec{tt.spec})
			require.NoError(t, err)
		})
	}
}

func TestUniqueIndexBuildOverDuplicatesFails(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	insertAll(t, c, doc(1, "k", "a"), doc(2, "k", "a"))
	_, err := c.CreateIndexes([]IndexSpec{{Key: key("k", int32(1)), Unique: true}})
	require.True(t, mongoerr.Is(err, mongoerr.DuplicateKey), "%v", err)
	require.Len(t, c.Indexes(), 1, "a failed build leaves no index")
	// Non-unique builds fine.
	n, err := c.CreateIndexes([]IndexSpec{{Key: key("k", int32(1))}})
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestReplaceChecksUniqueAgainstOthersOnly(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	_, err := c.CreateIndexes([]IndexSpec{{Key: key("k", int32(1)), Unique: true}})
	require.NoError(t, err)
	rids := insertAll(t, c, doc(1, "k", "a"), doc(2, "k", "b"))
	// Rewriting a document with its own key is fine.
	require.NoError(t, c.Write(func(tx *Tx) error { return tx.Replace(rids[0], doc(1, "k", "a", "x", int32(1))) }))
	err = c.Write(func(tx *Tx) error { return tx.Replace(rids[0], doc(1, "k", "b")) })
	require.True(t, mongoerr.Is(err, mongoerr.DuplicateKey), "%v", err)
	// The failed replace changed nothing: "a" is still taken by doc 1, and "b" by doc 2.
	docs, err := c.Find(key("k", "a"), refMatch(key("k", "a")))
	require.NoError(t, err)
	require.Equal(t, []any{int32(1)}, ids(docs))
	// After changing doc 1 away from "a", "a" is free again.
	require.NoError(t, c.Write(func(tx *Tx) error { return tx.Replace(rids[0], doc(1, "k", "c")) }))
	insertAll(t, c, doc(3, "k", "a"))
}

func TestCreateIndexConflicts(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	n, err := c.CreateIndexes([]IndexSpec{{Key: key("a", int32(1))}, {Key: key("b", int32(-1)), Name: "bee", Unique: true}})
	require.NoError(t, err)
	require.Equal(t, 2, n)

	tests := []struct {
		name string
		spec IndexSpec
		code int32 // 0: succeeds, creating new indexes
		new  int
	}{
		{"identical is a no-op", IndexSpec{Key: key("a", 1.0)}, 0, 0},
		{"identical named is a no-op", IndexSpec{Key: key("b", int32(-1)), Name: "bee", Unique: true}, 0, 0},
		{"same name other key", IndexSpec{Key: key("a", int32(-1)), Name: "a_1"}, mongoerr.IndexKeySpecsConflict, 0},
		{"same name other options", IndexSpec{Key: key("a", int32(1)), Unique: true}, mongoerr.IndexOptionsConflict, 0},
		{"same key other name", IndexSpec{Key: key("a", int32(1)), Name: "other"}, mongoerr.IndexOptionsConflict, 0},
		{"_id index again", IndexSpec{Key: key("_id", int32(1)), Name: "_id_"}, 0, 0},
		{"text index", IndexSpec{Key: key("t", "text")}, mongoerr.CannotCreateIndex, 0},
		{"2dsphere index", IndexSpec{Key: key("loc", "2dsphere")}, mongoerr.CannotCreateIndex, 0},
		{"zero direction", IndexSpec{Key: key("z", int32(0))}, mongoerr.CannotCreateIndex, 0},
		{"empty key", IndexSpec{Key: bson.D{}}, mongoerr.CannotCreateIndex, 0},
		{"compound ttl", IndexSpec{Key: key("x", int32(1), "y", int32(1)), ExpireAfterSeconds: new(int64)}, mongoerr.CannotCreateIndex, 0},
		{"new compound", IndexSpec{Key: key("a", int32(1), "b", int32(1))}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := c.CreateIndexes([]IndexSpec{tt.spec})
			if tt.code != 0 {
				require.True(t, mongoerr.Is(err, tt.code), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.new, n)
		})
	}
	err = c.DropIndex("a_1")
	require.NoError(t, err)
	err = c.DropIndex("a_1")
	require.True(t, mongoerr.Is(err, mongoerr.IndexNotFound), "%v", err)
	require.Equal(t, "index not found with name [a_1]", mongoerr.As(err).Msg)
	err = c.DropIndex("_id_")
	require.True(t, mongoerr.Is(err, mongoerr.InvalidOptions), "%v", err)
	require.NoError(t, c.DropIndex("*"))
	specs := c.Indexes()
	require.Len(t, specs, 1)
	require.Equal(t, bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: key("_id", int32(1))}, {Key: "name", Value: "_id_"}}, specs[0].Spec)
}

func TestParseIndexSpec(t *testing.T) {
	sp, err := ParseIndexSpec(bson.D{
		{Key: "key", Value: key("createdAt", int32(1))},
		{Key: "expireAfterSeconds", Value: int32(3600)},
		{Key: "unique", Value: true},
	})
	require.NoError(t, err)
	require.Equal(t, "createdAt_1", sp.Name)
	require.True(t, sp.Unique)
	require.EqualValues(t, 3600, *sp.ExpireAfterSeconds)
	require.Equal(t, bson.D{
		{Key: "v", Value: int32(2)}, {Key: "key", Value: key("createdAt", int32(1))}, {Key: "name", Value: "createdAt_1"},
		{Key: "expireAfterSeconds", Value: int32(3600)}, {Key: "unique", Value: true},
	}, sp.Spec)

	_, err = ParseIndexSpec(bson.D{{Key: "name", Value: "x"}})
	require.True(t, mongoerr.Is(err, mongoerr.FailedToParse), "%v", err)
	_, err = ParseIndexSpec(bson.D{{Key: "key", Value: key("a", int32(1))}, {Key: "bogus", Value: true}})
	require.True(t, mongoerr.Is(err, 197), "%v", err)
	_, err = ParseIndexSpec(bson.D{{Key: "key", Value: key("a", int32(1))}, {Key: "expireAfterSeconds", Value: int32(-1)}})
	require.True(t, mongoerr.Is(err, mongoerr.CannotCreateIndex), "%v", err)
	require.Equal(t, "a_1_b_-1", DefaultIndexName(key("a", int32(1), "b", int64(-1))))
}

func TestParallelArrays(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	_, err := c.CreateIndexes([]IndexSpec{{Key: key("a", int32(1), "b", int32(1))}, {Key: key("x.y", int32(1), "x.z", int32(1))}})
	require.NoError(t, err)
	insertAll(t, c, doc(1, "a", bson.A{int32(1), int32(2)}, "b", int32(1)))
	// Two fields under the same array are fine.
	insertAll(t, c, doc(2, "x", bson.A{bson.D{{Key: "y", Value: int32(1)}, {Key: "z", Value: int32(2)}}}))
	err = c.Write(func(tx *Tx) error {
		_, err := tx.Insert(doc(3, "a", bson.A{int32(1)}, "b", bson.A{int32(2)}))
		return err
	})
	require.True(t, mongoerr.Is(err, 171), "%v", err)
	require.Equal(t, "cannot index parallel arrays [b] [a]", mongoerr.As(err).Msg)
}
