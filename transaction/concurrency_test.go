package transaction

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
)

// TestConcurrentTransfers: ≥32 goroutines on two instances move money at
// random among 10 accounts, and among 2 (a hot pair). Afterwards the audit
// passes and every account's balance is exactly its seed plus the
// acknowledged completed transfers: each applied exactly once, none lost.
func TestConcurrentTransfers(t *testing.T) {
	perWorker := 8
	if testing.Short() {
		perWorker = 3
	}
	for _, tc := range []struct {
		name     string
		accounts int
		maxHold  time.Duration // lease hand-off between local waiters
	}{{"ten accounts", 10, 0}, {"hot pair", 2, 0}, {"hot pair with hand-off", 2, time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			db := testmongo.Database(t)
			cfg := Config{Lock: lock.Config{MaxHold: tc.maxHold}}
			svcs := []*Service{newSvc(t, db, cfg), newSvc(t, secondInstance(t, db), cfg)}
			const seed = 1000
			ids := openAccounts(t, svcs[0], tc.accounts, seed)
			want := make(map[string]int64)
			for _, id := range ids {
				want[id] = seed
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			const workers = 32
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := svcs[w%len(svcs)]
					for range perWorker {
						i := rand.IntN(len(ids))
						j := (i + 1 + rand.IntN(len(ids)-1)) % len(ids)
						req := Request{ID: uuid.NewString(), From: ids[i], To: ids[j], Amount: 1 + rand.Int64N(300), Currency: usd}
						tr, err := s.Transfer(context.Background(), req)
						switch {
						case errors.Is(err, ErrInsufficientFunds):
						case err != nil:
							t.Errorf("transfer: %v", err)
						case tr.State != StateCompleted:
							t.Errorf("acknowledged transfer in state %s", tr.State)
						default:
							mu.Lock()
							want[req.From] -= req.Amount
							want[req.To] += req.Amount
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			for _, id := range ids {
				if got := balance(t, svcs[0], id); got != want[id] {
					t.Errorf("account %s: balance %d, want %d", id, got, want[id])
				}
			}
			mustAudit(t, svcs[0])
		})
	}
}

// TestOppositeDirections: A→B and B→A at once, many times, on two
// instances: pair locking in id order means no deadlock; all complete.
func TestOppositeDirections(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	db := testmongo.Database(t)
	svcs := []*Service{newSvc(t, db, Config{}), newSvc(t, secondInstance(t, db), Config{})}
	ids := openAccounts(t, svcs[0], 2, 1_000_000)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from, to := ids[w%2], ids[1-w%2]
			for range rounds {
				tr, err := svcs[(w/2)%2].Transfer(context.Background(),
					Request{ID: uuid.NewString(), From: from, To: to, Amount: 10, Currency: usd})
				if err != nil || tr.State != StateCompleted {
					t.Errorf("transfer: %v, %v", tr, err)
				}
			}
		}()
	}
	wg.Wait()
	// Equal numbers each way: balances are back where they started.
	for _, id := range ids {
		if got := balance(t, svcs[0], id); got != 1_000_000 {
			t.Errorf("balance %d, want 1000000", got)
		}
	}
	mustAudit(t, svcs[0])
}
