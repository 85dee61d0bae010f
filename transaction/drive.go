package transaction

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/lock"
)

// drive moves a leased transfer through the state machine to a terminal
// state. Every write is fenced: account writes by the account leases,
// transfer writes by the transfer lease tl. Every step can be re-run:
// a leg is applied together with a pending marker on the account, and a leg
// whose marker is present is not applied again.
func (s *Service) drive(ctx context.Context, tl *lock.Lease, t *Transfer) (*Transfer, error) {
	for {
		var err error
		switch t.State {
		case StateCompleted, StateFailed:
			return t, nil
		case StatePending:
			t, err = s.applyLegs(ctx, tl, t)
		case StateApplied:
			t, err = s.cleanup(ctx, tl, t)
		default:
			return nil, fmt.Errorf("transfer %s: unknown state %q", t.ID, t.State)
		}
		if err != nil {
			return nil, err
		}
	}
}

// applyLegs takes a pending transfer to applied (both legs on the balances)
// or to failed (no leg applied).
func (s *Service) applyLegs(ctx context.Context, tl *lock.Lease, t *Transfer) (_ *Transfer, err error) {
	if err := s.hook(ctx, t.ID, StepLock); err != nil {
		return nil, err
	}
	lf, lt, err := s.accLocks.AcquirePair(ctx, t.From, t.To)
	if errors.Is(err, lock.ErrNotFound) {
		return s.fail(ctx, tl, t, ReasonAccountNotFound)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		var crash errCrash
		if errors.As(err, &crash) { // a dead process releases nothing
			s.dropAccounts(lf, lt)
		} else {
			s.releaseAccounts(lf, lt) // a no-op for a lease a leg write released
		}
	}()

	// The transfer lease may have expired while this driver waited for the accounts, and
	// another driver may have finished the transfer meanwhile and cleaned up its markers, which
	// then no longer stop a second application of the legs. Now that this driver holds both
	// accounts (nobody else applies a leg until these leases end, and after that this driver's
	// fenced writes fail), it confirms that it still holds a pending transfer.
	if err := s.store.stillDriving(ctx, tl); err != nil {
		return nil, s.noteLostXfer(tl, err)
	}

	from, err1 := decodeAccount(lf)
	to, err2 := decodeAccount(lt)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	// A run before this one may have debited the source already (its marker
	// is there): the rules held then, and the transfer must go on.
	req := Request{Kind: t.Kind, From: t.From, To: t.To, Amount: t.Amount, Currency: t.Currency}
	debited := false
	if reason := check(req, from, to); reason != "" {
		if debited, err = s.store.hasMarker(ctx, lf, t.ID); err != nil {
			return nil, s.noteLost(lf, err)
		}
		if !debited {
			return s.fail(ctx, tl, t, reason)
		}
	}

	if !debited {
		if err := s.hook(ctx, t.ID, StepDebit); err != nil {
			return nil, err
		}
		// debit is a no-op when the marker is there, and says
		// ErrInsufficientFunds only when it is not. It releases the source's
		// lease in the same write, unless a goroutine here waits for it:
		// that lease guards the balance condition, which has now been
		// applied, and nothing else this transfer does reads or writes the
		// source's balance. The source's marker keeps the debit from being
		// repeated, and the transfer's own lease keeps any other driver of
		// this transfer away, so a crash before the credit is recovered as
		// before: recovery finds the marker and goes on to the credit.
		released, err := s.store.debit(ctx, lf, t, !from.CanGoNegative(), s.accLocks.CanReleaseInWrite(lf))
		switch {
		case errors.Is(err, ErrInsufficientFunds):
			return s.fail(ctx, tl, t, ReasonInsufficientFunds)
		case err != nil:
			return nil, s.noteLost(lf, err)
		case released:
			s.accLocks.ReleasedByWrite(lf)
		}
	}

	if err := s.hook(ctx, t.ID, StepCredit); err != nil {
		return nil, err
	}
	released, err := s.store.credit(ctx, lt, t, s.accLocks.CanReleaseInWrite(lt))
	if err != nil {
		return nil, s.noteLost(lt, err)
	}
	if released {
		s.accLocks.ReleasedByWrite(lt)
	}
	// Both legs carry markers now: the accounts are free for the next
	// transfer (leases a leg write released are not released again).
	s.releaseAccounts(lf, lt)

	if err := s.hook(ctx, t.ID, StepApply); err != nil {
		return nil, err
	}
	return s.advance(ctx, tl, t, StateApplied, "")
}

// cleanup removes the pending markers of an applied transfer and completes it.
// Markers of an applied transfer are never read again, so their removal
// needs no account lease.
func (s *Service) cleanup(ctx context.Context, tl *lock.Lease, t *Transfer) (*Transfer, error) {
	if err := s.hook(ctx, t.ID, StepCleanup); err != nil {
		return nil, err
	}
	if err := s.store.removeMarkers(ctx, t); err != nil {
		return nil, err
	}
	if err := s.hook(ctx, t.ID, StepComplete); err != nil {
		return nil, err
	}
	return s.advance(ctx, tl, t, StateCompleted, "")
}

func (s *Service) fail(ctx context.Context, tl *lock.Lease, t *Transfer, reason Reason) (*Transfer, error) {
	if err := s.hook(ctx, t.ID, StepFail); err != nil {
		return nil, err
	}
	return s.advance(ctx, tl, t, StateFailed, reason)
}

// advance records the transfer's next state, fenced by the transfer lease;
// a terminal state releases that lease in the same write.
func (s *Service) advance(ctx context.Context, tl *lock.Lease, t *Transfer, next State, reason Reason) (*Transfer, error) {
	now := s.cfg.Now().UTC().Truncate(time.Millisecond)
	if err := s.store.setState(ctx, tl, t.State, next, reason, now); err != nil {
		return nil, s.noteLostXfer(tl, err)
	}
	if next.Terminal() {
		s.xferLocks.Drop(tl)
	}
	u := *t
	u.State, u.Reason, u.UpdatedAt = next, reason, now
	if next.Terminal() {
		u.CompletedAt = &now
	}
	return &u, nil
}

func (s *Service) noteLost(l *lock.Lease, err error) error {
	if errors.Is(err, lock.ErrLeaseLost) {
		s.accLocks.Lost(l)
	}
	return err
}

func (s *Service) noteLostXfer(l *lock.Lease, err error) error {
	if errors.Is(err, lock.ErrLeaseLost) {
		s.xferLocks.Lost(l)
	}
	return err
}

func (s *Service) releaseAccounts(ls ...*lock.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, l := range ls {
		_ = s.accLocks.Release(ctx, l) // lost or unreachable: the lease expires anyway
	}
}

// dropAccounts forgets account leases without releasing them: a simulated crash.
func (s *Service) dropAccounts(ls ...*lock.Lease) {
	for _, l := range ls {
		s.accLocks.Drop(l)
	}
}

func decodeAccount(l *lock.Lease) (*account.Account, error) {
	var a account.Account
	if err := bson.Unmarshal(l.Doc, &a); err != nil {
		return nil, fmt.Errorf("decode account %s: %w", l.Key, err)
	}
	return &a, nil
}
