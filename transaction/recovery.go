package transaction

import (
	"context"
	"errors"
	"time"

	"github.com/bankd/bankd/lock"
)

// recoveryBatch bounds how many stale transfers one pass looks at.
const recoveryBatch = 100

// Recover makes one pass over the journal: every unfinished transfer older
// than Config.RecoveryGrace whose lease is free or expired (by the database
// clock) is claimed through its lease and driven to completed or failed. It
// returns how many it finished. Transfers whose accounts are still leased by
// a dead holder stay for a later pass.
func (s *Service) Recover(ctx context.Context) (int, error) {
	ids, err := s.store.stale(ctx, s.cfg.Now().Add(-s.cfg.RecoveryGrace), recoveryBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		t, err := s.recoverOne(ctx, id)
		switch {
		case errors.Is(err, lock.ErrHeld):
			// someone else got there first
		case err != nil:
			errs = append(errs, err)
			s.cfg.Logger.Warn("recovery: transfer not finished", "transfer", id, "err", err)
		default:
			n++
			s.cfg.Logger.Info("recovery: transfer finished", "transfer", id, "state", t.State)
			if s.cfg.OnRecovered != nil {
				s.cfg.OnRecovered(t)
			}
		}
	}
	return n, errors.Join(errs...)
}

func (s *Service) recoverOne(ctx context.Context, id string) (*Transfer, error) {
	tl, err := s.xferLocks.TryAcquire(ctx, id)
	if err != nil {
		return nil, err
	}
	t, err := s.store.decode(tl.Doc)
	if err == nil && t.State.Terminal() { // finished since we looked
		s.giveBack(tl)
		return nil, lock.ErrHeld
	}
	if err == nil {
		t, err = s.drive(ctx, tl, t)
	}
	if err != nil {
		var crash errCrash
		if errors.As(err, &crash) {
			s.xferLocks.Drop(tl)
		} else {
			s.giveBack(tl)
		}
		return nil, err
	}
	return t, nil
}

// RunRecovery calls Recover, then settle (if not nil; e.g. to settle
// idempotency records left in flight), every interval until ctx ends.
// It returns when ctx ends; run it in its own goroutine.
func (s *Service) RunRecovery(ctx context.Context, interval time.Duration, settle func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Recover(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("recovery pass", "err", err)
		}
		if settle != nil {
			if err := settle(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("recovery settle", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
