package transaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/internal/bulk"
	"github.com/bankd/bankd/lock"
)

// Step names a point between two writes of a transfer, where Hooks.BeforeStep runs.
type Step string

// Steps, in the order a transfer passes them.
const (
	StepLock     Step = "lock"     // journaled, about to lease both accounts
	StepDebit    Step = "debit"    // accounts leased, about to debit the source
	StepCredit   Step = "credit"   // source debited, about to credit the destination
	StepApply    Step = "apply"    // both legs on the balances, about to mark the transfer applied
	StepCleanup  Step = "cleanup"  // applied, about to remove the accounts' pending markers
	StepComplete Step = "complete" // markers removed, about to mark the transfer completed
	StepFail     Step = "fail"     // about to mark the transfer failed
)

// Steps lists every step, in order.
var Steps = []Step{StepLock, StepDebit, StepCredit, StepApply, StepCleanup, StepComplete, StepFail}

// Hooks inject faults in tests.
type Hooks struct {
	// BeforeStep runs before each step. An error abandons the transfer where
	// it stands, leases still held in the database, exactly as if the process
	// had died there; Transfer returns the error. Blocking stalls the holder.
	BeforeStep func(ctx context.Context, transferID string, step Step) error
}

// Config tunes a Service. Zero values select defaults.
type Config struct {
	// Lock configures the leases on accounts and on transfers (one owner id
	// for both: this instance).
	Lock lock.Config
	// Now is the local clock for informational timestamps (createdAt, ...).
	Now func() time.Time
	// RecoveryGrace is how old an unfinished transfer without a live lease
	// must be before recovery takes it over. Default: Lock.LeaseDuration.
	RecoveryGrace time.Duration
	// LeaseLostRetries is how many times a transfer whose lease was lost
	// mid-way is picked up again before giving up to recovery. Default 3.
	LeaseLostRetries int
	// MaxBatch bounds how many new transfers one batch applies together
	// (batch.go). Default DefaultMaxBatch.
	MaxBatch int
	// ParallelBatches is how many batches may be applied at once, over
	// disjoint accounts (batch.go). Default DefaultParallelBatches.
	ParallelBatches int
	// NoBatch drives every transfer alone, as retries and recovery do.
	NoBatch bool
	// Hooks inject faults (tests only).
	Hooks Hooks
	// OnRecovered, if set, is called for every transfer recovery finished.
	OnRecovered func(*Transfer)
	// Logger receives recovery logs; nil discards them.
	Logger *slog.Logger
}

// Service moves money. It is safe for concurrent use; run one per instance.
type Service struct {
	cfg       Config
	store     *store
	accounts  *account.Store
	accLocks  *lock.Locker // leases on account documents
	xferLocks *lock.Locker // leases on transfer documents (who drives it)

	extMu sync.Mutex
	ext   map[account.Currency]bool // external accounts known to exist

	batches bulk.Group[*batchItem, struct{}] // batch.go

	staleMu  sync.Mutex
	stale    map[string][]string // account → its markers of transfers completed here (batch.go)
	staleN   int                 // how many markers stale holds
	staleMax int                 // bound on staleN (maxStale; tests lower it)
}

// errCrash marks an error returned by a hook: the transfer is abandoned as is.
type errCrash struct{ err error }

func (e errCrash) Error() string { return "abandoned by hook: " + e.err.Error() }
func (e errCrash) Unwrap() error { return e.err }

func (s *Service) hook(ctx context.Context, id string, step Step) error {
	if s.cfg.Hooks.BeforeStep == nil {
		return nil
	}
	if err := s.cfg.Hooks.BeforeStep(ctx, id, step); err != nil {
		return errCrash{err}
	}
	return nil
}

func newService(st *store, accounts *account.Store, accLocks, xferLocks *lock.Locker, cfg Config) *Service {
	s := &Service{cfg: cfg, store: st, accounts: accounts, accLocks: accLocks, xferLocks: xferLocks,
		ext: make(map[account.Currency]bool), stale: make(map[string][]string), staleMax: maxStale}
	s.batches.Max, s.batches.Parallel, s.batches.Run = cfg.MaxBatch, cfg.ParallelBatches, s.applyBatch
	s.batches.Keys = func(it *batchItem) []string { return []string{it.req.From, it.req.To} }
	return s
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Lock.Now == nil {
		c.Lock.Now = c.Now
	}
	if c.LeaseLostRetries <= 0 {
		c.LeaseLostRetries = 3
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	c.MaxBatch = min(c.MaxBatch, bulk.MaxStatements/2) // two accounts a transfer
	if c.ParallelBatches <= 0 {
		c.ParallelBatches = DefaultParallelBatches
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Owner is this instance's owner id in leases.
func (s *Service) Owner() string { return s.accLocks.Owner() }

// Accounts is the account store the service uses.
func (s *Service) Accounts() *account.Store { return s.accounts }

// Transfer moves req.Amount from req.From to req.To and returns the transfer
// in its final state. A failed transfer (insufficient funds, missing or
// inactive account, ...) comes back with an error matching its reason, and
// is journaled as failed like any other. If a transfer with req.ID exists,
// it is driven to its end and returned, with Replayed set, provided it has
// the same details (ErrIDConflict otherwise): calling again never moves money
// twice and always gets the first call's outcome.
//
// Only a request Validate refuses leaves nothing behind. An error after the transfer is
// journaled (lock.ErrTimeout, a database error, ctx ending) leaves a
// transfer that recovery, or a retry with the same ID, drives to its end.
func (s *Service) Transfer(ctx context.Context, req Request) (*Transfer, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Kind != KindTransfer {
		if err := s.ensureExternal(ctx, req.Currency); err != nil {
			return nil, err
		}
	}
	if req.NoWait && s.xferLocks.HeldHere(req.ID) {
		// Driven here right now (in a batch, perhaps): no need to ask the database.
		return nil, fmt.Errorf("transfer %s: %w", req.ID, ErrInProgress)
	}
	mine := false // journaled by this call's batch, which then sent it back
	if !s.cfg.NoBatch {
		r := s.submit(ctx, req)
		switch {
		case !r.slow:
			return r.t, r.err
		case r.lease != nil: // journaled, and still leased: go on from there
			return s.runFrom(ctx, r.t, &req, true, r.lease)
		}
		mine = r.journaled
	}
	// A transfer journaled under this id before is resumed: a read, where
	// leasing it would cost two writes for a replay.
	switch t, err := s.store.get(ctx, req.ID); {
	case err == nil:
		return s.resume(ctx, t, req, mine)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	return s.run(ctx, newTransfer(req, s.cfg.Now()), &req, false)
}

// Deposit moves amount from the external account into accountID.
func (s *Service) Deposit(ctx context.Context, id, accountID string, amount int64, c account.Currency, reference string) (*Transfer, error) {
	return s.Transfer(ctx, ExternalRequest(KindDeposit, id, accountID, amount, c, reference))
}

// Withdraw moves amount from accountID to the external account.
func (s *Service) Withdraw(ctx context.Context, id, accountID string, amount int64, c account.Currency, reference string) (*Transfer, error) {
	return s.Transfer(ctx, ExternalRequest(KindWithdrawal, id, accountID, amount, c, reference))
}

// ExternalRequest is the request of a deposit into accountID, or a withdrawal
// from it (kind): a transfer from or to the currency's external account.
func ExternalRequest(kind Kind, id, accountID string, amount int64, c account.Currency, reference string) Request {
	r := Request{ID: id, Kind: kind, From: account.ExternalID(c), To: accountID, Amount: amount, Currency: c, Reference: reference}
	if kind == KindWithdrawal {
		r.From, r.To = accountID, account.ExternalID(c)
	}
	return r
}

// Get returns the transfer with the given id, or an error wrapping ErrNotFound.
func (s *Service) Get(ctx context.Context, id string) (*Transfer, error) {
	return s.store.get(ctx, id)
}

// resume returns or drives a transfer found journaled; mine says this call
// journaled it (its batch did, then sent it back).
func (s *Service) resume(ctx context.Context, t *Transfer, req Request, mine bool) (*Transfer, error) {
	if !t.Matches(req) {
		return nil, fmt.Errorf("transfer %s: %w", req.ID, ErrIDConflict)
	}
	if t.State.Terminal() {
		t.Replayed = !mine
		return t, t.Err()
	}
	return s.run(ctx, t, &req, mine)
}

// run leases the transfer (journaling it first if new) and drives it to a
// terminal state, picking it up again if a lease is lost on the way. mine
// says this call journaled it already; req is nil for recovery.
func (s *Service) run(ctx context.Context, t *Transfer, req *Request, mine bool) (*Transfer, error) {
	return s.runFrom(ctx, t, req, mine, nil)
}

// runFrom is run, starting with held if not nil: the transfer's lease, taken
// by this call's batch and handed over with the transfer.
func (s *Service) runFrom(ctx context.Context, t *Transfer, req *Request, mine bool, held *lock.Lease) (*Transfer, error) {
	lease := s.xferLocks.AcquireOrInsert
	if req != nil && req.NoWait {
		lease = s.xferLocks.TryAcquireOrInsert
	}
	for attempt := 0; ; attempt++ {
		var tl *lock.Lease
		var err error
		if held != nil {
			tl, held = held, nil
		} else {
			tl, err = lease(ctx, t.ID, s.store.newFields(t))
		}
		if req != nil && req.NoWait && errors.Is(err, lock.ErrHeld) {
			return nil, fmt.Errorf("transfer %s: %w", t.ID, ErrInProgress)
		}
		if err != nil {
			return nil, fmt.Errorf("transfer %s: %w", t.ID, err)
		}
		mine = mine || tl.Created
		cur, err := s.store.decode(tl.Doc)
		if err != nil {
			s.giveBack(tl)
			return nil, err
		}
		if !tl.Created && req != nil && !cur.Matches(*req) {
			s.giveBack(tl)
			return nil, fmt.Errorf("transfer %s: %w", t.ID, ErrIDConflict)
		}
		if cur.State.Terminal() { // a replay: nothing to drive
			s.giveBack(tl)
			cur.Replayed = !mine
			return cur, cur.Err()
		}
		done, err := s.drive(ctx, tl, cur)
		if err == nil {
			done.Replayed = !mine
			return done, done.Err()
		}
		var crash errCrash
		if errors.As(err, &crash) {
			s.xferLocks.Drop(tl)
			return nil, err
		}
		s.giveBack(tl)
		if !errors.Is(err, lock.ErrLeaseLost) || attempt >= s.cfg.LeaseLostRetries {
			return nil, err
		}
	}
}

// giveBack releases a lease whatever state ctx is in.
func (s *Service) giveBack(l *lock.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.xferLocks.Release(ctx, l)
}

// check applies the rules to the accounts as read; "" means they pass.
// Funds are not checked: the debit's filter does that atomically.
func check(r Request, from, to *account.Account) Reason {
	switch {
	case from == nil || to == nil:
		return ReasonAccountNotFound
	case !from.Active() || !to.Active():
		return ReasonAccountInactive
	case from.Currency != r.Currency || to.Currency != r.Currency:
		return ReasonCurrencyMismatch
	}
	if _, err := account.Add(to.Balance, r.Amount); err != nil {
		return ReasonOverflow
	}
	if _, err := account.Sub(from.Balance, r.Amount); err != nil {
		return ReasonOverflow
	}
	return ""
}

func (s *Service) ensureExternal(ctx context.Context, c account.Currency) error {
	s.extMu.Lock()
	ok := s.ext[c]
	s.extMu.Unlock()
	if ok {
		return nil
	}
	if _, err := s.accounts.EnsureExternal(ctx, c); err != nil {
		return err
	}
	s.extMu.Lock()
	s.ext[c] = true
	s.extMu.Unlock()
	return nil
}
