package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/internal/app"
	"github.com/bankd/bankd/lock"
	"github.com/bankd/bankd/transaction"
)

const usd = account.Currency("USD")

// BenchmarkServiceTransfer is bankd's own transfer, in-process without HTTP:
// leases with fencing, the journal, and the local hand-off of hot leases,
// configured as bankd's defaults configure them (app.Defaults). busy attempts
// are lock.ErrTimeout, which the API answers 503 account_busy. hot-nohandoff
// is the hot load with the hand-off off (MaxHold 0), to show what it buys.
func BenchmarkServiceTransfer(b *testing.B) {
	def := app.Defaults()
	cfg := lock.Config{LeaseDuration: def.LeaseDuration, WaitTimeout: def.LockWait, MaxHold: def.MaxHold}
	noHandOff := cfg
	noHandOff.MaxHold = 0
	for _, c := range []struct {
		load
		lock lock.Config
	}{
		{loads[0], cfg},
		{load{"hot-nohandoff", hotAccounts}, noHandOff},
		{loads[1], cfg},
	} {
		var (
			eng *engine
			svc *transaction.Service
			ids []string
		)
		b.Run(c.name, func(b *testing.B) {
			if eng == nil {
				eng = startEngine(b)
				var err error
				svc, err = transaction.New(eng.client.Database("bankd"), transaction.Config{Lock: c.lock})
				if err != nil {
					b.Fatal(err)
				}
				if err := svc.EnsureIndexes(context.Background()); err != nil {
					b.Fatal(err)
				}
				ids = openFunded(b, svc, c.accounts)
			}
			runClients(b, func(ctx context.Context, _ int, rng *rand.Rand) (outcome, error) {
				i, j := pair(rng, len(ids))
				_, err := svc.Transfer(ctx, transaction.Request{ID: uuid.NewString(), From: ids[i], To: ids[j],
					Amount: 1 + rng.Int64N(100), Currency: usd})
				switch {
				case err == nil:
					return ok, nil
				case errors.Is(err, lock.ErrTimeout):
					return busy, nil
				case errors.Is(err, transaction.ErrInsufficientFunds):
					return failed, nil
				}
				return 0, err
			})
		})
		if eng != nil {
			rep, err := svc.Audit(context.Background())
			switch {
			case err != nil:
				b.Error(err)
			case !rep.OK() || rep.Unfinished != 0:
				b.Errorf("%s: audit: %d violations, %d unfinished: %v", c.name, len(rep.Violations), rep.Unfinished, rep.Violations)
			}
			eng.close()
		}
	}
}

// openFunded creates n accounts through the service and funds each with a
// deposit (a journaled transfer from the external account, as the API does),
// `clients` at a time.
func openFunded(b *testing.B, svc *transaction.Service, n int) []string {
	b.Helper()
	ids := make([]string, n)
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	ctx := context.Background()
	start := time.Now()
	for range min(clients, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				err := func() error {
					a, err := svc.Accounts().Create(ctx, fmt.Sprintf("bench-%d", i), usd)
					if err != nil {
						return err
					}
					ids[i] = a.ID
					_, err = svc.Deposit(ctx, uuid.NewString(), a.ID, initialBalance, usd, "seed")
					return err
				}()
				if err != nil {
					errMu.Lock()
					first = errors.Join(first, err)
					errMu.Unlock()
					next.Store(int64(n))
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
	b.Logf("opened and funded %d accounts in %v", n, time.Since(start).Round(time.Millisecond))
	return ids
}
