package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// plainAccount is the baselines' account: a balance and the classic design's lock flag.
type plainAccount struct {
	ID      string `bson:"_id"`
	Balance int64  `bson:"balance"`
	Locked  bool   `bson:"locked"`
}

func plainID(i int) string { return fmt.Sprintf("acct-%05d", i) }

// seedPlain inserts n funded, unlocked accounts into coll.
func seedPlain(b testing.TB, coll *mongo.Collection, n int) {
	b.Helper()
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		docs := make([]any, 0, batch)
		for i := lo; i < min(n, lo+batch); i++ {
			docs = append(docs, plainAccount{ID: plainID(i), Balance: initialBalance})
		}
		if _, err := coll.InsertMany(context.Background(), docs); err != nil {
			b.Fatal(err)
		}
	}
}

// sumPlain is the total balance of coll: the baselines must conserve money too.
func sumPlain(b testing.TB, coll *mongo.Collection) int64 {
	b.Helper()
	cur, err := coll.Aggregate(context.Background(), mongo.Pipeline{
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "sum", Value: bson.D{{Key: "$sum", Value: "$balance"}}}}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	var out []struct {
		Sum int64 `bson:"sum"`
	}
	if err := cur.All(context.Background(), &out); err != nil || len(out) != 1 {
		b.Fatalf("sum of balances: %v (%d rows)", err, len(out))
	}
	return out[0].Sum
}

// baseline runs one transfer implementation under each load on its own engine,
// and checks afterwards that the balances still sum to what was deposited.
func baseline(b *testing.B, transfer func(ctx context.Context, coll *mongo.Collection, from, to string, amount int64) (outcome, error)) {
	for _, l := range loads {
		var (
			eng  *engine
			coll *mongo.Collection
		)
		b.Run(l.name, func(b *testing.B) {
			if eng == nil {
				eng = startEngine(b)
				coll = eng.client.Database("baseline").Collection("accounts")
				seedPlain(b, coll, l.accounts)
			}
			runClients(b, func(ctx context.Context, _ int, rng *rand.Rand) (outcome, error) {
				i, j := pair(rng, l.accounts)
				return transfer(ctx, coll, plainID(i), plainID(j), 1+rng.Int64N(100))
			})
		})
		if eng != nil {
			if got, want := sumPlain(b, coll), initialBalance*int64(l.accounts); got != want {
				b.Errorf("%s: balances sum to %d, want %d", l.name, got, want)
			}
			eng.close()
		}
	}
}

// BenchmarkFailFast is the classic design: each account lock is tried once
// with findOneAndUpdate({_id, locked: false} → {locked: true}); a transfer
// that finds either lock taken answers "locked" at once, as that design's API
// did. success_% is the share of attempts that moved money.
func BenchmarkFailFast(b *testing.B) {
	baseline(b, failFastTransfer)
}

func failFastTransfer(ctx context.Context, coll *mongo.Collection, from, to string, amount int64) (outcome, error) {
	first, second := from, to
	if second < first { // a fixed order, as the classic design had
		first, second = second, first
	}
	a, err := tryLock(ctx, coll, first)
	if err != nil || a == nil {
		return busy, err
	}
	defer unlock(context.WithoutCancel(ctx), coll, first)
	c, err := tryLock(ctx, coll, second)
	if err != nil || c == nil {
		return busy, err
	}
	defer unlock(context.WithoutCancel(ctx), coll, second)
	src := a
	if src.ID != from {
		src = c
	}
	if src.Balance < amount {
		return failed, nil
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: from}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: -amount}}}}); err != nil {
		return 0, err
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: to}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: amount}}}}); err != nil {
		return 0, err
	}
	return ok, nil
}

// tryLock takes id's lock if it is free and returns the account, or nil if it is held.
func tryLock(ctx context.Context, coll *mongo.Collection, id string) (*plainAccount, error) {
	var a plainAccount
	err := coll.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "locked", Value: false}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "locked", Value: true}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&a)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

func unlock(ctx context.Context, coll *mongo.Collection, id string) {
	_, _ = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "locked", Value: false}}}})
}

// BenchmarkConditionalInc is the lock-free ceiling: a debit guarded by the
// balance in its filter, then a credit, two single-document writes with no
// lock, journal or idempotency. Not crash-safe (a crash between the two
// writes loses the money), which is what leases and the journal pay for.
func BenchmarkConditionalInc(b *testing.B) {
	baseline(b, incTransfer)
}

func incTransfer(ctx context.Context, coll *mongo.Collection, from, to string, amount int64) (outcome, error) {
	res, err := coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: from}, {Key: "balance", Value: bson.D{{Key: "$gte", Value: amount}}}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: -amount}}}})
	if err != nil {
		return 0, err
	}
	if res.MatchedCount == 0 {
		return failed, nil
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: to}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: amount}}}}); err != nil {
		return 0, err
	}
	return ok, nil
}
