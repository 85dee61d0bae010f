package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Load shape: small enough for two busy cores, contended enough that transfers overlap.
const (
	numAccounts  = 20
	numClients   = 8
	numTransfers = 240
	deposit      = int64(10_000)
	maxAmount    = 3_000 // against 10,000 per account: a few transfers fail for lack of funds
)

// bank is the customer accounts a test created, each funded with one deposit.
type bank struct {
	prefix   string // of every Idempotency-Key, so runs never share keys
	accounts []string
}

// openBank creates the accounts and funds each one, through the same retrying client.
func openBank(t *testing.T, c *client, r router, prefix string) bank {
	t.Helper()
	b := bank{prefix: prefix}
	for i := range numAccounts {
		res := c.resolve(t.Context(), r, 0, "/v1/accounts", fmt.Sprintf("%s-acct-%d", prefix, i),
			fmt.Sprintf(`{"currency":"USD","owner":"owner-%d"}`, i), nil)
		var acct struct {
			ID string `json:"id"`
		}
		if !res.settled || res.final.status != http.StatusCreated || json.Unmarshal(res.final.body, &acct) != nil {
			t.Fatalf("create account %d: %s %v", i, res.final, res.problems)
		}
		b.accounts = append(b.accounts, acct.ID)
	}
	for i, id := range b.accounts {
		res := c.resolve(t.Context(), r, 0, "/v1/accounts/"+id+"/deposits", fmt.Sprintf("%s-dep-%d", prefix, i),
			fmt.Sprintf(`{"amount":%d,"currency":"USD"}`, deposit), nil)
		if !res.settled || res.final.status != http.StatusCreated {
			t.Fatalf("deposit %d: %s %v", i, res.final, res.problems)
		}
	}
	return b
}

// transferOp is one transfer a client wants made exactly once, under its own key.
type transferOp struct {
	key      string
	from, to string
	amount   int64
}

func (o transferOp) body() string {
	return fmt.Sprintf(`{"from_account_id":%q,"to_account_id":%q,"amount":%d,"currency":"USD"}`, o.from, o.to, o.amount)
}

// plan draws n random transfers between distinct accounts.
func (b bank) plan(seed uint64, n int) []transferOp {
	rng := rand.New(rand.NewPCG(seed, 7))
	ops := make([]transferOp, n)
	for i := range ops {
		from := rng.IntN(len(b.accounts))
		to := (from + 1 + rng.IntN(len(b.accounts)-1)) % len(b.accounts)
		ops[i] = transferOp{key: fmt.Sprintf("%s-tr-%d", b.prefix, i), from: b.accounts[from], to: b.accounts[to],
			amount: 1 + rng.Int64N(maxAmount)}
	}
	return ops
}

// outcome is what a client finally learned about one transfer.
type outcome struct {
	status int    // 201 or 422
	id     string // the transfer's id, from a 201
}

// loadRun is a load in progress and its figures.
type loadRun struct {
	ops      []transferOp
	outcomes []outcome // by op index; written by the op's own worker only

	answered atomic.Int64 // ops with a final answer
	attempts atomic.Int64 // requests sent

	mu       sync.Mutex
	statuses map[string]int // non-final answers seen, by "status code" (or "no answer")
	problems []string       // answers a client must never see
	unsolved []string       // keys that never got a final answer
	slowest  time.Duration  // the longest any one transfer took to get its final answer
}

// startLoad runs ops on numClients workers in the background; wait for it with done.
func (c *client) startLoad(ctx context.Context, r router, ops []transferOp) (*loadRun, <-chan struct{}) {
	l := &loadRun{ops: ops, outcomes: make([]outcome, len(ops)), statuses: map[string]int{}}
	next := make(chan int, len(ops))
	for i := range ops {
		next <- i
	}
	close(next)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range numClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				l.run(ctx, c, r, w, i)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	return l, done
}

func (l *loadRun) run(ctx context.Context, c *client, r router, worker, i int) {
	op := l.ops[i]
	start := time.Now()
	res := c.resolve(ctx, r, worker, "/v1/transfers", op.key, op.body(), l.note)
	l.attempts.Add(int64(res.attempts))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.slowest = max(l.slowest, time.Since(start))
	for _, p := range res.problems {
		l.problems = append(l.problems, op.key+": "+p)
	}
	if !res.settled {
		l.unsolved = append(l.unsolved, op.key)
		return
	}
	a := res.final
	switch {
	case a.status == http.StatusCreated:
		var tr transferJSON
		if err := json.Unmarshal(a.body, &tr); err != nil || tr.ID == "" || tr.Status != "completed" {
			l.problems = append(l.problems, fmt.Sprintf("%s: 201 without a completed transfer: %s", op.key, a))
			return
		}
		l.outcomes[i] = outcome{status: a.status, id: tr.ID}
	case a.status == http.StatusUnprocessableEntity && a.problemCode() == "insufficient_funds":
		l.outcomes[i] = outcome{status: a.status}
	default:
		l.problems = append(l.problems, fmt.Sprintf("%s: unexpected final answer %s", op.key, a))
		return
	}
	l.answered.Add(1)
}

// note counts a non-final answer by kind.
func (l *loadRun) note(a answer) {
	k := "no answer"
	if a.err == nil {
		k = fmt.Sprintf("%d %s", a.status, a.problemCode())
	}
	l.mu.Lock()
	l.statuses[k]++
	l.mu.Unlock()
}

// report checks what the clients saw and logs the load's figures.
func (l *loadRun) report(t *testing.T, elapsed time.Duration) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var ok, funds int
	for _, o := range l.outcomes {
		switch o.status {
		case http.StatusCreated:
			ok++
		case http.StatusUnprocessableEntity:
			funds++
		}
	}
	keys := make([]string, 0, len(l.statuses))
	for k := range l.statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var seen []string
	for _, k := range keys {
		seen = append(seen, fmt.Sprintf("%s×%d", k, l.statuses[k]))
	}
	t.Logf("load: %d transfers in %v: %d completed, %d insufficient funds; %d requests (%d retries); slowest transfer %v; non-final answers: %s",
		len(l.ops), elapsed.Round(time.Millisecond), ok, funds, l.attempts.Load(), l.attempts.Load()-int64(len(l.ops)),
		l.slowest.Round(time.Millisecond), strings.Join(seen, ", "))
	for i, p := range l.problems {
		if i == 20 {
			t.Errorf("... and %d more", len(l.problems)-20)
			break
		}
		t.Errorf("client saw: %s", p)
	}
	if len(l.unsolved) > 0 {
		t.Errorf("%d transfers never got a final answer, e.g. %s", len(l.unsolved), l.unsolved[0])
	}
}

// transferJSON is the API's transfer.
type transferJSON struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	From          string `json:"from_account_id"`
	To            string `json:"to_account_id"`
	Amount        int64  `json:"amount"`
	Status        string `json:"status"`
	FailureReason string `json:"failure_reason"`
}

func (t transferJSON) terminal() bool { return t.Status == "completed" || t.Status == "failed" }
