package embedmongo

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A lease-style findOneAndUpdate — "unlocked, or expired by the server's clock" — must never
// admit two holders at once, however many goroutines race for it.
func TestLeaseNeverAdmitsTwoHolders(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("atomic").Collection("leases")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "acct"}, {Key: "lockOwner", Value: nil}}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "_id", Value: "acct"}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "lockOwner", Value: nil}},
		bson.D{{Key: "$expr", Value: bson.D{{Key: "$lt", Value: bson.A{
			bson.D{{Key: "$add", Value: bson.A{"$lockTimestamp", "$lockDuration"}}}, "$$NOW"}}}}},
	}}}
	const workers, rounds = 24, 40
	var holders, maxHolders, acquired atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(me string) {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				update := mongo.Pipeline{{{Key: "$set", Value: bson.D{
					{Key: "lockOwner", Value: me},
					{Key: "lockTimestamp", Value: "$$NOW"},
					{Key: "lockDuration", Value: int64(10_000)}, // far longer than any hold here
				}}}}
				err := coll.FindOneAndUpdate(ctx, filter, update).Err()
				if errors.Is(err, mongo.ErrNoDocuments) {
					continue // someone else holds it
				}
				if err != nil {
					errs <- err
					return
				}
				acquired.Add(1)
				if n := holders.Add(1); n > maxHolders.Load() {
					maxHolders.Store(n)
				}
				holders.Add(-1)
				res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "acct"}, {Key: "lockOwner", Value: me}},
					bson.D{{Key: "$set", Value: bson.D{{Key: "lockOwner", Value: nil}}}})
				if err != nil {
					errs <- err
					return
				}
				if res.ModifiedCount != 1 {
					errs <- fmt.Errorf("%s lost a lease it held", me)
					return
				}
			}
		}(fmt.Sprintf("w%d", w))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := maxHolders.Load(); got != 1 {
		t.Errorf("max simultaneous holders = %d, want 1", got)
	}
	if acquired.Load() == 0 {
		t.Error("no goroutine ever acquired the lease")
	}
}

// Concurrent $inc on one document never loses an update.
func TestConcurrentIncNeverLosesUpdates(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("atomic").Collection("counters")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: int64(0)}}); err != nil {
		t.Fatal(err)
	}
	const workers, incs = 16, 150
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < incs; i++ {
				if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var doc struct{ N int64 }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.N != workers*incs {
		t.Errorf("n = %d, want %d", doc.N, workers*incs)
	}
}

// Conditional debits ({balance: {$gte: amount}}) never drive a balance below zero, and every
// debit that reported success is reflected exactly once.
func TestConditionalDebitNeverOverdraws(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("atomic").Collection("accounts")
	const start, amount = int64(1000), int64(7)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "balance", Value: start}}); err != nil {
		t.Fatal(err)
	}
	var debits atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				res, err := coll.UpdateOne(ctx,
					bson.D{{Key: "_id", Value: "a"}, {Key: "balance", Value: bson.D{{Key: "$gte", Value: amount}}}},
					bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: -amount}}}})
				if err != nil {
					t.Error(err)
					return
				}
				if res.ModifiedCount == 0 {
					return
				}
				debits.Add(1)
			}
		}()
	}
	wg.Wait()
	var doc struct{ Balance int64 }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Balance < 0 || doc.Balance >= amount {
		t.Errorf("final balance = %d, want in [0, %d)", doc.Balance, amount)
	}
	if got := debits.Load()*amount + doc.Balance; got != start {
		t.Errorf("debits*amount + balance = %d, want %d", got, start)
	}
}

// findOneAndUpdate with upsert from many goroutines on one key creates exactly one document.
func TestConcurrentUpsertCreatesOne(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("atomic").Collection("upserts")
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "key", Value: "k"}},
				bson.D{{Key: "$inc", Value: bson.D{{Key: "hits", Value: 1}}}},
				options.FindOneAndUpdate().SetUpsert(true)).Err()
			if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "key", Value: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Hits int32 }
	if err := coll.FindOne(ctx, bson.D{{Key: "key", Value: "k"}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if n != 1 || doc.Hits != 16 {
		t.Errorf("documents = %d, hits = %d; want 1 and 16", n, doc.Hits)
	}
}
