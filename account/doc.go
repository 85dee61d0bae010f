// Package account defines bank accounts and money.
//
// Amounts are int64 counts of a currency's minor unit (cents for USD, yen for
// JPY); there are no floats anywhere. Add and Sub detect int64 overflow.
// Currencies are ISO 4217 codes from a fixed table; anything else is
// ErrUnknownCurrency.
//
// An Account belongs to an owner, holds one currency and has a status; only
// active accounts take part in transfers. Besides customer accounts there is
// one external account per currency (ExternalID), the counterpart of every
// deposit and withdrawal: its balance is minus the money customers hold, so
// that the balances of a currency always sum to zero, which the audit in
// package transaction checks.
//
// Balances are changed only by package transaction, under a lease from
// package lock. Store (mongo.go) creates and reads accounts in MongoDB.
package account
