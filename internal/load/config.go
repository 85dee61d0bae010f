// Package load is bankload's engine: it sets up accounts in bankd over its
// HTTP API, drives concurrent transfers (some of whose answers it drops on
// purpose and retries with the same Idempotency-Key), and then checks through
// the API that money was conserved and every retried request applied once.
package load

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"time"
)

// Config describes one run.
type Config struct {
	URL            string // bankd's base URL
	APIKey         string // sent as a bearer token when not empty
	Accounts       int
	Clients        int
	Duration       time.Duration // the load stops after this long...
	Transfers      int64         // ...or after this many transfers when > 0
	Skew           Skew
	RetryRate      float64 // fraction of transfers whose answer is dropped and retried
	Seed           uint64
	AmountMax      int64 // transfer amounts are uniform in [1, AmountMax]
	InitialBalance int64 // deposited into every account at setup
	Currency       string
	RequestTimeout time.Duration
	Retry          RetryPolicy

	// Progress receives a line a second during the load; nil for none.
	Progress io.Writer
}

// DefaultConfig returns the defaults bankload's flags start from.
func DefaultConfig() Config {
	return Config{
		URL:            "http://127.0.0.1:8080",
		Accounts:       100,
		Clients:        16,
		Duration:       10 * time.Second,
		Seed:           1,
		AmountMax:      100,
		InitialBalance: 100_000,
		Currency:       "USD",
		RequestTimeout: 30 * time.Second,
		Retry:          DefaultRetryPolicy,
	}
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case err != nil:
		return fmt.Errorf("url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("url %q: want http(s)://host[:port]", c.URL)
	case c.Accounts < 2:
		return fmt.Errorf("accounts must be ≥ 2, got %d", c.Accounts)
	case c.Clients < 1:
		return fmt.Errorf("clients must be ≥ 1, got %d", c.Clients)
	case c.Duration <= 0:
		return errors.New("duration must be > 0: every run is bounded in time")
	case c.Transfers < 0:
		return fmt.Errorf("transfers must be ≥ 0 (0: no limit), got %d", c.Transfers)
	case !(c.RetryRate >= 0 && c.RetryRate <= 1):
		return fmt.Errorf("retry-rate must be in [0, 1], got %v", c.RetryRate)
	case c.AmountMax < 1:
		return fmt.Errorf("amount-max must be ≥ 1, got %d", c.AmountMax)
	case c.InitialBalance < 0:
		return fmt.Errorf("initial-balance must be ≥ 0, got %d", c.InitialBalance)
	case c.InitialBalance > math.MaxInt64/int64(c.Accounts):
		return fmt.Errorf("initial-balance %d × %d accounts overflows", c.InitialBalance, c.Accounts)
	case c.RequestTimeout <= 0:
		return errors.New("request timeout must be > 0")
	case c.Currency == "":
		return errors.New("currency is empty")
	}
	return c.Skew.Validate(c.Accounts)
}
