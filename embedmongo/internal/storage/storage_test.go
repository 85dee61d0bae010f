package storage

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestInsertFindReplaceDelete(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	rids := insertAll(t, c,
		bson.D{{Key: "_id", Value: int32(3)}, {Key: "x", Value: "a"}},
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "x", Value: "b"}},
		bson.D{{Key: "_id", Value: int32(2)}, {Key: "x", Value: "c"}},
	)
	require.Equal(t, []RecordID{1, 2, 3}, rids)
	require.EqualValues(t, 3, c.Count())

	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, []any{int32(3), int32(1), int32(2)}, ids(docs), "natural order is insertion order")

	// Results are copies: changing one does not change the store.
	docs[0].Doc[1].Value = "changed"
	again, err := c.Find(bson.D{{Key: "_id", Value: int32(3)}}, refMatch(bson.D{{Key: "_id", Value: int32(3)}}))
	require.NoError(t, err)
	require.Equal(t, "a", again[0].Doc[1].Value)

	require.NoError(t, c.Write(func(tx *Tx) error {
		if err := tx.Replace(rids[1], bson.D{{Key: "_id", Value: int32(1)}, {Key: "x", Value: "B"}}); err != nil {
			return err
		}
		return tx.Delete(rids[0])
	}))
	docs, err = c.Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, []any{int32(1), int32(2)}, ids(docs))
	require.Equal(t, "B", docs[0].Doc[1].Value)
	require.Equal(t, rids[1], docs[0].ID, "a replaced document keeps its place")

	sizeBefore := c.DataSize()
	require.Positive(t, sizeBefore)
	require.NoError(t, c.Write(func(tx *Tx) error { return tx.Delete(rids[1]) }))
	require.Less(t, c.DataSize(), sizeBefore)

	err = c.Write(func(tx *Tx) error { return tx.Delete(rids[0]) })
	require.True(t, mongoerr.Is(err, mongoerr.NoSuchKey), "%v", err)
}

func TestFindLimit(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	for i := range 10 {
		insertAll(t, c, bson.D{{Key: "_id", Value: int32(i)}})
	}
	docs, err := c.FindLimit(nil, all, 3)
	require.NoError(t, err)
	require.Equal(t, []any{int32(0), int32(1), int32(2)}, ids(docs))
}

func TestWriteKeepsSucceededOpsOnFnError(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	insertAll(t, c, bson.D{{Key: "_id", Value: int32(2)}})
	// An ordered insertMany: 1 goes in, 2 is a duplicate, 3 is never tried.
	err := c.Write(func(tx *Tx) error {
		for _, id := range []int32{1, 2, 3} {
			if _, err := tx.Insert(bson.D{{Key: "_id", Value: id}}); err != nil {
				return err
			}
		}
		return nil
	})
	require.True(t, mongoerr.Is(err, mongoerr.DuplicateKey), "%v", err)
	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, []any{int32(2), int32(1)}, ids(docs))
}

func TestWritePanicRollsBack(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	require.Panics(t, func() {
		_ = c.Write(func(tx *Tx) error {
			if _, err := tx.Insert(bson.D{{Key: "_id", Value: int32(1)}}); err != nil {
				return err
			}
			panic("boom")
		})
	})
	require.EqualValues(t, 0, c.Count())
	insertAll(t, c, bson.D{{Key: "_id", Value: int32(1)}}) // the _id index was rolled back too
}

func TestCatalog(t *testing.T) {
	s := openMem(t)
	require.NoError(t, s.CreateCollection("b", "x", bson.D{{Key: "capped", Value: false}}))
	err := s.CreateCollection("b", "x", nil)
	require.True(t, mongoerr.Is(err, mongoerr.NamespaceExists), "%v", err)
	_, err = s.CollectionOrCreate("a", "y")
	require.NoError(t, err)
	_, err = s.CollectionOrCreate("b", "w")
	require.NoError(t, err)

	dbs := s.ListDatabases()
	require.Len(t, dbs, 2)
	require.Equal(t, "a", dbs[0].Name)
	require.Equal(t, "b", dbs[1].Name)

	colls := s.ListCollections("b")
	require.Len(t, colls, 2)
	require.Equal(t, "w", colls[0].Name)
	require.Equal(t, "x", colls[1].Name)
	require.Equal(t, bson.D{{Key: "capped", Value: false}}, colls[1].Options)
	require.EqualValues(t, 4, colls[1].UUID.Subtype)
	require.Len(t, colls[1].UUID.Data, 16)
	require.NotEqual(t, colls[0].UUID.Data, colls[1].UUID.Data)

	existed, err := s.DropCollection("b", "x")
	require.NoError(t, err)
	require.True(t, existed)
	existed, err = s.DropCollection("b", "x")
	require.NoError(t, err)
	require.False(t, existed)
	require.Nil(t, s.Collection("b", "x"))

	require.NoError(t, s.DropDatabase("b"))
	dbs = s.ListDatabases()
	require.Len(t, dbs, 1, "a database without collections is not listed")
	require.Empty(t, s.ListCollections("b"))
}

func TestDroppedCollection(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	insertAll(t, c, bson.D{{Key: "_id", Value: int32(1)}})
	_, err := s.DropCollection("db", "c")
	require.NoError(t, err)

	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	require.Empty(t, docs)
	err = c.Write(func(tx *Tx) error { _, err := tx.Insert(bson.D{{Key: "_id", Value: int32(2)}}); return err })
	require.True(t, mongoerr.Is(err, mongoerr.NamespaceNotFound), "%v", err)
	_, err = c.CreateIndexes([]IndexSpec{{Key: bson.D{{Key: "a", Value: int32(1)}}}})
	require.True(t, mongoerr.Is(err, mongoerr.NamespaceNotFound), "%v", err)

	// A new collection of the same name starts empty.
	c2 := mustColl(t, s, "c")
	require.NotSame(t, c, c2)
	require.EqualValues(t, 0, c2.Count())
}

func TestTxUsedAfterWrite(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	var leaked *Tx
	require.NoError(t, c.Write(func(tx *Tx) error { leaked = tx; return nil }))
	_, err := leaked.Insert(bson.D{{Key: "_id", Value: int32(1)}})
	require.Error(t, err)
}

func TestInsertRequiresID(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	err := c.Write(func(tx *Tx) error { _, err := tx.Insert(bson.D{{Key: "a", Value: int32(1)}}); return err })
	require.Error(t, err)
}

func TestClosedStore(t *testing.T) {
	s, err := Open(Options{})
	require.NoError(t, err)
	c := mustColl(t, s, "c")
	require.NoError(t, s.Close())
	err = c.Write(func(tx *Tx) error { return nil })
	require.True(t, mongoerr.Is(err, mongoerr.ShutdownInProgress), "%v", err)
	_, err = s.CollectionOrCreate("db", "d")
	require.True(t, mongoerr.Is(err, mongoerr.ShutdownInProgress), "%v", err)
}

// TestConcurrentWriters checks, under -race, that concurrent read-modify-writes inside Write
// are atomic and that reads, drops and creates interleave without panics.
func TestConcurrentWriters(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "counter")
	insertAll(t, c, bson.D{{Key: "_id", Value: "n"}, {Key: "v", Value: int64(0)}})
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				err := c.Write(func(tx *Tx) error {
					docs, err := tx.Find(bson.D{{Key: "_id", Value: "n"}}, refMatch(bson.D{{Key: "_id", Value: "n"}}))
					if err != nil || len(docs) != 1 {
						return fmt.Errorf("find: %v %d", err, len(docs))
					}
					v := docs[0].Doc[1].Value.(int64)
					return tx.Replace(docs[0].ID, bson.D{{Key: "_id", Value: "n"}, {Key: "v", Value: v + 1}})
				})
				if err != nil {
					t.Error(err)
					return
				}
				// Churn another collection alongside.
				other := fmt.Sprintf("tmp%d", w)
				oc, err := s.CollectionOrCreate("db", other)
				if err != nil {
					t.Error(err)
					return
				}
				err = oc.Write(func(tx *Tx) error { _, err := tx.Insert(bson.D{{Key: "_id", Value: int32(i)}}); return err })
				if err != nil && !mongoerr.Is(err, mongoerr.NamespaceNotFound) {
					t.Error(err)
					return
				}
				if _, err := oc.Find(nil, all); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if _, err := s.DropCollection("db", other); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, int64(workers*rounds), docs[0].Doc[1].Value)
}

func TestErrorsAreServerErrors(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	insertAll(t, c, bson.D{{Key: "_id", Value: int32(1)}})
	err := c.Write(func(tx *Tx) error { _, err := tx.Insert(bson.D{{Key: "_id", Value: 1.0}}); return err })
	var me *mongoerr.Error
	require.True(t, errors.As(err, &me))
	require.Equal(t, "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 1.0 }", me.Msg)
	require.Equal(t, bson.D{
		{Key: "keyPattern", Value: bson.D{{Key: "_id", Value: int32(1)}}},
		{Key: "keyValue", Value: bson.D{{Key: "_id", Value: 1.0}}},
	}, me.Extra)
}

func TestResultsDoNotAliasStorage(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	in := bson.D{{Key: "_id", Value: int32(1)}, {Key: "b", Value: bson.Binary{Data: []byte{1, 2}}},
		{Key: "a", Value: bson.A{bson.D{{Key: "x", Value: "y"}}}}}
	insertAll(t, c, in)
	// Neither the inserted document nor a result shares memory with the stored copy.
	in[1].Value.(bson.Binary).Data[0] = 7
	docs, err := c.Find(nil, all)
	require.NoError(t, err)
	docs[0].Doc[1].Value.(bson.Binary).Data[1] = 8
	docs[0].Doc[2].Value.(bson.A)[0].(bson.D)[0].Value = "changed"
	docs, err = c.Find(nil, all)
	require.NoError(t, err)
	require.Equal(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "b", Value: bson.Binary{Data: []byte{1, 2}}},
		{Key: "a", Value: bson.A{bson.D{{Key: "x", Value: "y"}}}}}, docs[0].Doc)
}
