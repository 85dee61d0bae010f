package transaction

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
)

// leaseOwner reads an account's lockOwner straight from the database ("" if unset).
func leaseOwner(t *testing.T, s *Service, id string) string {
	t.Helper()
	var doc struct {
		Owner string `bson:"lockOwner"`
	}
	err := s.accounts.Collection().FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc.Owner
}

// TestLegWritesReleaseLeases: with nobody waiting, the debit releases the
// source's lease and the credit the destination's, in the leg writes
// themselves: before the credit only the destination is still leased, and
// before the transfer is marked applied neither is.
func TestLegWritesReleaseLeases(t *testing.T) {
	db := testmongo.Database(t)
	var svc *Service
	type seen struct{ from, to string }
	got := map[Step]seen{}
	var from, to string
	svc = newSvc(t, db, Config{Lock: lock.Config{Owner: "me"}, NoBatch: true, Hooks: Hooks{BeforeStep: func(_ context.Context, _ string, s Step) error {
		if from != "" && (s == StepDebit || s == StepCredit || s == StepApply) {
			got[s] = seen{leaseOwner(t, svc, from), leaseOwner(t, svc, to)}
		}
		return nil
	}}})
	ids := openAccounts(t, svc, 2, 100)
	from, to = ids[0], ids[1]
	if _, err := svc.Transfer(context.Background(), Request{ID: uuid.NewString(), From: from, To: to, Amount: 40, Currency: usd}); err != nil {
		t.Fatal(err)
	}
	want := map[Step]seen{StepDebit: {"me", "me"}, StepCredit: {"", "me"}, StepApply: {"", ""}}
	for step, w := range want {
		if got[step] != w {
			t.Errorf("before %s: lease owners (from, to) = %q, want %q", step, got[step], w)
		}
	}
	if a, b := balance(t, svc, from), balance(t, svc, to); a != 60 || b != 140 {
		t.Errorf("balances %d, %d; want 60, 140", a, b)
	}
	mustAudit(t, svc)
}

// TestCrashAfterEarlyRelease: an instance dies between debit and credit,
// after the debit released the source's lease. The source is free at once
// (another transfer from it goes through while the dead holder's lease on
// the destination is still live); recovery, once that lease expires,
// credits the destination exactly once, without debiting again.
func TestCrashAfterEarlyRelease(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	crashCfg := Config{Lock: lock.Config{Owner: "crashing", LeaseDuration: 2 * time.Second}, NoBatch: true, Hooks: crashAt(StepCredit)}
	crashing := newSvc(t, db, crashCfg)
	other := newSvc(t, secondInstance(t, db), Config{
		Lock:          lock.Config{Owner: "other", LeaseDuration: 150 * time.Millisecond, WaitTimeout: 500 * time.Millisecond},
		RecoveryGrace: time.Millisecond,
	})
	ids := openAccounts(t, other, 3, 100)
	req := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 60, Currency: usd}
	if _, err := crashing.Transfer(ctx, req); !errors.Is(err, errCrashed) {
		t.Fatalf("transfer: got %v, want the simulated crash", err)
	}
	if o := leaseOwner(t, other, ids[0]); o != "" {
		t.Fatalf("source still leased by %q after its debit", o)
	}
	if o := leaseOwner(t, other, ids[1]); o != "crashing" {
		t.Fatalf("destination leased by %q, want the dead holder", o)
	}
	// The source's balance already carries the debit: only 40 are left.
	if _, err := other.Transfer(ctx, Request{ID: uuid.NewString(), From: ids[0], To: ids[2], Amount: 50, Currency: usd}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("overdrawing transfer from the released source: %v, want insufficient funds", err)
	}
	if _, err := other.Transfer(ctx, Request{ID: uuid.NewString(), From: ids[0], To: ids[2], Amount: 40, Currency: usd}); err != nil {
		t.Fatalf("transfer from the released source: %v", err)
	}
	if tr := recoverUntilDone(t, other, req.ID); tr.State != StateCompleted {
		t.Fatalf("recovered to %s, want completed", tr.State)
	}
	for i, want := range []int64{0, 160, 140} {
		if got := balance(t, other, ids[i]); got != want {
			t.Errorf("balance of account %d = %d, want %d", i, got, want)
		}
	}
	mustAudit(t, other)
}
