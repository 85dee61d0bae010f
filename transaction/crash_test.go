package transaction

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
)

var errCrashed = errors.New("simulated crash")

// crashAt returns hooks that "kill" the instance when it reaches step.
func crashAt(step Step) Hooks {
	return Hooks{BeforeStep: func(_ context.Context, _ string, s Step) error {
		if s == step {
			return errCrashed
		}
		return nil
	}}
}

// recoverUntilDone runs recovery passes until the transfer is terminal.
func recoverUntilDone(t *testing.T, s *Service, id string) *Transfer {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := s.Recover(ctx); err != nil {
			t.Logf("recovery pass: %v", err)
		}
		tr, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if tr.State.Terminal() {
			return tr
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfer %s still %s after recovery", id, tr.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCrashAtEveryStep stops an instance between every two writes of a
// transfer, leases left held as a dead process leaves them; another
// instance's recovery finishes the transfer, exactly once. The client's
// retry with the same id then gets the finished transfer.
func TestCrashAtEveryStep(t *testing.T) {
	for _, step := range Steps {
		t.Run(string(step), func(t *testing.T) {
			db := testmongo.Database(t)
			ctx := context.Background()
			crashing := newSvc(t, db, Config{Lock: shortLeases("crashing"), Hooks: crashAt(step)})
			recovery := newSvc(t, secondInstance(t, db), Config{Lock: shortLeases("recovery"), RecoveryGrace: time.Millisecond})
			ids := openAccounts(t, recovery, 2, 100)
			amount, wantState := int64(60), StateCompleted
			if step == StepFail {
				amount, wantState = 500, StateFailed // only a failing transfer gets there
			}
			req := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: amount, Currency: usd}

			if _, err := crashing.Transfer(ctx, req); !errors.Is(err, errCrashed) {
				t.Fatalf("transfer: got %v, want the simulated crash", err)
			}
			tr := recoverUntilDone(t, recovery, req.ID)
			if tr.State != wantState {
				t.Fatalf("recovered to %s, want %s", tr.State, wantState)
			}
			moved := int64(0)
			if wantState == StateCompleted {
				moved = amount
			}
			again, err := recovery.Transfer(ctx, req) // the client's retry
			if again == nil || again.State != wantState || (wantState == StateCompleted && err != nil) {
				t.Errorf("retry: got %v, %v; want the %s transfer", again, err, wantState)
			}
			if a, b := balance(t, recovery, ids[0]), balance(t, recovery, ids[1]); a != 100-moved || b != 100+moved {
				t.Errorf("balances %d, %d; want %d, %d", a, b, 100-moved, 100+moved)
			}
			mustAudit(t, recovery)
		})
	}
}

// TestStalledHolderIsFenced: an instance stalls after debiting, past its
// leases' expiry; another instance recovers the transfer to completion.
// When the first resumes, its credit is refused (lease lost), it picks the
// transfer up again, finds it completed, and no money moved twice.
func TestStalledHolderIsFenced(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	stalled, resume := make(chan struct{}), make(chan struct{})
	var lost []lock.Event
	stalledCfg := Config{Lock: shortLeases("stalled"), Hooks: Hooks{BeforeStep: func(_ context.Context, _ string, s Step) error {
		if s == StepCredit {
			close(stalled)
			<-resume
		}
		return nil
	}}}
	stalledCfg.Lock.Observe = func(e lock.Event) {
		if e.Lost {
			lost = append(lost, e)
		}
	}
	first := newSvc(t, db, stalledCfg)
	other := newSvc(t, secondInstance(t, db), Config{Lock: shortLeases("other"), RecoveryGrace: time.Millisecond})
	ids := openAccounts(t, other, 2, 100)
	req := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 30, Currency: usd}

	type result struct {
		tr  *Transfer
		err error
	}
	done := make(chan result)
	go func() {
		tr, err := first.Transfer(ctx, req)
		done <- result{tr, err}
	}()
	<-stalled
	if tr := recoverUntilDone(t, other, req.ID); tr.State != StateCompleted {
		t.Fatalf("recovered to %s, want completed", tr.State)
	}
	close(resume)
	r := <-done
	if r.err != nil || r.tr.State != StateCompleted {
		t.Errorf("resumed holder: got %v, %v; want the completed transfer", r.tr, r.err)
	}
	if len(lost) == 0 {
		t.Error("resumed holder never learned its lease was lost")
	}
	if a, b := balance(t, other, ids[0]), balance(t, other, ids[1]); a != 70 || b != 130 {
		t.Errorf("balances %d, %d; want 70, 130", a, b)
	}
	mustAudit(t, other)
}
