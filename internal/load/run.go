package load

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// account is one account created at setup.
type account struct {
	id        string
	deposited int64 // minor units
}

// retried is a transfer whose first answer was dropped on purpose.
type retried struct {
	key   string
	body  []byte
	from  int
	first *Result // the dropped answer, when it arrived before the drop
	final *Result // the answer the retries got; nil if none came
}

type transferRequest struct {
	From     string `json:"from_account_id"`
	To       string `json:"to_account_id"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Reference is the Idempotency-Key, so the history shows which
	// transfers a key produced, including any its dropped tries made.
	Reference string `json:"reference"`
}

// runner holds one run's state.
type runner struct {
	cfg      Config
	c        *Client
	runID    string // makes keys unique across runs against the same service
	seq      atomic.Int64
	accounts []account
	st       *stats

	mu      sync.Mutex
	retried []*retried
}

// Run sets up the accounts, drives the load, checks the invariants and
// returns the report. It returns an error only when the run could not be
// carried out (bad config, setup failed); broken invariants are in the
// report. Cancelling ctx stops the load early; the checks still run.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	r := &runner{
		cfg:   cfg,
		c:     NewClient(cfg.URL, cfg.APIKey, cfg.Clients, cfg.RequestTimeout),
		runID: hex.EncodeToString(id[:]),
		st:    newStats(),
	}
	defer r.c.Close()
	// Requests outlive a cancelled ctx: abandoning them would be unplanned drops.
	reqCtx := context.WithoutCancel(ctx)
	if err := r.setup(reqCtx); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	elapsed := r.load(ctx, reqCtx)
	violations := r.check(reqCtx)
	return r.report(elapsed, violations), nil
}

func (r *runner) key(kind string) string {
	return "bankload-" + r.runID + "-" + kind + "-" + strconv.FormatInt(r.seq.Add(1), 10)
}

// setup creates and funds the accounts, Clients at a time.
func (r *runner) setup(ctx context.Context) error {
	r.accounts = make([]account, r.cfg.Accounts)
	return forEach(ctx, r.cfg.Accounts, r.cfg.Clients, func(ctx context.Context, i int) error {
		body, _ := json.Marshal(map[string]string{
			"currency": r.cfg.Currency,
			"owner":    "bankload-" + r.runID + "-" + strconv.Itoa(i),
		})
		res, _, err := r.c.PostUntilAnswer(ctx, "/v1/accounts", r.key("account"), body, r.cfg.Retry)
		if err != nil {
			return fmt.Errorf("creating account %d: %w", i, err)
		}
		var acct struct {
			ID string `json:"id"`
		}
		if res.Status != 201 || json.Unmarshal(res.Body, &acct) != nil || acct.ID == "" {
			return fmt.Errorf("creating account %d: %s", i, describe(res))
		}
		r.accounts[i].id = acct.ID
		if r.cfg.InitialBalance == 0 {
			return nil
		}
		body, _ = json.Marshal(map[string]any{"amount": r.cfg.InitialBalance, "currency": r.cfg.Currency})
		res, _, err = r.c.PostUntilAnswer(ctx, "/v1/accounts/"+acct.ID+"/deposits", r.key("deposit"), body, r.cfg.Retry)
		if err != nil {
			return fmt.Errorf("funding account %s: %w", acct.ID, err)
		}
		if res.Status != 201 {
			return fmt.Errorf("funding account %s: %s", acct.ID, describe(res))
		}
		r.accounts[i].deposited = r.cfg.InitialBalance
		return nil
	})
}

// forEach calls f for 0..n-1 on up to workers goroutines, stopping at the
// first error.
func forEach(ctx context.Context, n, workers int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// load runs the clients until the duration is up, the transfer budget is
// spent or stop is cancelled, and returns how long that took.
func (r *runner) load(stop, ctx context.Context) time.Duration {
	stop, cancel := context.WithTimeout(stop, r.cfg.Duration)
	defer cancel()
	var issued atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for i := range r.cfg.Clients {
		wg.Go(func() { r.client(stop, ctx, i, &issued) })
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := start
	for {
		select {
		case <-finished:
			return time.Since(start)
		case now := <-tick.C:
			if r.cfg.Progress != nil {
				r.st.progress(r.cfg.Progress, now.Sub(start), now.Sub(last))
			} else {
				r.st.progress(discard{}, now.Sub(start), now.Sub(last))
			}
			last = now
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// client is one load client: it sends transfers one after another.
func (r *runner) client(stop, ctx context.Context, i int, issued *atomic.Int64) {
	rng := mrand.New(mrand.NewPCG(r.cfg.Seed, uint64(i)))
	n := len(r.accounts)
	for stop.Err() == nil {
		if r.cfg.Transfers > 0 && issued.Add(1) > r.cfg.Transfers {
			return
		}
		from, to := r.cfg.Skew.Pick(rng, n)
		key := r.key("transfer")
		body, _ := json.Marshal(transferRequest{
			From:      r.accounts[from].id,
			To:        r.accounts[to].id,
			Amount:    1 + rng.Int64N(r.cfg.AmountMax),
			Currency:  r.cfg.Currency,
			Reference: key,
		})
		if r.cfg.RetryRate > 0 && rng.Float64() < r.cfg.RetryRate {
			r.dropAndRetry(ctx, rng, key, body, from)
			continue
		}
		res, err := r.c.Post(ctx, "/v1/transfers", key, body)
		if err != nil {
			r.st.outcome("transport_error")
			continue
		}
		r.st.latency(res.Latency)
		r.st.outcome(res.Outcome())
	}
}

// dropAndRetry sends a transfer, drops its answer — half the time by closing
// the connection as soon as the request is sent, half the time by a client
// timeout somewhere within the recent median latency — and retries with the
// same key and body until it gets an answer.
func (r *runner) dropAndRetry(ctx context.Context, rng *mrand.Rand, key string, body []byte, from int) {
	var delay time.Duration
	if p50 := r.st.recentP50.Load(); rng.IntN(2) == 1 && p50 > 0 {
		delay = time.Duration(rng.Int64N(p50 + 1))
	}
	rt := &retried{key: key, body: body, from: from}
	start := time.Now()
	rt.first = r.c.PostDropped(ctx, "/v1/transfers", key, body, delay)
	final, tries, err := r.c.PostUntilAnswer(ctx, "/v1/transfers", key, body, r.cfg.Retry)
	rt.final = final
	r.st.retried(tries, rt.first == nil, time.Since(start))
	r.mu.Lock()
	r.retried = append(r.retried, rt)
	r.mu.Unlock()
	if err != nil {
		r.st.outcome("no_answer")
		return
	}
	r.st.latency(final.Latency)
	r.st.outcome(final.Outcome())
}

// describe summarizes an unexpected answer for a message.
func describe(res *Result) string {
	body := string(res.Body)
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	return fmt.Sprintf("HTTP %d %s: %s", res.Status, res.Code, body)
}

// round2 rounds to two decimals for the report.
func round2(f float64) float64 { return math.Round(f*100) / 100 }
