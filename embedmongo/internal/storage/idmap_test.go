package storage

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestIDMapAgreesWithTree runs random inserts, deletes, replaces and rolled-back
// transactions over _id values of several types (strings and symbols of the
// same content collide, as under Compare) and checks after each that the _id
// index's string map answers every lookup as a search of its tree does, and
// that duplicates are refused exactly when the tree holds an equal key.
func TestIDMapAgreesWithTree(t *testing.T) {
	c := mustColl(t, openMem(t), "ids")
	ix := c.indexes[0]
	require.NotNil(t, ix.byString)
	pool := []any{"a", "b", "c", "", bson.Symbol("a"), bson.Symbol("z"), int32(1), int64(1), 1.0, "1"}
	rng := rand.New(rand.NewPCG(1, 2))
	errRollback := errors.New("roll back")
	for step := range 3000 {
		v := pool[rng.IntN(len(pool))]
		var treeHas bool
		require.NoError(t, c.Write(func(tx *Tx) error {
			treeHas = len(ix.lookupEqTree(v, nil)) > 0
			return nil
		}))
		switch op := rng.IntN(4); op {
		case 0, 1: // insert, refused when an equal _id exists
			err := c.Write(func(tx *Tx) error {
				_, err := tx.Insert(bson.D{{Key: "_id", Value: v}, {Key: "n", Value: int32(step)}})
				return err
			})
			if treeHas {
				require.Error(t, err, "step %d: insert of %#v over an equal _id", step, v)
			} else {
				require.NoError(t, err, "step %d: insert of %#v", step, v)
			}
		case 2: // delete, or replace, whatever it finds
			require.NoError(t, c.Write(func(tx *Tx) error {
				docs, err := tx.Find(bson.D{{Key: "_id", Value: v}}, all)
				if err != nil || len(docs) == 0 {
					return err
				}
				if rng.IntN(2) == 0 {
					return tx.Delete(docs[0].ID)
				}
				return tx.Replace(docs[0].ID, bson.D{{Key: "_id", Value: docs[0].Doc[0].Value}, {Key: "n", Value: int32(-step)}})
			}))
		case 3: // changes undone by a failing transaction
			err := c.Write(func(tx *Tx) error {
				if docs, _ := tx.Find(bson.D{{Key: "_id", Value: v}}, all); len(docs) > 0 {
					_ = tx.Delete(docs[0].ID)
				} else {
					_, _ = tx.Insert(bson.D{{Key: "_id", Value: v}})
				}
				return errRollback
			})
			require.ErrorIs(t, err, errRollback)
		}
		for _, p := range pool {
			got, want := ix.lookupEq(p, nil), ix.lookupEqTree(p, nil)
			slices.Sort(got)
			slices.Sort(want)
			require.Equal(t, want, got, "step %d: lookup of %#v", step, p)
		}
	}
	require.NotEmpty(t, ix.byString)
}
