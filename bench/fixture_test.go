package bench

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/bankd/bankd/embedmongo"
)

// The loads of issue 7: 64 clients on one hot pair, or spread over 10,000 accounts.
const (
	clients         = 64
	hotAccounts     = 2
	uniformAccounts = 10_000
	// initialBalance is large enough that no run drains an account: the
	// benchmarks measure moving money, not refusing it.
	initialBalance = int64(1) << 40
	opTimeout      = 30 * time.Second
)

type load struct {
	name     string
	accounts int
}

var loads = []load{{"hot", hotAccounts}, {"uniform", uniformAccounts}}

// engine is an embedded engine on its own data directory (durable writes,
// as bankd runs it) and a driver client with bankd's pool size.
type engine struct {
	srv    *embedmongo.Server
	client *mongo.Client
	dir    string
}

func startEngine(b testing.TB) *engine {
	b.Helper()
	dir, err := os.MkdirTemp("", "bankd-bench-*")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := embedmongo.Start(context.Background(), embedmongo.Options{Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		b.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()).SetMaxPoolSize(256))
	if err != nil {
		srv.Close()
		os.RemoveAll(dir)
		b.Fatal(err)
	}
	return &engine{srv: srv, client: client, dir: dir}
}

func (e *engine) close() {
	_ = e.client.Disconnect(context.Background())
	_ = e.srv.Close()
	_ = os.RemoveAll(e.dir)
}

// outcome is how one transfer attempt ended.
type outcome int

const (
	ok     outcome = iota
	busy           // refused for contention: "locked", account_busy
	failed         // refused by a rule (insufficient funds, ...)
	nOutcomes
)

// op makes one transfer attempt; worker is the client's index, rng its own.
type op func(ctx context.Context, worker int, rng *rand.Rand) (outcome, error)

// runClients makes b.N attempts with op from exactly `clients` goroutines
// (not RunParallel, whose goroutine count depends on GOMAXPROCS) and reports
// transfers/s (completed), attempts/s, success_% and latency percentiles.
func runClients(b *testing.B, op op) {
	b.Helper()
	var (
		next   atomic.Int64
		counts [nOutcomes]atomic.Int64
		lat    = make([]time.Duration, b.N)
		wg     sync.WaitGroup
		errMu  sync.Mutex
		first  error
	)
	b.ResetTimer()
	start := time.Now()
	for w := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 0x6a09e667f3bcc908))
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				t0 := time.Now()
				o, err := op(ctx, w, rng)
				lat[i] = time.Since(t0)
				cancel()
				if err != nil {
					errMu.Lock()
					if first == nil {
						first = err
					}
					errMu.Unlock()
					next.Store(int64(b.N)) // stop everyone: the figures would be wrong
					return
				}
				counts[o].Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if first != nil {
		b.Fatal(first)
	}
	okN := counts[ok].Load()
	attempts := okN + counts[busy].Load() + counts[failed].Load()
	secs := elapsed.Seconds()
	b.ReportMetric(float64(okN)/secs, "transfers/s")
	b.ReportMetric(float64(attempts)/secs, "attempts/s")
	b.ReportMetric(100*float64(okN)/float64(attempts), "success_%")
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
	b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99_ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pair picks two distinct accounts of n uniformly, in random order.
func pair(rng *rand.Rand, n int) (int, int) {
	i := rng.IntN(n)
	return i, (i + 1 + rng.IntN(n-1)) % n
}
