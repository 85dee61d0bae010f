package bench

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestBaselines checks that each baseline does what the figures claim: the
// fail-fast lock refuses on either lock without waiting and leaves no lock
// behind, both refuse an overdraft, and money moves exactly once otherwise.
func TestBaselines(t *testing.T) {
	eng := startEngine(t)
	defer eng.close()
	type transferFunc func(context.Context, *mongo.Collection, string, string, int64) (outcome, error)
	for _, tc := range []struct {
		name     string
		transfer transferFunc
		locked   []int // accounts whose lock is held by someone else
		amount   int64
		want     outcome
		moved    bool
	}{
		{"fail-fast ok", failFastTransfer, nil, 10, ok, true},
		{"fail-fast source locked", failFastTransfer, []int{0}, 10, busy, false},
		{"fail-fast destination locked", failFastTransfer, []int{1}, 10, busy, false},
		{"fail-fast overdraft", failFastTransfer, nil, initialBalance + 1, failed, false},
		{"inc ok", incTransfer, nil, 10, ok, true},
		{"inc overdraft", incTransfer, nil, initialBalance + 1, failed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			coll := eng.client.Database("unit").Collection(strings.ReplaceAll(tc.name, " ", "_"))
			seedPlain(t, coll, 2)
			for _, i := range tc.locked {
				if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: plainID(i)}},
					bson.D{{Key: "$set", Value: bson.D{{Key: "locked", Value: true}}}}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := tc.transfer(ctx, coll, plainID(0), plainID(1), tc.amount)
			if err != nil || got != tc.want {
				t.Fatalf("outcome %v, %v; want %v", got, err, tc.want)
			}
			wantFrom, wantTo := initialBalance, initialBalance
			if tc.moved {
				wantFrom, wantTo = initialBalance-tc.amount, initialBalance+tc.amount
			}
			for i, want := range []int64{wantFrom, wantTo} {
				var a plainAccount
				if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: plainID(i)}}).Decode(&a); err != nil {
					t.Fatal(err)
				}
				wantLocked := false
				for _, l := range tc.locked {
					wantLocked = wantLocked || l == i
				}
				if a.Balance != want || a.Locked != wantLocked {
					t.Errorf("account %d: balance %d locked %v, want %d %v", i, a.Balance, a.Locked, want, wantLocked)
				}
			}
		})
	}
}

func TestPair(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 10_000} {
		seen := map[[2]int]bool{}
		for range 2000 {
			i, j := pair(rng, n)
			if i == j || i < 0 || j < 0 || i >= n || j >= n {
				t.Fatalf("pair(%d) = %d, %d", n, i, j)
			}
			seen[[2]int{i, j}] = true
		}
		if n == 2 && len(seen) != 2 {
			t.Errorf("pair(2) gave %d of the 2 directions", len(seen))
		}
	}
}
