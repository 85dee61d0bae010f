package account

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Status is an account's lifecycle state. Only active accounts take part in transfers.
type Status string

// Account statuses.
const (
	StatusActive Status = "active"
	StatusFrozen Status = "frozen"
	StatusClosed Status = "closed"
)

// Validate reports whether s is a known status.
func (s Status) Validate() error {
	switch s {
	case StatusActive, StatusFrozen, StatusClosed:
		return nil
	}
	return fmt.Errorf("%w: status %q", ErrInvalid, string(s))
}

// Kind tells customer accounts from the system accounts that stand for the world outside the bank.
type Kind string

// Account kinds.
const (
	// KindCustomer accounts belong to a customer and may never go below zero.
	KindCustomer Kind = "customer"
	// KindExternal is the one system account per currency that deposits come
	// from and withdrawals go to. Its balance may be negative: minus the money
	// held by customers, so that all balances of a currency sum to zero.
	KindExternal Kind = "external"
)

// MaxOwnerLen bounds the owner field, in bytes.
const MaxOwnerLen = 256

// Account is a balance in one currency, held by an owner.
//
// Balance is in minor units of Currency (cents for USD). It changes only
// through transfers (package transaction), which keep the ids of transfers
// half-applied to the account in PendingTransfers.
type Account struct {
	ID               string    `bson:"_id"`
	Owner            string    `bson:"owner"`
	Currency         Currency  `bson:"currency"`
	Balance          int64     `bson:"balance"`
	Status           Status    `bson:"status"`
	Kind             Kind      `bson:"kind"`
	CreatedAt        time.Time `bson:"createdAt"`
	UpdatedAt        time.Time `bson:"updatedAt"`
	PendingTransfers []string  `bson:"pendingTransfers,omitempty"`
}

// New returns a new active customer account with a random UUID and zero balance.
func New(owner string, currency Currency, now time.Time) (*Account, error) {
	now = now.UTC().Truncate(time.Millisecond) // BSON dates hold milliseconds
	a := &Account{
		ID:        uuid.NewString(),
		Owner:     owner,
		Currency:  currency,
		Status:    StatusActive,
		Kind:      KindCustomer,
		CreatedAt: now,
		UpdatedAt: now,
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// Validate checks the account's invariants.
func (a *Account) Validate() error {
	if a.ID == "" {
		return fmt.Errorf("%w: empty id", ErrInvalid)
	}
	if err := a.Currency.Validate(); err != nil {
		return err
	}
	if err := a.Status.Validate(); err != nil {
		return err
	}
	switch a.Kind {
	case KindCustomer:
		if strings.TrimSpace(a.Owner) == "" {
			return fmt.Errorf("%w: empty owner", ErrInvalid)
		}
		if a.Balance < 0 {
			return fmt.Errorf("%w: negative balance %d", ErrInvalid, a.Balance)
		}
	case KindExternal:
	default:
		return fmt.Errorf("%w: kind %q", ErrInvalid, string(a.Kind))
	}
	if len(a.Owner) > MaxOwnerLen || !utf8.ValidString(a.Owner) {
		return fmt.Errorf("%w: owner must be valid UTF-8 of at most %d bytes", ErrInvalid, MaxOwnerLen)
	}
	return nil
}

// Active reports whether the account may take part in transfers.
func (a *Account) Active() bool { return a.Status == StatusActive }

// CanGoNegative reports whether the account's balance may fall below zero.
func (a *Account) CanGoNegative() bool { return a.Kind == KindExternal }

// externalNS namespaces the deterministic ids of external accounts.
var externalNS = uuid.MustParse("6f1c1a2e-5b1d-4c8e-9a49-0c5d7e0b2a11")

// ExternalID is the id of the external account of currency c. It is a
// name-based UUID, the same in every instance, so no lookup is needed.
func ExternalID(c Currency) string {
	return uuid.NewSHA1(externalNS, []byte("external:"+string(c))).String()
}

// NewExternal returns the external account of currency c.
func NewExternal(c Currency, now time.Time) *Account {
	now = now.UTC().Truncate(time.Millisecond)
	return &Account{
		ID:        ExternalID(c),
		Owner:     "bankd:external",
		Currency:  c,
		Status:    StatusActive,
		Kind:      KindExternal,
		CreatedAt: now,
		UpdatedAt: now,
	}
}
