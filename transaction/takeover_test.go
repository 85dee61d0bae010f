package transaction

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
)

// A driver that stalls before taking the account leases, past its transfer lease, while another
// instance recovers and completes the transfer (cleaning up its markers), must not apply the legs
// a second time when it resumes: money moves exactly once.
func TestStalledDriverAfterTakeoverDoesNotReapplyLegs(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	lease := 300 * time.Millisecond
	stall := make(chan struct{})
	resume := make(chan struct{})
	var once sync.Once
	var target string
	var mu sync.Mutex
	slow := newSvc(t, db, Config{Lock: lock.Config{LeaseDuration: lease}, RecoveryGrace: lease,
		Hooks: Hooks{BeforeStep: func(ctx context.Context, id string, step Step) error {
			mu.Lock()
			hit := id == target && step == StepLock
			mu.Unlock()
			if hit {
				once.Do(func() { close(stall) })
				<-resume
			}
			return nil
		}}})
	other := newSvc(t, secondInstance(t, db), Config{Lock: lock.Config{LeaseDuration: lease}, RecoveryGrace: lease})
	ids := openAccounts(t, slow, 2, 1000)
	id := uuid.NewString()
	mu.Lock()
	target = id
	mu.Unlock()

	done := make(chan error, 1)
	go func() {
		_, err := slow.Transfer(ctx, Request{ID: id, From: ids[0], To: ids[1], Amount: 100, Currency: usd})
		done <- err
	}()
	<-stall
	// The slow driver holds the journaled transfer's lease and sits before StepLock. Let the
	// lease expire, then the other instance's recovery completes the transfer.
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(lease)
		if _, err := other.Recover(ctx); err != nil && !errors.Is(err, lock.ErrHeld) {
			t.Logf("recover: %v", err)
		}
		tr, err := other.Get(ctx, id)
		if err == nil && tr.State == StateCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recovery did not complete the transfer: %+v %v", tr, err)
		}
	}
	close(resume)
	if err := <-done; err != nil {
		t.Logf("slow driver returned %v", err)
	}
	a, err := slow.Accounts().Get(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := slow.Accounts().Get(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if a.Balance != 900 || b.Balance != 1100 {
		t.Fatalf("balances %d and %d, want 900 and 1100: the transfer moved money more than once", a.Balance, b.Balance)
	}
	rep, err := slow.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("audit: %v", rep.Violations)
	}
}
