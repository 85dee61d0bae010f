package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// verify checks the invariants through base's API once the load is over: one transfer per
// key, nothing left unfinished, balances that match the answers, replays that return the
// original outcome, and a clean audit.
func verify(t *testing.T, c *client, base string, b bank, l *loadRun) {
	t.Helper()
	ctx := t.Context()
	journal := listJournal(t, c, base, b)
	settleJournal(t, c, base, journal)

	// Exactly once: one transfer per key, completed exactly for the 201s, failed exactly for
	// the 422s (matched by their details, as a 422 carries no transfer id).
	var transfers, deposits int
	failed := map[string]int{}
	completed := map[string]transferJSON{}
	for _, tr := range journal {
		switch tr.Kind {
		case "deposit":
			deposits++
			if tr.Status != "completed" {
				t.Errorf("deposit %s is %s", tr.ID, tr.Status)
			}
		case "transfer":
			transfers++
			switch tr.Status {
			case "completed":
				completed[tr.ID] = tr
			case "failed":
				if tr.FailureReason != "insufficient_funds" {
					t.Errorf("transfer %s failed for %q", tr.ID, tr.FailureReason)
				}
				failed[fmt.Sprintf("%s>%s:%d", tr.From, tr.To, tr.Amount)]++
			default:
				t.Errorf("transfer %s still %s after recovery", tr.ID, tr.Status)
			}
		default:
			t.Errorf("unexpected %s %s in the journal", tr.Kind, tr.ID)
		}
	}
	if deposits != len(b.accounts) {
		t.Errorf("%d deposits in the journal, want %d", deposits, len(b.accounts))
	}
	if transfers != len(l.ops) {
		t.Errorf("%d transfers in the journal for %d keys: a key was applied %s", transfers, len(l.ops),
			map[bool]string{true: "more than once", false: "not at all"}[transfers > len(l.ops)])
	}
	want := map[string]int64{}
	for _, id := range b.accounts {
		want[id] = deposit
	}
	var ok int
	for i, o := range l.outcomes {
		op := l.ops[i]
		switch o.status {
		case http.StatusCreated:
			ok++
			tr, found := completed[o.id]
			if !found {
				t.Errorf("%s: answered 201 with transfer %s, which the journal does not list as completed", op.key, o.id)
			} else if tr.From != op.from || tr.To != op.to || tr.Amount != op.amount {
				t.Errorf("%s: transfer %s is %+v, want %+v", op.key, o.id, tr, op)
			}
			want[op.from] -= op.amount
			want[op.to] += op.amount
		case http.StatusUnprocessableEntity:
			k := fmt.Sprintf("%s>%s:%d", op.from, op.to, op.amount)
			if failed[k] == 0 {
				t.Errorf("%s: answered 422 but no matching failed transfer in the journal", op.key)
			}
			failed[k]--
		}
	}
	if len(completed) != ok {
		t.Errorf("%d completed transfers in the journal, %d answered 201", len(completed), ok)
	}

	// Money: each balance is what the answers say, so the total is what was deposited.
	var sum int64
	for _, id := range b.accounts {
		var acct struct {
			Balance int64 `json:"balance"`
		}
		if err := c.getJSON(ctx, base, "/v1/accounts/"+id, &acct); err != nil {
			t.Fatal(err)
		}
		sum += acct.Balance
		if acct.Balance != want[id] {
			t.Errorf("account %s: balance %d, want %d from the answered transfers", id, acct.Balance, want[id])
		}
	}
	if total := deposit * int64(len(b.accounts)); sum != total {
		t.Errorf("sum of balances %d, want the %d deposited", sum, total)
	}

	// Replays: every key again, same body: the original outcome, never a new transfer.
	var replayed int
	for i, op := range l.ops {
		res := c.resolve(ctx, router{bases: []string{base}}, 0, "/v1/transfers", op.key, op.body(), nil)
		o := l.outcomes[i]
		if !res.settled {
			t.Errorf("replay of %s: no final answer %v", op.key, res.problems)
			continue
		}
		if res.final.replayed {
			replayed++
		}
		var tr transferJSON
		_ = json.Unmarshal(res.final.body, &tr)
		if res.final.status != o.status || tr.ID != o.id {
			t.Errorf("replay of %s: %s, want status %d and transfer %q", op.key, res.final, o.status, o.id)
		}
	}

	var audit struct {
		OK     bool `json:"ok"`
		Report struct {
			Accounts, Transfers, Unfinished int
			Violations                      []any
		} `json:"report"`
	}
	if err := c.getJSON(ctx, base, "/v1/audit", &audit); err != nil {
		t.Fatal(err)
	}
	if !audit.OK || audit.Report.Unfinished != 0 {
		t.Errorf("audit: ok=%v, %d unfinished, violations %v", audit.OK, audit.Report.Unfinished, audit.Report.Violations)
	}
	t.Logf("verified: %d keys, %d completed, %d failed for funds, %d replays (%d marked Idempotent-Replayed), sum %d, audit ok=%v over %d transfers",
		len(l.ops), ok, transfers-len(completed), len(l.ops), replayed, sum, audit.OK, audit.Report.Transfers)
}

// listJournal pages through every account's transfers and returns them by id.
func listJournal(t *testing.T, c *client, base string, b bank) map[string]transferJSON {
	t.Helper()
	journal := map[string]transferJSON{}
	for _, id := range b.accounts {
		after := ""
		for page := 0; ; page++ {
			if page == 100 {
				t.Fatalf("account %s: more than 100 pages of transfers", id)
			}
			var p struct {
				Data []transferJSON `json:"data"`
				Next *string        `json:"next"`
			}
			path := "/v1/accounts/" + id + "/transfers?limit=100"
			if after != "" {
				path += "&after=" + url.QueryEscape(after)
			}
			if err := c.getJSON(t.Context(), base, path, &p); err != nil {
				t.Fatal(err)
			}
			for _, tr := range p.Data {
				journal[tr.ID] = tr
			}
			if p.Next == nil {
				break
			}
			after = *p.Next
		}
	}
	return journal
}

// settleJournal polls every unfinished transfer until recovery has finished it (bounded),
// updating journal in place.
func settleJournal(t *testing.T, c *client, base string, journal map[string]transferJSON) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for id, tr := range journal {
		for !tr.terminal() && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			if err := c.getJSON(ctx, base, "/v1/transfers/"+id, &tr); err != nil && ctx.Err() == nil {
				t.Fatal(err)
			}
		}
		journal[id] = tr
	}
}
