package storage

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestCandidatesUseIndexes(t *testing.T) {
	s := openMem(t)
	c := mustColl(t, s, "c")
	_, err := c.CreateIndexes([]IndexSpec{
		{Key: key("a", int32(1))},
		{Key: key("u", int32(1)), Unique: true},
		{Key: key("p", int32(1)), PartialFilterExpression: key("p", key("$gt", int32(0)))},
	})
	require.NoError(t, err)
	for i := range 100 {
		insertAll(t, c, doc(int32(i), "a", int32(i%10), "u", int32(i), "p", int32(i)))
	}
	tests := []struct {
		name   string
		filter bson.D
		used   bool
		count  int // candidates when used
	}{
		{"_id equality", key("_id", int32(5)), true, 1},
		{"_id $in", key("_id", key("$in", bson.A{int32(1), int32(2), int32(500)})), true, 2},
		{"secondary equality", key("a", int32(3)), true, 10},
		{"equality prefers _id", key("a", int32(3), "_id", int32(13)), true, 1},
		{"equality prefers unique over plain", key("a", int32(3), "u", int32(13)), true, 1},
		{"inside $and", key("$and", bson.A{key("x", int32(1)), key("u", int32(7))}), true, 1},
		{"range", key("u", key("$gte", int32(10), "$lt", int32(20))), true, 10},
		{"range exclusive low", key("u", key("$gt", int32(95))), true, 4},
		{"$eq", key("a", key("$eq", int32(1))), true, 10},
		{"no index on field", key("zzz", int32(1)), false, 0},
		{"null equality scans", key("a", nil), false, 0},
		{"regex scans", key("a", bson.Regex{Pattern: "x"}), false, 0},
		{"$or scans", key("$or", bson.A{key("a", int32(1)), key("a", int32(2))}), false, 0},
		{"partial index is not used", key("p", int32(5)), false, 0},
		{"$ne scans", key("a", key("$ne", int32(1))), false, 0},
		{"empty", bson.D{}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, used := c.candidates(tt.filter)
			require.Equal(t, tt.used, used)
			if used {
				require.Len(t, got, tt.count)
				require.True(t, slices.IsSorted(got))
			}
		})
	}
}

// TestCandidatesAreSuperset compares indexed finds with full scans on random documents and
// filters: index use must never drop a match, and must keep natural order.
func TestCandidatesAreSuperset(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []any{
		int32(1), int64(2), 2.0, 2.5, math.NaN(), math.Inf(-1), "a", "b", "", true, false, nil,
		bson.A{int32(1), int32(5)}, bson.A{"a", int32(2)}, bson.A{}, bson.A{bson.A{int32(1)}},
		bson.D{{Key: "x", Value: int32(1)}}, bson.DateTime(1000), bson.DateTime(-5),
		bson.ObjectID{1}, bson.Timestamp{T: 1, I: 1}, bson.Binary{Data: []byte{1}},
	}
	randVal := func() any { return values[rng.IntN(len(values))] }

	s := openMem(t)
	indexed := mustColl(t, s, "indexed")
	_, err := indexed.CreateIndexes([]IndexSpec{
		{Key: key("a", int32(1))},
		{Key: key("b", int32(-1), "a", int32(1))},
		{Key: key("c", int32(1)), Sparse: true},
	})
	require.NoError(t, err)
	for i := range 300 {
		d := bson.D{{Key: "_id", Value: int32(i)}}
		for _, f := range []string{"a", "b", "c"} {
			if rng.IntN(4) > 0 {
				d = append(d, bson.E{Key: f, Value: randVal()})
			}
		}
		err := indexed.Write(func(tx *Tx) error { _, err := tx.Insert(d); return err })
		if !mongoerr.Is(err, 171) { // parallel arrays on {b, a} are refused, as by mongod
			require.NoError(t, err)
		}
	}
	ops := []string{"", "$eq", "$in", "$gt", "$gte", "$lt", "$lte"}
	for range 3000 {
		var filter bson.D
		for range 1 + rng.IntN(2) {
			f := []string{"a", "b", "c", "_id"}[rng.IntN(4)]
			var v any
			switch op := ops[rng.IntN(len(ops))]; op {
			case "":
				v = randVal()
			case "$in":
				v = key("$in", bson.A{randVal(), randVal()})
			default:
				v = key(op, randVal())
				if rng.IntN(2) == 0 { // a second bound
					v = append(v.(bson.D), bson.E{Key: ops[3+rng.IntN(4)], Value: randVal()})
				}
			}
			filter = append(filter, bson.E{Key: f, Value: v})
		}
		if rng.IntN(4) == 0 {
			filter = key("$and", bson.A{filter})
		}
		match := refMatch(filter)
		got, err := indexed.Find(filter, match)
		require.NoError(t, err)
		var want []Doc
		indexed.docs.Ascend(func(r record) bool {
			d, _ := r.decode()
			if ok, _ := match(d); ok {
				want = append(want, Doc{ID: r.id, Doc: d})
			}
			return true
		})
		require.Equal(t, ids(want), ids(got), "filter %v", filter)
	}
}
