// Command bankload is a load generator for bankd's HTTP API. It creates and
// funds accounts, runs concurrent transfers (dropping a share of the answers
// on purpose and retrying those with the same Idempotency-Key), then checks
// through the API that money was conserved, that every retried request took
// effect exactly once and that bankd's audit passes. It prints one final JSON
// line and exits 1 when an invariant is broken (2 on bad usage).
//
//	go run ./cmd/bankload -url http://127.0.0.1:8080 -accounts 100 -clients 16 -duration 10s
//	go run ./cmd/bankload -embedded -skew hot:2:90 -retry-rate 0.1
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/bankd/bankd/internal/app"
	"github.com/bankd/bankd/internal/load"
)

// options are the command line beyond load.Config.
type options struct {
	cfg        load.Config
	embedded   bool
	json       bool
	cpuProfile string
	memProfile string
}

// parseFlags turns the command line into options; getenv supplies the
// environment defaults (BANKD_API_KEY).
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{cfg: load.DefaultConfig()}
	c := &o.cfg
	fs := flag.NewFlagSet("bankload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var skew string
	fs.StringVar(&c.URL, "url", c.URL, "bankd's base URL")
	fs.StringVar(&c.APIKey, "api-key", getenv("BANKD_API_KEY"), "API key sent as `Authorization: Bearer` (default $BANKD_API_KEY)")
	fs.BoolVar(&o.embedded, "embedded", false, "start bankd in-process on a temporary data dir instead of using -url")
	fs.IntVar(&c.Accounts, "accounts", c.Accounts, "number of accounts to create")
	fs.IntVar(&c.Clients, "clients", c.Clients, "number of concurrent clients")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "how long the load runs (always bounded)")
	fs.Int64Var(&c.Transfers, "transfers", 0, "stop after this many transfers, if sooner than -duration (0: no limit)")
	fs.StringVar(&skew, "skew", "uniform", "account choice: uniform, or hot:K:P (K hot accounts take P% of transfers)")
	fs.Float64Var(&c.RetryRate, "retry-rate", 0, "fraction of transfers whose answer is dropped and retried with the same Idempotency-Key")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed for account and amount choice")
	fs.Int64Var(&c.AmountMax, "amount-max", c.AmountMax, "transfer amounts are uniform in [1, amount-max] minor units")
	fs.Int64Var(&c.InitialBalance, "initial-balance", c.InitialBalance, "deposit into each account at setup, in minor units")
	fs.StringVar(&c.Currency, "currency", c.Currency, "currency of the accounts")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "timeout of one HTTP request")
	fs.BoolVar(&o.json, "json", false, "print only the final JSON line")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (with -embedded: bankd and the engine too) to `file`")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile (allocations included) of this process to `file` at the end")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var err error
	if c.Skew, err = load.ParseSkew(skew); err != nil {
		return nil, err
	}
	if o.embedded && isSet(fs, "url") {
		return nil, errors.New("-embedded and -url exclude each other")
	}
	if o.embedded {
		c.URL = "http://127.0.0.1:1" // replaced by the embedded server's address
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	o, err := parseFlags(args, os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bankload:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once

	if !o.json {
		o.cfg.Progress = os.Stderr
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bankload: -cpuprofile:", err)
			return 2
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	if o.memProfile != "" {
		defer writeHeapProfile(o.memProfile)
	}
	if o.embedded {
		app.TuneGC() // as cmd/bankd does: this process is bankd too
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		url, shutdown, err := startEmbedded(context.Background(), logger, o.cfg.APIKey)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bankload: -embedded:", err)
			return 1
		}
		defer shutdown()
		o.cfg.URL = url
	}
	if !o.json {
		c := o.cfg
		fmt.Fprintf(os.Stderr, "bankload: %s  accounts=%d clients=%d duration=%s transfers=%d skew=%s retry-rate=%g seed=%d\n",
			c.URL, c.Accounts, c.Clients, c.Duration, c.Transfers, c.Skew, c.RetryRate, c.Seed)
	}
	rep, err := load.Run(ctx, o.cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bankload:", err)
		return 1
	}
	line, _ := json.Marshal(rep)
	fmt.Println(string(line))
	if !rep.InvariantsOK {
		if !o.json {
			for _, v := range rep.Violations {
				fmt.Fprintln(os.Stderr, "bankload: INVARIANT BROKEN:", v)
			}
		}
		return 1
	}
	return 0
}

func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bankload: -memprofile:", err)
	}
}
