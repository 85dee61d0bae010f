package bulk

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/bankd/bankd/internal/testmongo"
)

// TestUpdateManyReportsEachStatement: matched, upserted and refused
// statements of one command are told apart by index.
func TestUpdateManyReportsEachStatement(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	res, err := UpdateMany(ctx, coll, []Update{
		{Filter: bson.D{{Key: "_id", Value: "a"}}, U: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}},                                     // matches
		{Filter: bson.D{{Key: "_id", Value: "b"}}, U: bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 5}}}}, Upsert: true},                       // inserts
		{Filter: bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: 0}}, U: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, Upsert: true}, // duplicate _id
		{Filter: bson.D{{Key: "_id", Value: "zz"}}, U: bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 1}}}}},                                    // matches nothing
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Matched != 1 || len(res.Upserted) != 1 || !res.Upserted[1] || len(res.Errors) != 1 || res.Errors[2].Code != 11000 {
		t.Fatalf("result %+v: want 1 matched, statement 1 upserted, statement 2 a duplicate key", res)
	}
	if res.OK(4) {
		t.Error("OK with a refused and an unmatched statement")
	}
	var a struct{ N int }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}, options.FindOne()).Decode(&a); err != nil || a.N != 2 {
		t.Errorf("a.n = %d, %v; want 2", a.N, err)
	}
	if _, err := UpdateMany(ctx, coll, make([]Update, MaxStatements+1)); err == nil {
		t.Error("a command over MaxStatements was sent")
	}
}

// TestGroupBatchesConcurrentCalls: every caller gets its own outcome, and
// calls that arrive while a batch runs share the next one.
func TestGroupBatchesConcurrentCalls(t *testing.T) {
	var batches atomic.Int32
	release := make(chan struct{})
	g := Group[int, int]{Run: func(_ context.Context, in []int) []int {
		if batches.Add(1) == 1 {
			<-release // hold the first batch until the others have queued
		}
		out := make([]int, len(in))
		for i, v := range in {
			out[i] = v * 10
		}
		return out
	}}
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]int, 50)
	wg.Add(1)
	go func() { defer wg.Done(); results[0], _ = g.Do(ctx, 0) }()
	for batches.Load() == 0 {
		runtime.Gosched()
	}
	for i := 1; i < 50; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], _ = g.Do(ctx, i) }()
	}
	for {
		g.mu.Lock()
		n := len(g.queue)
		g.mu.Unlock()
		if n == 49 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	for i, r := range results {
		if r != i*10 {
			t.Errorf("call %d got %d", i, r)
		}
	}
	if b := batches.Load(); b != 2 {
		t.Errorf("%d batches, want 2 (one, then the 49 that queued meanwhile)", b)
	}
}
