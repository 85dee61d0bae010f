package transaction

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/bankd/bankd/account"
	"github.com/bankd/bankd/internal/testmongo"
)

func TestRules(t *testing.T) {
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{})
	ctx := context.Background()
	ids := openAccounts(t, s, 3, 100)
	a, b, frozen := ids[0], ids[1], ids[2]
	eur, err := s.Accounts().Create(ctx, "eve", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Accounts().SetStatus(ctx, frozen, account.StatusFrozen); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		req       Request
		wantErr   error
		wantState State  // "" when nothing is journaled
		wantWhy   Reason // with StateFailed
		wantA     int64
	}{
		{"zero amount", Request{From: a, To: b, Amount: 0, Currency: usd}, ErrInvalid, "", "", 100},
		{"negative amount", Request{From: a, To: b, Amount: -5, Currency: usd}, ErrInvalid, "", "", 100},
		{"same account", Request{From: a, To: a, Amount: 5, Currency: usd}, ErrInvalid, "", "", 100},
		{"unknown currency", Request{From: a, To: b, Amount: 5, Currency: "XXX"}, account.ErrUnknownCurrency, "", "", 100},
		{"external in a transfer", Request{From: account.ExternalID(usd), To: b, Amount: 5, Currency: usd}, ErrInvalid, "", "", 100},
		{"missing account", Request{From: a, To: uuid.NewString(), Amount: 5, Currency: usd}, account.ErrNotFound, StateFailed, ReasonAccountNotFound, 100},
		{"currency mismatch", Request{From: a, To: eur.ID, Amount: 5, Currency: usd}, ErrCurrencyMismatch, StateFailed, ReasonCurrencyMismatch, 100},
		{"frozen account", Request{From: a, To: frozen, Amount: 5, Currency: usd}, ErrAccountInactive, StateFailed, ReasonAccountInactive, 100},
		{"insufficient funds", Request{From: a, To: b, Amount: 101, Currency: usd}, ErrInsufficientFunds, StateFailed, ReasonInsufficientFunds, 100},
		{"ok", Request{From: a, To: b, Amount: 30, Currency: usd}, nil, StateCompleted, "", 70},
		{"exact balance", Request{From: a, To: b, Amount: 70, Currency: usd}, nil, StateCompleted, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.ID = uuid.NewString()
			tr, err := s.Transfer(ctx, tc.req)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got error %v, want %v", err, tc.wantErr)
			}
			stored, gerr := s.Get(ctx, tc.req.ID)
			switch {
			case tc.wantState == "":
				if !errors.Is(gerr, ErrNotFound) {
					t.Errorf("journal: got %v, %v; want nothing journaled", stored, gerr)
				}
			case gerr != nil:
				t.Fatalf("journal: %v", gerr)
			case tr == nil || tr.State != tc.wantState || stored.State != tc.wantState:
				t.Errorf("state: returned %v, stored %s; want %s", tr, stored.State, tc.wantState)
			}
			if tc.wantState == StateFailed && stored.Reason != tc.wantWhy {
				t.Errorf("reason = %q, want %q", stored.Reason, tc.wantWhy)
			}
			if got := balance(t, s, a); got != tc.wantA {
				t.Errorf("balance of a = %d, want %d", got, tc.wantA)
			}
		})
	}
	mustAudit(t, s)
}

func TestSameIDNeverMovesMoneyTwice(t *testing.T) {
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{})
	other := newSvc(t, secondInstance(t, db), Config{})
	ctx := context.Background()
	ids := openAccounts(t, s, 2, 100)
	req := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 40, Currency: usd, Reference: "rent"}

	first, err := s.Transfer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []*Service{s, other, s} {
		again, err := svc.Transfer(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != first.ID || again.State != StateCompleted {
			t.Errorf("replay = %+v, want the completed transfer %s", again, first.ID)
		}
	}
	if got := balance(t, s, ids[0]); got != 60 {
		t.Errorf("balance = %d, want 60 (moved once)", got)
	}
	changed := req
	changed.Amount = 41
	if _, err := s.Transfer(ctx, changed); !errors.Is(err, ErrIDConflict) {
		t.Errorf("same id, other amount: got %v, want ErrIDConflict", err)
	}
	// An insufficient-funds failure is an outcome too: replayed, not retried.
	poor := Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 1000, Currency: usd}
	for range 2 {
		tr, err := s.Transfer(ctx, poor)
		if !errors.Is(err, ErrInsufficientFunds) || tr == nil || tr.State != StateFailed {
			t.Errorf("insufficient: got %v, %v; want failed transfer and ErrInsufficientFunds", tr, err)
		}
	}
	mustAudit(t, s)
}

func TestDepositWithdraw(t *testing.T) {
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{})
	ctx := context.Background()
	id := openAccounts(t, s, 1, 0)[0]
	if _, err := s.Deposit(ctx, uuid.NewString(), id, 500, usd, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Withdraw(ctx, uuid.NewString(), id, 200, usd, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Withdraw(ctx, uuid.NewString(), id, 301, usd, ""); !errors.Is(err, ErrInsufficientFunds) {
		t.Errorf("overdrawing withdrawal: got %v, want ErrInsufficientFunds", err)
	}
	if got := balance(t, s, id); got != 300 {
		t.Errorf("balance = %d, want 300", got)
	}
	if got := balance(t, s, account.ExternalID(usd)); got != -300 {
		t.Errorf("external balance = %d, want -300", got)
	}
	rep := mustAudit(t, s)
	if rep.Totals[usd] != 0 {
		t.Errorf("USD total = %d, want 0", rep.Totals[usd])
	}
}

func TestList(t *testing.T) {
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{})
	ctx := context.Background()
	ids := openAccounts(t, s, 2, 100)
	var want []string // newest first
	for range 5 {
		tr, err := s.Transfer(ctx, Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 1, Currency: usd})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{tr.ID}, want...)
		time.Sleep(2 * time.Millisecond) // transfers of one millisecond are listed by id
	}
	// The seed deposit of ids[0] is the oldest transfer of the account.
	var got []string
	after, pages := "", 0
	for {
		page, next, err := s.List(ctx, ids[0], 2, after)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tr := range page {
			got = append(got, tr.ID)
		}
		if next == "" {
			break
		}
		after = next
	}
	if pages != 3 || len(got) != 6 {
		t.Fatalf("got %d transfers in %d pages, want 6 in 3", len(got), pages)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("position %d: got %s, want %s", i, got[i], want[i])
		}
	}
	if _, _, err := s.List(ctx, ids[0], 2, "not-a-cursor"); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad cursor: got %v, want ErrInvalid", err)
	}
	if _, _, err := s.List(ctx, ids[0], 0, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("limit 0: got %v, want ErrInvalid", err)
	}
}

func TestAuditFindsViolations(t *testing.T) {
	db := testmongo.Database(t)
	s := newSvc(t, db, Config{})
	ctx := context.Background()
	ids := openAccounts(t, s, 2, 100)
	mustAudit(t, s)
	// Money from nowhere: a balance changed outside the journal.
	if _, err := db.Collection("accounts").UpdateOne(ctx, map[string]any{"_id": ids[1]},
		map[string]any{"$inc": map[string]any{"balance": int64(7)}}); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, v := range rep.Violations {
		kinds[v.Kind] = true
	}
	if !kinds["balance"] || !kinds["sum"] || rep.Totals[usd] != 7 {
		t.Errorf("violations %v, USD total %d; want balance and sum violations, total 7", rep.Violations, rep.Totals[usd])
	}
}
