package load

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func testConfig(url string) Config {
	c := DefaultConfig()
	c.URL = url
	c.Accounts = 8
	c.Clients = 4
	c.Duration = 400 * time.Millisecond
	c.InitialBalance = 500
	c.AmountMax = 200 // some transfers find insufficient funds
	c.RetryRate = 0.3
	c.Retry = fastRetry
	return c
}

func TestRunAgainstHealthyBank(t *testing.T) {
	b := newFakeBank()
	b.delay = time.Millisecond
	b.busyEvery = 10
	cfg := testConfig(b.start(t).URL)
	cfg.Skew = Skew{Hot: 2, Percent: 50}
	var progress bytes.Buffer
	cfg.Progress = &progress
	cfg.Duration = 1100 * time.Millisecond // one progress line
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.InvariantsOK || len(rep.Violations) > 0 {
		t.Fatalf("invariants broken on a correct bank: %v", rep.Violations)
	}
	if rep.TransfersOK == 0 || rep.Retries == 0 || rep.RetryMaxMs <= 0 || rep.RetryRequests < rep.Retries || rep.P50ms <= 0 || rep.P99ms < rep.P50ms {
		t.Errorf("implausible report %+v", rep)
	}
	if rep.Errors["account_busy"] == 0 || rep.Errors["insufficient_funds"] == 0 {
		t.Errorf("errors %v: want account_busy and insufficient_funds counted", rep.Errors)
	}
	if _, ok := rep.Errors["ok"]; ok {
		t.Error("ok counted as an error")
	}
	if !strings.Contains(progress.String(), "rate=") || !strings.Contains(progress.String(), "p99=") {
		t.Errorf("progress output %q", progress.String())
	}
	// Every retried key took effect at most once (exactly once if it succeeded).
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, n := range b.applied {
		if n != 1 {
			t.Errorf("key %s applied %d times", k, n)
		}
	}
}

func TestRunStopsAtTransferBudget(t *testing.T) {
	b := newFakeBank()
	cfg := testConfig(b.start(t).URL)
	cfg.Duration = 10 * time.Second
	cfg.Transfers = 37
	start := time.Now()
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Transfers != 37 || !rep.InvariantsOK || time.Since(start) > 5*time.Second {
		t.Errorf("report %+v after %v", rep, time.Since(start))
	}
}

func TestRunCatchesBrokenBank(t *testing.T) {
	for _, c := range []struct {
		name    string
		breakIt func(*fakeBank)
		want    string
	}{
		// A key retried more than once may make more than two transfers: any number but one is the violation.
		{"keys ignored", func(b *fakeBank) { b.forgetful = true; b.delay = 20 * time.Millisecond }, "transfers from account"},
		{"dropped tries forgotten", func(b *fakeBank) { b.forgetsDropped = true; b.delay = 20 * time.Millisecond }, "transfers from account"},
		{"money lost", func(b *fakeBank) { b.leaky = true }, "sum of balances"},
		{"no audit endpoint", func(b *fakeBank) { b.noAudit = true }, "audit endpoint missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newFakeBank()
			c.breakIt(b)
			cfg := testConfig(b.start(t).URL)
			cfg.Duration = 200 * time.Millisecond
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.InvariantsOK || !strings.Contains(strings.Join(rep.Violations, "\n"), c.want) {
				t.Errorf("violations %q, want one about %q", rep.Violations, c.want)
			}
		})
	}
}

func TestRunFailsWhenSetupFails(t *testing.T) {
	cfg := testConfig("http://127.0.0.1:1") // nothing listens there
	cfg.Retry.Deadline = 100 * time.Millisecond
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "setup") {
		t.Fatalf("err %v, want a setup failure", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*Config)
	}{
		{"url without scheme", func(c *Config) { c.URL = "127.0.0.1:8080" }},
		{"url ftp", func(c *Config) { c.URL = "ftp://x" }},
		{"one account", func(c *Config) { c.Accounts = 1 }},
		{"no clients", func(c *Config) { c.Clients = 0 }},
		{"unbounded", func(c *Config) { c.Duration = 0 }},
		{"negative transfers", func(c *Config) { c.Transfers = -1 }},
		{"retry rate above 1", func(c *Config) { c.RetryRate = 1.5 }},
		{"negative retry rate", func(c *Config) { c.RetryRate = -0.1 }},
		{"zero amount-max", func(c *Config) { c.AmountMax = 0 }},
		{"negative balance", func(c *Config) { c.InitialBalance = -1 }},
		{"overflowing deposits", func(c *Config) { c.InitialBalance = 1 << 62 }},
		{"more hot than accounts", func(c *Config) { c.Skew = Skew{Hot: 101, Percent: 50} }},
		{"no request timeout", func(c *Config) { c.RequestTimeout = 0 }},
	} {
		cfg := DefaultConfig()
		if err := cfg.Validate(); err != nil {
			t.Fatalf("defaults invalid: %v", err)
		}
		c.change(&cfg)
		if cfg.Validate() == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
