package account

import "errors"

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotFound: no account has the given id.
	ErrNotFound = errors.New("account not found")
	// ErrInvalid: an account or request field is malformed (wrapped with the detail).
	ErrInvalid = errors.New("invalid account")
	// ErrUnknownCurrency: the code is not an ISO 4217 currency bankd knows.
	ErrUnknownCurrency = errors.New("unknown currency")
	// ErrOverflow: an amount computation does not fit in int64 minor units.
	ErrOverflow = errors.New("amount overflow")
)
