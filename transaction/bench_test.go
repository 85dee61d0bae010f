package transaction

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
)

// BenchmarkTransfer measures transfers on the test target, 64 goroutines
// at once (-cpu sets GOMAXPROCS, SetParallelism the goroutines per proc):
// among many accounts, and all on one hot pair, with and without hand-off.
func BenchmarkTransfer(b *testing.B) {
	for _, bc := range []struct {
		name     string
		accounts int
		maxHold  time.Duration
	}{
		{"uniform", 200, 0},
		{"hot", 2, 0},
		{"hot-handoff", 2, 2 * time.Second},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db := testmongo.Database(b)
			s, err := New(db, Config{Lock: lock.Config{MaxHold: bc.maxHold, WaitTimeout: time.Minute}})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.EnsureIndexes(context.Background()); err != nil {
				b.Fatal(err)
			}
			ids := make([]string, bc.accounts)
			for i := range ids {
				a, err := s.Accounts().Create(context.Background(), "bench", usd)
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = a.ID
				if _, err := s.Deposit(context.Background(), uuid.NewString(), a.ID, 1<<40, usd, ""); err != nil {
					b.Fatal(err)
				}
			}
			b.SetParallelism(64)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := rand.IntN(len(ids))
					j := (i + 1 + rand.IntN(len(ids)-1)) % len(ids)
					if _, err := s.Transfer(context.Background(), Request{ID: uuid.NewString(), From: ids[i], To: ids[j], Amount: 1, Currency: usd}); err != nil {
						b.Error(err)
					}
				}
			})
		})
	}
}
