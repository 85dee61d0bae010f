package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
)

// violations collects broken invariants from concurrent checks.
type violations struct {
	mu   sync.Mutex
	list []string
}

func (v *violations) add(format string, args ...any) {
	v.mu.Lock()
	v.list = append(v.list, fmt.Sprintf(format, args...))
	v.mu.Unlock()
}

// check verifies through the API that money was conserved, that every
// retried key was applied exactly once, and that bankd's own audit passes.
func (r *runner) check(ctx context.Context) []string {
	v := &violations{}
	r.checkBalances(ctx, v)
	r.checkRetried(ctx, v)
	r.checkAudit(ctx, v)
	return v.list
}

// checkBalances: transfers move money between the run's accounts, so their
// balances must add up to what was deposited, and none may be negative.
func (r *runner) checkBalances(ctx context.Context, v *violations) {
	balances := make([]int64, len(r.accounts))
	err := forEach(ctx, len(r.accounts), r.cfg.Clients, func(ctx context.Context, i int) error {
		res, err := r.c.Get(ctx, "/v1/accounts/"+r.accounts[i].id)
		if err != nil {
			return fmt.Errorf("reading account %s: %w", r.accounts[i].id, err)
		}
		var a struct {
			Balance *int64 `json:"balance"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &a) != nil || a.Balance == nil {
			return fmt.Errorf("reading account %s: %s", r.accounts[i].id, describe(res))
		}
		balances[i] = *a.Balance
		return nil
	})
	if err != nil {
		v.add("balances not checked: %v", err)
		return
	}
	var want, got int64
	for i, b := range balances {
		want += r.accounts[i].deposited
		got += b
		if b < 0 {
			v.add("account %s has a negative balance %d", r.accounts[i].id, b)
		}
	}
	if got != want {
		v.add("sum of balances is %d, deposits were %d (difference %d)", got, want, got-want)
	}
}

// expected is what one retried key must have left in its from-account's
// history: exactly one transfer (with the id its answer gave) if it
// succeeded, none otherwise.
type expected struct {
	key, id string
	count   int
}

// checkRetried: each retried key, sent once more, must replay the answer the
// retries got (same status, same transfer), and the from-account's history
// must hold exactly the transfers the key's answer claims — never a second
// one made by the dropped try.
func (r *runner) checkRetried(ctx context.Context, v *violations) {
	wanted := make(map[int][]expected) // from index → expectations
	var mu sync.Mutex
	_ = forEach(ctx, len(r.retried), r.cfg.Clients, func(ctx context.Context, i int) error {
		rt := r.retried[i]
		if rt.final == nil {
			v.add("key %s: retries never got an answer", rt.key)
			return nil
		}
		id := transferID(rt.final)
		if rt.first != nil && !rt.first.Transient() {
			// The dropped answer did arrive: the retry must have replayed it.
			if rt.first.Status != rt.final.Status || transferID(rt.first) != id {
				v.add("key %s: first answer %s, retry got %s", rt.key, describe(rt.first), describe(rt.final))
			}
		}
		replay, _, err := r.c.PostUntilAnswer(ctx, "/v1/transfers", rt.key, rt.body, r.cfg.Retry)
		switch {
		case err != nil:
			v.add("key %s: replay: %v", rt.key, err)
		case replay.Status != rt.final.Status || replay.Code != rt.final.Code || transferID(replay) != id:
			v.add("key %s: answered %s, replay %s", rt.key, describe(rt.final), describe(replay))
		case !replay.Replayed:
			v.add("key %s: replay lacks Idempotent-Replayed: true", rt.key)
		}
		e := expected{key: rt.key, id: id}
		if rt.final.Status == 201 {
			e.count = 1
			if id == "" {
				v.add("key %s: 201 without a transfer id: %s", rt.key, describe(rt.final))
			}
		}
		mu.Lock()
		wanted[rt.from] = append(wanted[rt.from], e)
		mu.Unlock()
		return nil
	})
	froms := make([]int, 0, len(wanted))
	for from := range wanted {
		froms = append(froms, from)
	}
	_ = forEach(ctx, len(froms), r.cfg.Clients, func(ctx context.Context, i int) error {
		acct := r.accounts[froms[i]].id
		byID, byRef, err := r.history(ctx, acct)
		if err != nil {
			v.add("history of account %s not checked: %v", acct, err)
			return nil
		}
		for _, e := range wanted[froms[i]] {
			if n := byRef[e.key]; n != e.count {
				v.add("key %s made %d transfers from account %s, want %d", e.key, n, acct, e.count)
			}
			if n := byID[e.id]; e.id != "" && n != 1 {
				v.add("key %s: transfer %s appears %d times in account %s's history", e.key, e.id, n, acct)
			}
		}
		return nil
	})
}

// history pages through an account's transfers and counts them by id and
// by reference.
func (r *runner) history(ctx context.Context, accountID string) (byID, byRef map[string]int, err error) {
	byID, byRef = make(map[string]int), make(map[string]int)
	cursors := make(map[string]bool)
	after := ""
	for {
		path := "/v1/accounts/" + accountID + "/transfers?limit=100"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		res, err := r.c.Get(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		var page struct {
			Data []struct {
				ID        string `json:"id"`
				Reference string `json:"reference"`
			} `json:"data"`
			Next *string `json:"next"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &page) != nil {
			return nil, nil, fmt.Errorf("listing: %s", describe(res))
		}
		for _, t := range page.Data {
			byID[t.ID]++
			if t.Reference != "" {
				byRef[t.Reference]++
			}
		}
		if page.Next == nil || *page.Next == "" {
			return byID, byRef, nil
		}
		if cursors[*page.Next] {
			return nil, nil, fmt.Errorf("listing loops: cursor %q came twice", *page.Next)
		}
		cursors[*page.Next] = true
		after = *page.Next
	}
}

// checkAudit runs bankd's own conservation audit.
func (r *runner) checkAudit(ctx context.Context, v *violations) {
	res, err := r.c.Get(ctx, "/v1/audit")
	if err != nil {
		v.add("audit: %v", err)
		return
	}
	if res.Status == 404 {
		v.add("audit endpoint missing (GET /v1/audit answered 404)")
		return
	}
	var a struct {
		OK         *bool             `json:"ok"`
		Violations []json.RawMessage `json:"violations"`
	}
	if res.Status != 200 || json.Unmarshal(res.Body, &a) != nil || a.OK == nil {
		v.add("audit: %s", describe(res))
		return
	}
	if !*a.OK {
		v.add("audit failed with %d violations: %s", len(a.Violations), describe(res))
	}
}

// transferID is the id in a 2xx transfer answer, "" otherwise.
func transferID(res *Result) string {
	if !res.OK() {
		return ""
	}
	var t struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(res.Body, &t)
	return t.ID
}
