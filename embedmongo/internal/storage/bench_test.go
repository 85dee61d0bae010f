package storage

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

var big = flag.Bool("storage.big", false, "run the 1,000,000-document benchmarks and memory test")

// accountDoc is a ~200-byte document shaped like the bank's accounts.
func accountDoc(i int) bson.D {
	var oid bson.ObjectID
	copy(oid[:], fmt.Sprintf("%012d", i))
	return bson.D{
		{Key: "_id", Value: oid},
		{Key: "acct", Value: fmt.Sprintf("ACC-%010d", i)},
		{Key: "owner", Value: fmt.Sprintf("customer number %d", i)},
		{Key: "balance", Value: int64(i * 100)},
		{Key: "currency", Value: "EUR"},
		{Key: "createdAt", Value: bson.DateTime(1_700_000_000_000 + int64(i))},
		{Key: "note", Value: strings.Repeat("x", 64)},
		{Key: "version", Value: int32(1)},
	}
}

func fillAccounts(tb testing.TB, c *Collection, n int) {
	const chunk = 10_000
	for start := 0; start < n; start += chunk {
		err := c.Write(func(tx *Tx) error {
			for i := start; i < start+chunk && i < n; i++ {
				if _, err := tx.Insert(accountDoc(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

var lookupColls sync.Map // size → *Collection, built once per process

func accountsOf(b *testing.B, n int) *Collection {
	if c, ok := lookupColls.Load(n); ok {
		return c.(*Collection)
	}
	s, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, _ := s.CollectionOrCreate("bank", "accounts")
	if _, err := c.CreateIndexes([]IndexSpec{{Key: bson.D{{Key: "acct", Value: int32(1)}}, Unique: true}}); err != nil {
		b.Fatal(err)
	}
	fillAccounts(b, c, n)
	lookupColls.Store(n, c)
	return c
}

// BenchmarkIndexedLookup finds one account by a unique secondary index: the cost must stay
// flat as the collection grows (run with -storage.big for 1,000,000 documents).
func BenchmarkIndexedLookup(b *testing.B) {
	sizes := []int{1_000, 100_000}
	if *big {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			c := accountsOf(b, n)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				acct := fmt.Sprintf("ACC-%010d", (i*7919)%n)
				filter := bson.D{{Key: "acct", Value: acct}}
				docs, err := c.Find(filter, func(d bson.D) (bool, error) {
					v, _ := bsonkit.Get(d, "acct")
					return v == acct, nil
				})
				if err != nil || len(docs) != 1 {
					b.Fatalf("%v %d", err, len(docs))
				}
			}
		})
	}
}

// BenchmarkDurableWrites measures fsync'd single-document writes per second with concurrent
// writers on the local disk: Pebble's WAL group commit lets them share fsyncs.
func BenchmarkDurableWrites(b *testing.B) {
	for _, writers := range []int{1, 32} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := Open(Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			c, _ := s.CollectionOrCreate("bank", "ledger")
			var next atomic.Int64
			b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1))
					err := c.Write(func(tx *Tx) error {
						_, err := tx.Insert(accountDoc(i))
						return err
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
		})
	}
}

// TestMemoryMillionDocs reports the heap a million ~200-byte documents take with their _id
// index and one unique secondary index (-storage.big), with ObjectId _ids and with string
// (UUID-like) _ids, which the _id index also keeps in its map.
func TestMemoryMillionDocs(t *testing.T) {
	if !*big {
		t.Skip("run with -storage.big")
	}
	for _, c := range []struct {
		name string
		id   func(int) any
	}{
		{"objectid", nil},
		{"string", func(i int) any { return fmt.Sprintf("6f1c2a52-4c0e-4d8f-9a53-%012d", i) }},
	} {
		t.Run(c.name, func(t *testing.T) { memoryMillionDocs(t, c.id) })
	}
}

func memoryMillionDocs(t *testing.T, id func(int) any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := openMem(t)
	c := mustColl(t, s, "accounts")
	if _, err := c.CreateIndexes([]IndexSpec{{Key: bson.D{{Key: "acct", Value: int32(1)}}, Unique: true}}); err != nil {
		t.Fatal(err)
	}
	const n = 1_000_000
	if id == nil {
		fillAccounts(t, c, n)
	} else {
		for start := 0; start < n; start += 10_000 {
			require.NoError(t, c.Write(func(tx *Tx) error {
				for i := start; i < start+10_000; i++ {
					d := accountDoc(i)
					d[0].Value = id(i)
					if _, err := tx.Insert(d); err != nil {
						return err
					}
				}
				return nil
			}))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
	t.Logf("1,000,000 docs, %d bytes of BSON: heap %.0f MiB (Sys %.0f MiB)",
		c.DataSize(), heap, float64(after.Sys)/(1<<20))
	if heap > 700 {
		t.Errorf("heap %.0f MiB for a million documents", heap)
	}
	runtime.KeepAlive(c)
}
