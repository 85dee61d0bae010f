package account

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/bankd/bankd/internal/testmongo"
)

func TestAddSub(t *testing.T) {
	tests := []struct {
		op      string
		a, b    int64
		want    int64
		wantErr error
	}{
		{"+", 1, 2, 3, nil},
		{"+", math.MaxInt64, 1, 0, ErrOverflow},
		{"+", math.MinInt64, -1, 0, ErrOverflow},
		{"+", math.MaxInt64, math.MinInt64, -1, nil},
		{"-", 5, 7, -2, nil},
		{"-", math.MinInt64, 1, 0, ErrOverflow},
		{"-", math.MaxInt64, -1, 0, ErrOverflow},
		{"-", 0, math.MinInt64, 0, ErrOverflow},
		{"-", -1, math.MinInt64, math.MaxInt64, nil},
	}
	for _, tc := range tests {
		f := Add
		if tc.op == "-" {
			f = Sub
		}
		got, err := f(tc.a, tc.b)
		if !errors.Is(err, tc.wantErr) || (err == nil && got != tc.want) {
			t.Errorf("%d %s %d = %d, %v; want %d, %v", tc.a, tc.op, tc.b, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestCurrency(t *testing.T) {
	tests := []struct {
		code    string
		wantErr error
		minor   int
	}{
		{"USD", nil, 2},
		{"JPY", nil, 0},
		{"KWD", nil, 3},
		{"usd", ErrUnknownCurrency, 0},
		{"XXX", ErrUnknownCurrency, 0},
		{"", ErrUnknownCurrency, 0},
	}
	for _, tc := range tests {
		c, err := ParseCurrency(tc.code)
		if !errors.Is(err, tc.wantErr) || c.MinorUnits() != tc.minor {
			t.Errorf("ParseCurrency(%q) = %q (minor %d), %v; want minor %d, %v", tc.code, c, c.MinorUnits(), err, tc.minor, tc.wantErr)
		}
	}
}

func ExampleCurrency_Format() {
	fmt.Println(Currency("USD").Format(-1205))
	fmt.Println(Currency("JPY").Format(500))
	fmt.Println(Currency("KWD").Format(7))
	// Output:
	// -12.05 USD
	// 500 JPY
	// 0.007 KWD
}

func TestValidate(t *testing.T) {
	now := time.Now()
	ok, err := New("alice", "EUR", now)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(a *Account)
		wantErr error
	}{
		{"valid", func(*Account) {}, nil},
		{"no owner", func(a *Account) { a.Owner = " " }, ErrInvalid},
		{"bad currency", func(a *Account) { a.Currency = "EURO" }, ErrUnknownCurrency},
		{"bad status", func(a *Account) { a.Status = "sleeping" }, ErrInvalid},
		{"negative customer", func(a *Account) { a.Balance = -1 }, ErrInvalid},
		{"negative external", func(a *Account) { a.Kind, a.Balance = KindExternal, -1 }, nil},
		{"no id", func(a *Account) { a.ID = "" }, ErrInvalid},
	}
	for _, tc := range tests {
		a := *ok
		tc.mutate(&a)
		if err := a.Validate(); !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.wantErr)
		}
	}
	if ExternalID("USD") != ExternalID("USD") || ExternalID("USD") == ExternalID("EUR") {
		t.Error("external ids must be stable per currency and distinct across currencies")
	}
}

func TestStore(t *testing.T) {
	s := NewStore(testmongo.Database(t), nil)
	ctx := context.Background()
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := s.Create(ctx, "bob", "USD")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, a.ID)
	if err != nil || got.Owner != "bob" || got.Currency != "USD" || got.Status != StatusActive || got.Balance != 0 {
		t.Fatalf("Get = %+v, %v; want bob's active USD account", got, err)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.Create(ctx, "bob", "ABC"); !errors.Is(err, ErrUnknownCurrency) {
		t.Errorf("Create(ABC) = %v, want ErrUnknownCurrency", err)
	}
	for range 2 { // idempotent
		ext, err := s.EnsureExternal(ctx, "USD")
		if err != nil || ext.ID != ExternalID("USD") || ext.Kind != KindExternal {
			t.Fatalf("EnsureExternal = %+v, %v", ext, err)
		}
	}
	if err := s.SetStatus(ctx, a.ID, StatusFrozen); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, ExternalID("USD"), StatusClosed); !errors.Is(err, ErrNotFound) {
		t.Errorf("closing the external account: got %v, want ErrNotFound", err)
	}
	m, err := s.GetMany(ctx, a.ID, ExternalID("USD"), "nope")
	if err != nil || len(m) != 2 || m[a.ID].Status != StatusFrozen {
		t.Errorf("GetMany = %v, %v; want 2 accounts, %s frozen", m, err, a.ID)
	}
	n := 0
	if err := s.Each(ctx, func(*Account) error { n++; return nil }); err != nil || n != 2 {
		t.Errorf("Each saw %d accounts, %v; want 2", n, err)
	}
}
