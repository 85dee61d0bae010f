package transaction

import (
	"context"
	"fmt"
	"sort"

	"github.com/bankd/bankd/account"
)

// Violation is one broken invariant found by Audit.
type Violation struct {
	Kind      string // "balance", "sum", "negative", "overflow", "unknown_account"
	AccountID string
	Currency  account.Currency
	Want, Got int64
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: account %s %s: want %d, got %d %s", v.Kind, v.AccountID, v.Currency, v.Want, v.Got, v.Detail)
}

// AuditReport is the outcome of Audit.
type AuditReport struct {
	Accounts   int
	Transfers  int
	Unfinished int                        // pending or applied transfers seen
	Totals     map[account.Currency]int64 // sum of all balances per currency (should be 0)
	Violations []Violation
}

// OK reports whether no invariant is broken.
func (r *AuditReport) OK() bool { return len(r.Violations) == 0 }

// Audit checks conservation of money:
//   - every account's balance equals its credits minus its debits over the
//     legs applied to it: all legs of applied and completed transfers, and the
//     legs of pending transfers whose marker is on the account;
//   - customer balances are not negative;
//   - per currency, all balances including the external account sum to zero.
//
// It reads accounts and transfers one after the other, not as a snapshot:
// run it while no transfers are moving, or expect transient mismatches.
func (s *Service) Audit(ctx context.Context) (*AuditReport, error) {
	rep := &AuditReport{Totals: make(map[account.Currency]int64)}
	var overflow []Violation
	add := func(m map[string]int64, id string, delta int64, cur account.Currency) {
		v, err := account.Add(m[id], delta)
		if err != nil {
			overflow = append(overflow, Violation{Kind: "overflow", AccountID: id, Currency: cur, Detail: err.Error()})
		}
		m[id] = v
	}
	net := make(map[string]int64)
	pending := make(map[string]*Transfer)
	err := s.store.each(ctx, func(t *Transfer) error {
		rep.Transfers++
		switch t.State {
		case StateApplied, StateCompleted:
			add(net, t.From, -t.Amount, t.Currency)
			add(net, t.To, t.Amount, t.Currency)
		case StatePending:
			pending[t.ID] = t
		}
		if t.State == StatePending || t.State == StateApplied {
			rep.Unfinished++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool)
	err = s.accounts.Each(ctx, func(a *account.Account) error {
		rep.Accounts++
		seen[a.ID] = true
		for _, id := range a.PendingTransfers {
			if t := pending[id]; t != nil {
				if a.ID == t.From {
					add(net, a.ID, -t.Amount, t.Currency)
				} else if a.ID == t.To {
					add(net, a.ID, t.Amount, t.Currency)
				}
			}
		}
		if net[a.ID] != a.Balance {
			rep.Violations = append(rep.Violations, Violation{Kind: "balance", AccountID: a.ID, Currency: a.Currency,
				Want: net[a.ID], Got: a.Balance, Detail: "(credits − debits of applied legs)"})
		}
		if a.Balance < 0 && !a.CanGoNegative() {
			rep.Violations = append(rep.Violations, Violation{Kind: "negative", AccountID: a.ID, Currency: a.Currency, Got: a.Balance})
		}
		total, err := account.Add(rep.Totals[a.Currency], a.Balance)
		if err != nil {
			overflow = append(overflow, Violation{Kind: "overflow", Currency: a.Currency, Detail: err.Error()})
		}
		rep.Totals[a.Currency] = total
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id, v := range net {
		if !seen[id] && v != 0 {
			rep.Violations = append(rep.Violations, Violation{Kind: "unknown_account", AccountID: id, Want: v,
				Detail: "transfers move money of an account that does not exist"})
		}
	}
	curs := make([]string, 0, len(rep.Totals))
	for c := range rep.Totals {
		curs = append(curs, string(c))
	}
	sort.Strings(curs)
	for _, c := range curs {
		if t := rep.Totals[account.Currency(c)]; t != 0 {
			rep.Violations = append(rep.Violations, Violation{Kind: "sum", Currency: account.Currency(c), Got: t,
				Detail: "(all balances of the currency, external included)"})
		}
	}
	rep.Violations = append(rep.Violations, overflow...)
	return rep, nil
}
