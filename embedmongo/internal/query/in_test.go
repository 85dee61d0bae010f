package query

import (
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A long $in looks strings up in a set; it must answer as the equalities it stands for, $or'ed:
// strings and symbols of one content alike, numbers across types, arrays by element and whole,
// regexes, and (with a collation) the collation's equality rather than the set's.
func TestLongInMatchesAsItsEqualities(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	pool := []any{"a", "b", "ab", "", bson.Symbol("b"), bson.Symbol("zz"), int32(1), int64(2), 2.0, 3.5,
		nil, true, bson.A{"a", int32(1)}, bson.D{{Key: "k", Value: "a"}}, "A", "zz"}
	pick := func() any { return pool[rng.IntN(len(pool))] }
	for _, opts := range []Options{{}, {Collation: parseCollation(t, `{"locale": "en_US", "strength": 2}`)}} {
		for range 300 {
			list := bson.A{}
			for n := minInSet + rng.IntN(4); n > 0; n-- {
				list = append(list, pick())
			}
			if rng.IntN(4) == 0 {
				list = append(list, bson.Regex{Pattern: "^z"})
			}
			var ors bson.A
			for _, x := range list {
				if re, ok := x.(bson.Regex); ok {
					ors = append(ors, bson.D{{Key: "x", Value: re}})
				} else {
					ors = append(ors, bson.D{{Key: "x", Value: bson.D{{Key: "$eq", Value: x}}}})
				}
			}
			in, err := Compile(bson.D{{Key: "x", Value: bson.D{{Key: "$in", Value: list}}}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			or, err := Compile(bson.D{{Key: "$or", Value: ors}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				d := bson.D{{Key: "x", Value: pick()}}
				if rng.IntN(3) == 0 {
					d = bson.D{{Key: "x", Value: bson.A{pick(), pick()}}}
				}
				got, err1 := in.Match(d)
				want, err2 := or.Match(d)
				if err1 != nil || err2 != nil || got != want {
					t.Fatalf("$in %v on %v = %v (%v); the $or of its equalities says %v (%v)", list, d, got, err1, want, err2)
				}
			}
		}
	}
}
