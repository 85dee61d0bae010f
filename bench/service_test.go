package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo"

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
				ids = seedFunded(b, svc, eng.client.Database("bankd"), c.accounts)
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

// seedFunded loads n accounts in the state n deposits of initialBalance
// leave behind: each account funded, a completed deposit journaled for it,
// and the external account at minus the total. It writes the packages' own
// documents (account.Account, transaction.Transfer) in bulk, because funding
// 10,000 accounts through Deposit takes about a minute (every deposit leases
// the one external account), and proves the result with the service's
// audit before anything is measured.
func seedFunded(b *testing.B, svc *transaction.Service, db *mongo.Database, n int) []string {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	ext := account.NewExternal(usd, now)
	ext.Balance = -initialBalance * int64(n)
	accts := []any{ext}
	xfers := make([]any, 0, n)
	ids := make([]string, n)
	for i := range ids {
		a, err := account.New(fmt.Sprintf("bench-%d", i), usd, now)
		if err != nil {
			b.Fatal(err)
		}
		a.Balance = initialBalance
		ids[i] = a.ID
		t := &transaction.Transfer{ID: uuid.NewString(), Kind: transaction.KindDeposit, From: ext.ID, To: a.ID,
			Amount: initialBalance, Currency: usd, Reference: "seed", State: transaction.StateCompleted,
			Accounts: []string{ext.ID, a.ID}, CreatedAt: now, UpdatedAt: now, CompletedAt: &now}
		if err := t.Validate(); err != nil {
			b.Fatal(err)
		}
		accts = append(accts, a)
		xfers = append(xfers, t)
	}
	for _, c := range []struct {
		name string
		docs []any
	}{{account.CollectionName, accts}, {transaction.CollectionName, xfers}} {
		for lo := 0; lo < len(c.docs); lo += 1000 {
			if _, err := db.Collection(c.name).InsertMany(ctx, c.docs[lo:min(len(c.docs), lo+1000)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	rep, err := svc.Audit(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if !rep.OK() || rep.Accounts != n+1 {
		b.Fatalf("seeded state fails the audit (%d accounts): %v", rep.Accounts, rep.Violations)
	}
	return ids
}
