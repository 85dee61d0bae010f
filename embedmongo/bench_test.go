package embedmongo

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Benchmarks over the official driver, each beside the bare loopback round trip so the engine's
// own cost is visible. Run them side by side in one go (the figures in the package README come
// from this command):
//
//	go test -run '^$' -bench . -benchtime 3s ./embedmongo/

// parallelism sets RunParallel to about n goroutines on this machine.
func parallelism(b *testing.B, n int) {
	b.SetParallelism(max(1, n/runtime.GOMAXPROCS(0)))
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkLoopbackRoundTrip is the floor: a 120-byte request and reply over loopback TCP with
// a trivial echo server, no database work at all.
func BenchmarkLoopbackRoundTrip(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 120)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	parallelism(b, 16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		buf := make([]byte, 120)
		for pb.Next() {
			if _, err := c.Write(buf); err != nil {
				b.Error(err)
				return
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b)
}

func seedAccounts(b *testing.B, coll *mongo.Collection, n int) {
	b.Helper()
	ctx := context.Background()
	const batch = 10_000
	for start := 0; start < n; start += batch {
		docs := make([]any, 0, batch)
		for i := start; i < min(n, start+batch); i++ {
			docs = append(docs, accountDoc(i))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
}

// accountDoc is an account-sized document (≈ 200 bytes of BSON).
func accountDoc(i int) bson.D {
	return bson.D{
		{Key: "_id", Value: fmt.Sprintf("acct-%08d", i)},
		{Key: "owner", Value: fmt.Sprintf("owner-%d", i)},
		{Key: "currency", Value: "USD"},
		{Key: "balance", Value: int64(1_000_000)},
		{Key: "status", Value: "active"},
		{Key: "lockOwner", Value: nil},
		{Key: "fencingToken", Value: int64(0)},
		{Key: "pending", Value: bson.A{}},
		{Key: "createdAt", Value: bson.DateTime(1_700_000_000_000)},
		{Key: "memo", Value: strings.Repeat("x", 40)},
	}
}

func benchWrites(b *testing.B, opts Options, goroutines int, op func(ctx context.Context, coll *mongo.Collection, id string) error) {
	_, client := startEngine(b, opts)
	coll := client.Database("bench").Collection("accounts")
	seedAccounts(b, coll, 1000)
	var next atomic.Int64
	parallelism(b, goroutines)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		// Each goroutine works on its own documents: this measures the engine, not contention.
		base := int(next.Add(1)) * 10
		i := 0
		for pb.Next() {
			id := fmt.Sprintf("acct-%08d", (base+i%10)%1000)
			i++
			if err := op(ctx, coll, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b)
}

func updateOne(ctx context.Context, coll *mongo.Collection, id string) error {
	_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: int64(1)}}}})
	return err
}

func findOneAndUpdate(ctx context.Context, coll *mongo.Collection, id string) error {
	return coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "fencingToken", Value: int64(1)}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Err()
}

func BenchmarkUpdateOneMemory16(b *testing.B) {
	benchWrites(b, Options{}, 16, updateOne)
}

func BenchmarkFindOneAndUpdateMemory16(b *testing.B) {
	benchWrites(b, Options{}, 16, findOneAndUpdate)
}

func BenchmarkUpdateOneDurable32(b *testing.B) {
	benchWrites(b, Options{Dir: b.TempDir()}, 32, updateOne)
}

// BenchmarkIndexedLookup shows an _id and a secondary-index equality lookup staying flat as the
// collection grows.
func BenchmarkIndexedLookup(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("large collection")
			}
			_, client := startEngine(b, Options{})
			coll := client.Database("bench").Collection("accounts")
			if _, err := coll.Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "owner", Value: 1}}}); err != nil {
				b.Fatal(err)
			}
			seedAccounts(b, coll, n)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var doc bson.Raw
				if err := coll.FindOne(ctx, bson.D{{Key: "owner", Value: fmt.Sprintf("owner-%d", i%n)}}).Decode(&doc); err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b)
		})
	}
}

// TestMemoryForOneMillionAccounts reports the heap held by 1,000,000 account-sized documents
// (target: under 1 GiB). It is skipped unless EMBEDMONGO_MEMTEST=1, since loading takes a while.
func TestMemoryForOneMillionAccounts(t *testing.T) {
	if testing.Short() || !envSet("EMBEDMONGO_MEMTEST") {
		t.Skip("set EMBEDMONGO_MEMTEST=1 to run")
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, client := startEngine(t, Options{})
	coll := client.Database("bench").Collection("accounts")
	ctx := context.Background()
	const n, batch = 1_000_000, 10_000
	for start := 0; start < n; start += batch {
		docs := make([]any, 0, batch)
		for i := start; i < start+batch; i++ {
			docs = append(docs, accountDoc(i))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := after.HeapInuse - before.HeapInuse
	raw, _ := bson.Marshal(accountDoc(1))
	t.Logf("1,000,000 documents of %d bytes: heap in use grew by %d MiB", len(raw), heap>>20)
	if heap > 1<<30 {
		t.Errorf("heap %d MiB, want < 1024 MiB", heap>>20)
	}
}

// BenchmarkLeaseCommand is bankd's per-account lease write as one update command of 64
// conditional statements (filter: the _id and a free or expired lease by the database clock;
// update: owner, time, duration, token + 1), on a durable collection of 10,000 accounts. ns/op
// is per statement.
func BenchmarkLeaseCommand(b *testing.B) {
	_, client := startEngine(b, Options{Dir: b.TempDir()})
	coll := client.Database("bench").Collection("accounts")
	seedAccounts(b, coll, 10_000)
	ctx := context.Background()
	const perCommand = 64
	free := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "lockOwner", Value: nil}},
		bson.D{{Key: "$expr", Value: bson.D{{Key: "$lte", Value: bson.A{
			bson.D{{Key: "$add", Value: bson.A{"$lockTimestamp", "$lockDuration"}}}, "$$NOW"}}}}},
	}}}
	b.ResetTimer()
	for done := 0; done < b.N; done += perCommand {
		stmts := bson.A{}
		for i := done; i < done+perCommand; i++ {
			stmts = append(stmts, bson.D{
				{Key: "q", Value: append(bson.D{{Key: "_id", Value: fmt.Sprintf("acct-%08d", (i*7919)%10_000)}}, free...)},
				{Key: "u", Value: bson.D{
					// lockOwner stays null, so that the next round can take it again.
					{Key: "$set", Value: bson.D{{Key: "lockOwner", Value: nil}, {Key: "lockDuration", Value: int64(30_000)}}},
					{Key: "$currentDate", Value: bson.D{{Key: "lockTimestamp", Value: true}}},
					{Key: "$inc", Value: bson.D{{Key: "fencingToken", Value: int64(1)}}},
				}},
			})
		}
		var reply struct {
			N int `bson:"n"`
		}
		if err := client.Database("bench").RunCommand(ctx, bson.D{{Key: "update", Value: "accounts"}, {Key: "updates", Value: stmts}}).Decode(&reply); err != nil || reply.N != perCommand {
			b.Fatalf("leased %d of %d: %v", reply.N, perCommand, err)
		}
	}
	reportRate(b)
}
