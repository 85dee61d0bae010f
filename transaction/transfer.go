package transaction

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/bankd/bankd/account"
)

// Sentinel errors; match them with errors.Is. Account lookups fail with
// account.ErrNotFound, lease waits with lock.ErrTimeout.
var (
	// ErrInvalid: the request is malformed (wrapped with the detail).
	ErrInvalid = errors.New("invalid transfer")
	// ErrNotFound: no transfer has the given id.
	ErrNotFound = errors.New("transfer not found")
	// ErrInsufficientFunds: the source account's balance is below the amount.
	ErrInsufficientFunds = errors.New("insufficient funds")
	// ErrCurrencyMismatch: an account's currency differs from the transfer's.
	ErrCurrencyMismatch = errors.New("currency mismatch")
	// ErrAccountInactive: an account is frozen or closed.
	ErrAccountInactive = errors.New("account not active")
	// ErrIDConflict: a transfer with this id exists with different details.
	ErrIDConflict = errors.New("transfer id already used for a different transfer")
	// ErrInProgress: Request.NoWait was set and the transfer with this id is
	// being driven by someone else right now.
	ErrInProgress = errors.New("transfer is being processed by an earlier request")
)

// Kind says what a transfer is for. Deposits and withdrawals are transfers
// from and to the currency's external account.
type Kind string

// Transfer kinds.
const (
	KindTransfer   Kind = "transfer"
	KindDeposit    Kind = "deposit"
	KindWithdrawal Kind = "withdrawal"
)

// State is a transfer's place in the journal's state machine:
//
//	pending ──▶ applied ──▶ completed
//	   │
//	   └──▶ failed
//
// pending: journaled; each leg is applied or not, as the accounts' pending
// markers say. applied: both legs are on the balances, markers may remain.
// completed: markers cleaned up. failed: no leg was applied, Reason says why.
type State string

// Transfer states.
const (
	StatePending   State = "pending"
	StateApplied   State = "applied"
	StateCompleted State = "completed"
	StateFailed    State = "failed"
)

// Terminal reports whether the transfer will not change any more.
func (s State) Terminal() bool { return s == StateCompleted || s == StateFailed }

// Reason is why a transfer failed.
type Reason string

// Failure reasons.
const (
	ReasonInsufficientFunds Reason = "insufficient_funds"
	ReasonCurrencyMismatch  Reason = "currency_mismatch"
	ReasonAccountInactive   Reason = "account_inactive"
	ReasonAccountNotFound   Reason = "account_not_found"
	ReasonOverflow          Reason = "overflow"
)

// Err is the sentinel error matching r.
func (r Reason) Err() error {
	switch r {
	case ReasonInsufficientFunds:
		return ErrInsufficientFunds
	case ReasonCurrencyMismatch:
		return ErrCurrencyMismatch
	case ReasonAccountInactive:
		return ErrAccountInactive
	case ReasonAccountNotFound:
		return account.ErrNotFound
	case ReasonOverflow:
		return account.ErrOverflow
	}
	return fmt.Errorf("transfer failed: %s", string(r))
}

// Limits on free-form fields.
const (
	MaxIDLen        = 128
	MaxReferenceLen = 256
)

// Request asks for a transfer. ID is chosen by the caller (e.g. derived from
// an idempotency key): asking again with the same ID never moves money twice.
type Request struct {
	ID        string
	Kind      Kind // "" means KindTransfer
	From, To  string
	Amount    int64
	Currency  account.Currency
	Reference string
	// NoWait: if the transfer with this ID exists and someone else is
	// driving it right now, return ErrInProgress at once instead of waiting
	// for its outcome (an HTTP retry answers 409 and is asked again later).
	NoWait bool
}

// Validate checks the request on its own, without looking at the accounts.
func (r *Request) Validate() error {
	if r.Kind == "" {
		r.Kind = KindTransfer
	}
	switch {
	case r.ID == "" || len(r.ID) > MaxIDLen:
		return fmt.Errorf("%w: id must be 1 to %d bytes", ErrInvalid, MaxIDLen)
	case r.Amount <= 0:
		return fmt.Errorf("%w: amount must be positive, got %d", ErrInvalid, r.Amount)
	case r.From == "" || r.To == "":
		return fmt.Errorf("%w: both accounts are required", ErrInvalid)
	case r.From == r.To:
		return fmt.Errorf("%w: from and to are the same account", ErrInvalid)
	case len(r.Reference) > MaxReferenceLen || !utf8.ValidString(r.Reference):
		return fmt.Errorf("%w: reference must be valid UTF-8 of at most %d bytes", ErrInvalid, MaxReferenceLen)
	}
	if err := r.Currency.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	ext := account.ExternalID(r.Currency)
	switch r.Kind {
	case KindTransfer:
		if r.From == ext || r.To == ext {
			return fmt.Errorf("%w: the external account takes part only in deposits and withdrawals", ErrInvalid)
		}
	case KindDeposit:
		if r.From != ext {
			return fmt.Errorf("%w: a deposit comes from the external account", ErrInvalid)
		}
	case KindWithdrawal:
		if r.To != ext {
			return fmt.Errorf("%w: a withdrawal goes to the external account", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: kind %q", ErrInvalid, string(r.Kind))
	}
	return nil
}

// Transfer is a journal entry: money moving from one account to another.
type Transfer struct {
	ID        string           `bson:"_id"`
	Kind      Kind             `bson:"kind"`
	From      string           `bson:"from"`
	To        string           `bson:"to"`
	Amount    int64            `bson:"amount"`
	Currency  account.Currency `bson:"currency"`
	Reference string           `bson:"reference,omitempty"`
	State     State            `bson:"state"`
	Reason    Reason           `bson:"reason,omitempty"`
	// Accounts is [From, To], indexed to list an account's transfers.
	Accounts    []string   `bson:"accounts"`
	CreatedAt   time.Time  `bson:"createdAt"`
	UpdatedAt   time.Time  `bson:"updatedAt"`
	CompletedAt *time.Time `bson:"completedAt,omitempty"`

	// Replayed is set on a transfer returned to a call that did not journal
	// it: an earlier call with the same ID did.
	Replayed bool `bson:"-"`
}

func newTransfer(r Request, now time.Time) *Transfer {
	now = now.UTC().Truncate(time.Millisecond)
	return &Transfer{
		ID: r.ID, Kind: r.Kind, From: r.From, To: r.To, Amount: r.Amount,
		Currency: r.Currency, Reference: r.Reference, State: StatePending,
		Accounts: []string{r.From, r.To}, CreatedAt: now, UpdatedAt: now,
	}
}

// Matches reports whether t is what r asks for (same id, same details).
func (t *Transfer) Matches(r Request) bool {
	return t.ID == r.ID && t.Kind == r.Kind && t.From == r.From && t.To == r.To &&
		t.Amount == r.Amount && t.Currency == r.Currency && t.Reference == r.Reference
}

// Err is nil unless the transfer failed, then the sentinel of its reason.
func (t *Transfer) Err() error {
	if t.State != StateFailed {
		return nil
	}
	return fmt.Errorf("transfer %s: %w", t.ID, t.Reason.Err())
}

// Validate checks a stored transfer's invariants.
func (t *Transfer) Validate() error {
	r := Request{ID: t.ID, Kind: t.Kind, From: t.From, To: t.To, Amount: t.Amount, Currency: t.Currency, Reference: t.Reference}
	if err := r.Validate(); err != nil {
		return err
	}
	switch t.State {
	case StatePending, StateApplied, StateCompleted:
	case StateFailed:
		if t.Reason == "" {
			return fmt.Errorf("%w: failed without a reason", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: state %q", ErrInvalid, string(t.State))
	}
	return nil
}
