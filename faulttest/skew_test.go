package faulttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
	"github.com/bankd/bankd/transaction"
)

// TestSkewedClockCannotTakeLiveLease: an instance whose clock is minutes off cannot take an
// account lease another instance holds.
//
// Why: a lease is {lockTimestamp, lockDuration} written with the database's clock ($$NOW in
// a pipeline update), and acquisition admits a document only when lockTimestamp +
// lockDuration <= $$NOW, evaluated by the database inside the findOneAndUpdate. The
// contender's own clock never enters that comparison: it is used only for its own wait
// deadline and informational timestamps. Had expiry been judged locally, a clock ten
// minutes ahead would see every 30 s lease as long expired and steal it.
func TestSkewedClockCannotTakeLiveLease(t *testing.T) {
	for _, tc := range []struct {
		name string
		skew time.Duration
	}{
		{"ten minutes ahead", 10 * time.Minute},
		{"ten minutes behind", -10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) { skewedContender(t, tc.skew) })
	}
}

func skewedContender(t *testing.T, skew time.Duration) {
	ctx := t.Context()
	const usd = account.Currency("USD")
	db := testmongo.Database(t)
	first := transaction.Request{ID: uuid.NewString(), Amount: 100, Currency: usd}
	held, resume := make(chan struct{}), make(chan struct{})
	honest, err := transaction.New(db, transaction.Config{
		Lock: lock.Config{Owner: "honest", LeaseDuration: 30 * time.Second, WaitTimeout: 10 * time.Second},
		// The honest instance stops inside its first transfer with both account leases held.
		Hooks: transaction.Hooks{BeforeStep: func(_ context.Context, id string, s transaction.Step) error {
			if id == first.ID && s == transaction.StepDebit {
				close(held)
				<-resume
			}
			return nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := honest.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	// The skewed instance: its own client (another process), every local clock shifted.
	now := func() time.Time { return time.Now().Add(skew) }
	skewedDB := testmongo.NewClient(t).Database(db.Name())
	skewed, err := transaction.New(skewedDB, transaction.Config{
		Now:  now,
		Lock: lock.Config{Owner: "skewed", LeaseDuration: 30 * time.Second, WaitTimeout: 300 * time.Millisecond, Now: now},
	})
	if err != nil {
		t.Fatal(err)
	}

	var ids [2]string
	for i := range ids {
		a, err := honest.Accounts().Create(ctx, "owner", usd)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = a.ID
	}
	if _, err := honest.Deposit(ctx, uuid.NewString(), ids[0], 1000, usd, "seed"); err != nil {
		t.Fatal(err)
	}
	first.From, first.To = ids[0], ids[1]
	firstDone := make(chan error, 1)
	go func() {
		_, err := honest.Transfer(ctx, first)
		firstDone <- err
	}()
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the honest transfer never reached its debit")
	}
	resumed := false
	defer func() { // never leave the honest goroutine blocked, whatever fails below
		if !resumed {
			close(resume)
			<-firstDone
		}
	}()
	tokenBefore := leaseOf(t, honest, ids[0])

	// The skewed instance's transfer on the same account waits out its deadline.
	second := transaction.Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 50, Currency: usd}
	if _, err := skewed.Transfer(ctx, second); !errors.Is(err, lock.ErrTimeout) {
		t.Fatalf("skewed transfer: %v, want lock.ErrTimeout", err)
	}
	// A bare lock attempt through a skewed Locker is refused outright.
	locker, err := lock.New(skewedDB.Collection(honest.Accounts().Collection().Name()), lock.Config{Owner: "skewed-locker", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if l, err := locker.TryAcquire(ctx, id); !errors.Is(err, lock.ErrHeld) {
			t.Fatalf("skewed TryAcquire of %s: lease %+v, err %v; want lock.ErrHeld", id, l, err)
		}
	}
	// Its recovery, to whose clock every transfer looks long stale, cannot take the held one.
	if n, _ := skewed.Recover(ctx); n != 0 {
		t.Errorf("skewed recovery finished %d transfers while they were held", n)
	}
	if after := leaseOf(t, honest, ids[0]); after != tokenBefore {
		t.Fatalf("lease changed hands while held: %+v, then %+v", tokenBefore, after)
	}

	resumed = true
	close(resume)
	if err := <-firstDone; err != nil {
		t.Fatalf("honest transfer: %v", err)
	}
	// Only the honest transfer moved money; the skewed one is journaled, untouched.
	if a, b := balanceOf(t, honest, ids[0]), balanceOf(t, honest, ids[1]); a != 900 || b != 100 {
		t.Errorf("balances %d, %d; want 900, 100 (the honest transfer only)", a, b)
	}
	if tr, err := honest.Get(ctx, second.ID); err != nil || tr.State != transaction.StatePending {
		t.Errorf("skewed transfer: %+v, %v; want it pending with nothing applied", tr, err)
	}
	// With the leases free, the skewed instance's retry goes through: skew never blocks a
	// free lease, and the transfer is applied once.
	if tr, err := skewed.Transfer(ctx, second); err != nil || tr.State != transaction.StateCompleted {
		t.Fatalf("skewed retry once the lease is free: %+v, %v", tr, err)
	}
	if a, b := balanceOf(t, honest, ids[0]), balanceOf(t, honest, ids[1]); a != 850 || b != 150 {
		t.Errorf("balances %d, %d; want 850, 150", a, b)
	}
	rep, err := honest.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Unfinished != 0 {
		t.Errorf("audit: %d violations %v, %d unfinished", len(rep.Violations), rep.Violations, rep.Unfinished)
	}
}

// lease is who holds an account's lease, as stored.
type lease struct {
	Owner string `bson:"lockOwner"`
	Token int64  `bson:"fencingToken"`
}

func leaseOf(t *testing.T, s *transaction.Service, id string) lease {
	t.Helper()
	var l lease
	if err := s.Accounts().Collection().FindOne(t.Context(), bson.D{{Key: "_id", Value: id}}).Decode(&l); err != nil {
		t.Fatal(err)
	}
	if l.Owner != "honest" {
		t.Fatalf("account %s leased by %q, want the honest instance", id, l.Owner)
	}
	return l
}

func balanceOf(t *testing.T, s *transaction.Service, id string) int64 {
	t.Helper()
	a, err := s.Accounts().Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}
