package transaction

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/internal/testmongo"
)

// A refusal is the id's outcome for good, like an insufficient-funds failure: asking again
// after the accounts have changed gets the same refusal, and no money moves.
func TestRefusalIsTheIDsOutcome(t *testing.T) {
	for _, mode := range []struct {
		name string
		cfg  Config
	}{{"batched", Config{}}, {"alone", Config{NoBatch: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			db := testmongo.Database(t)
			s := newSvc(t, db, mode.cfg)
			ctx := context.Background()
			ids := openAccounts(t, s, 2, 100)
			a, frozen := ids[0], ids[1]
			if err := s.Accounts().SetStatus(ctx, frozen, account.StatusFrozen); err != nil {
				t.Fatal(err)
			}
			later := "acc-" + uuid.NewString() // does not exist yet
			missing := Request{ID: uuid.NewString(), From: a, To: later, Amount: 10, Currency: usd}
			inactive := Request{ID: uuid.NewString(), From: a, To: frozen, Amount: 10, Currency: usd}
			if _, err := s.Transfer(ctx, missing); !errors.Is(err, account.ErrNotFound) {
				t.Fatalf("missing account: got %v", err)
			}
			if _, err := s.Transfer(ctx, inactive); !errors.Is(err, ErrAccountInactive) {
				t.Fatalf("frozen account: got %v", err)
			}
			// The world changes: the account appears, the frozen one thaws.
			if _, err := s.Accounts().CreateWithID(ctx, later, "late", usd); err != nil {
				t.Fatal(err)
			}
			if err := s.Accounts().SetStatus(ctx, frozen, account.StatusActive); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				req  Request
				want error
			}{{missing, account.ErrNotFound}, {inactive, ErrAccountInactive}} {
				tr, err := s.Transfer(ctx, c.req)
				if !errors.Is(err, c.want) || tr == nil || tr.State != StateFailed || !tr.Replayed {
					t.Errorf("retry of %s: got %+v, %v; want the replayed refusal %v", c.req.ID, tr, err, c.want)
				}
			}
			if got := balance(t, s, a); got != 100 {
				t.Errorf("balance = %d, want 100: a refused transfer moves nothing", got)
			}
			mustAudit(t, s)
		})
	}
}

// Replayed tells the call that journaled a transfer from those that found it journaled, on
// this instance and on another.
func TestReplayedMarksOnlyLaterCalls(t *testing.T) {
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{})
	other := newSvc(t, secondInstance(t, db), Config{NoBatch: true})
	ctx := context.Background()
	ids := openAccounts(t, s, 2, 100)
	for _, svc := range []*Service{s, other} {
		req := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 1, Currency: usd, NoWait: true}
		first, err := svc.Transfer(ctx, req)
		if err != nil || first.Replayed {
			t.Fatalf("first call: %+v, %v; want not replayed", first, err)
		}
		for _, again := range []*Service{s, other} {
			tr, err := again.Transfer(ctx, req)
			if err != nil || !tr.Replayed || tr.ID != first.ID {
				t.Errorf("later call: %+v, %v; want the replayed transfer %s", tr, err, first.ID)
			}
		}
	}
	if got := balance(t, s, ids[0]); got != 98 {
		t.Errorf("balance = %d, want 98 (two transfers, each once)", got)
	}
}

// With NoWait, a call for a transfer another driver holds right now gets ErrInProgress at once
// (here or on another instance); once the first is done, the same call gets its outcome.
func TestNoWaitAnswersInProgress(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var blockID string
	var mu sync.Mutex
	hooks := Hooks{BeforeStep: func(ctx context.Context, id string, step Step) error {
		mu.Lock()
		block := id == blockID
		mu.Unlock()
		if block && step == StepDebit {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	}}
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{Hooks: hooks})
	other := newSvc(t, secondInstance(t, db), Config{NoBatch: true})
	ctx := context.Background()
	ids := openAccounts(t, s, 2, 100)
	req := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 5, Currency: usd, NoWait: true}
	mu.Lock()
	blockID = req.ID
	mu.Unlock()

	done := make(chan error, 1)
	go func() { _, err := s.Transfer(ctx, req); done <- err }()
	<-entered
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	for _, svc := range []*Service{s, other} {
		got := make(chan error, 1)
		go func() { _, err := svc.Transfer(ctx, req); got <- err }()
		select {
		case err := <-got:
			if !errors.Is(err, ErrInProgress) {
				t.Errorf("while held: got %v, want ErrInProgress", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("still waiting after 10 s: NoWait must not wait")
		}
	}
	close(release)
	released = true
	if err := <-done; err != nil {
		t.Fatalf("first call: %v", err)
	}
	tr, err := other.Transfer(ctx, req)
	if err != nil || !tr.Replayed || tr.State != StateCompleted {
		t.Fatalf("after the first: %+v, %v; want the replayed completed transfer", tr, err)
	}
	if got := balance(t, s, ids[0]); got != 95 {
		t.Errorf("balance = %d, want 95 (moved once)", got)
	}
}

// A transfer the batch journals but cannot apply (an account is held elsewhere) is handed
// back to its caller with its lease; if the caller has given up meanwhile, the lease is
// released, so that a retry drives it instead of finding it in progress for good.
func TestHandedOverLeaseOfAGoneCallerIsReleased(t *testing.T) {
	gate := make(chan struct{})
	var blockID string
	var mu sync.Mutex
	hooks := Hooks{BeforeStep: func(ctx context.Context, id string, step Step) error {
		mu.Lock()
		block := id == blockID
		mu.Unlock()
		if block && step == StepLock {
			<-gate
		}
		return nil
	}}
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{Hooks: hooks})
	ids := openAccounts(t, s, 2, 100)
	other := newSvc(t, secondInstance(t, db), Config{})
	held, err := other.accLocks.Acquire(context.Background(), ids[1])
	if err != nil {
		t.Fatal(err)
	}
	req := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 7, Currency: usd, NoWait: true}
	mu.Lock()
	blockID = req.ID
	mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Transfer(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("caller that gives up: got %v, want its deadline", err)
	}
	close(gate) // the batch goes on: journaled, account held elsewhere, handed back
	if err := other.accLocks.Release(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	var tr *Transfer
	deadline := time.Now().Add(10 * time.Second)
	for {
		tr, err = s.Transfer(context.Background(), req)
		if !errors.Is(err, ErrInProgress) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || tr.State != StateCompleted {
		t.Fatalf("retry: %+v, %v; want the transfer completed", tr, err)
	}
	if got := balance(t, s, ids[0]); got != 93 {
		t.Errorf("balance = %d, want 93 (moved once)", got)
	}
}
