package faulttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// client is a small HTTP client of bankd's API. It never uses a proxy: all traffic goes to
// 127.0.0.1.
type client struct{ http *http.Client }

func newClient(t *testing.T) *client {
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	// The timeout only bounds a request whose answer never comes (a stalled or dead server):
	// the client then treats it as unanswered and retries with the same key.
	return &client{http: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// answer is one HTTP exchange; err is set when no answer arrived.
type answer struct {
	status     int
	body       []byte
	retryAfter string
	replayed   bool
	err        error
}

// problemCode is the stable error code of a problem+json answer.
func (a answer) problemCode() string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(a.body, &p)
	return p.Code
}

func (a answer) String() string {
	if a.err != nil {
		return "no answer: " + a.err.Error()
	}
	return fmt.Sprintf("%d %s", a.status, bytes.TrimSpace(a.body))
}

func (c *client) do(ctx context.Context, method, url, key, body string) answer {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return answer{err: err}
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil { // the connection broke mid-answer: as good as no answer
		return answer{err: err}
	}
	return answer{status: resp.StatusCode, body: b, retryAfter: resp.Header.Get("Retry-After"),
		replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
}

func (c *client) get(ctx context.Context, base, path string) answer {
	return c.do(ctx, http.MethodGet, base+path, "", "")
}

func (c *client) post(ctx context.Context, base, path, key, body string) answer {
	return c.do(ctx, http.MethodPost, base+path, key, body)
}

// getJSON GETs path and decodes a 200 answer into v.
func (c *client) getJSON(ctx context.Context, base, path string, v any) error {
	a := c.get(ctx, base, path)
	if a.err != nil {
		return a.err
	}
	if a.status != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, a)
	}
	return json.Unmarshal(a.body, v)
}

// transient reports whether an answer says "not yet": the request may be sent again with
// the same key. 409 and 503 must carry Retry-After.
func transient(a answer) bool {
	switch {
	case a.err != nil:
		return true
	case a.status == http.StatusConflict:
		return a.problemCode() == "idempotency_key_in_use"
	case a.status == http.StatusServiceUnavailable:
		code := a.problemCode()
		return code == "unavailable" || code == "account_busy"
	}
	return false
}

// pause waits before a retry: the Retry-After bankd asks for (1 s) capped at 150 ms, since
// these tests want short runs, plus jitter so clients don't retry in lockstep.
func pause(ctx context.Context, a answer) {
	d := 20*time.Millisecond + rand.N(80*time.Millisecond)
	if s, err := strconv.Atoi(a.retryAfter); err == nil && s > 0 {
		d = min(time.Duration(s)*time.Second, 150*time.Millisecond) + rand.N(100*time.Millisecond)
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// router spreads a client's requests over bankd instances and moves a client on to the
// next one when its instance does not answer.
type router struct{ bases []string }

func (r router) base(worker, shift int) string { return r.bases[(worker+shift)%len(r.bases)] }

// attempt is how one POST was resolved: its final answer (if settled), how many requests
// it took, and every answer a client must never see (a 5xx other than a well-formed 503, a
// 409 or 503 without Retry-After).
type attempt struct {
	final    answer
	attempts int
	problems []string
	settled  bool
}

// Bounds of one POST's retries, in count and in time.
const (
	maxAttempts = 1000
	opBudget    = 60 * time.Second
)

// resolve sends a POST until it gets a final answer (anything not transient), with the same
// key and body every time, failing over to the next of r's instances when one does not
// answer. note, if set, is told every non-final answer.
func (c *client) resolve(ctx context.Context, r router, worker int, path, key, body string, note func(answer)) attempt {
	var res attempt
	shift := 0
	deadline := time.Now().Add(opBudget)
	for res.attempts < maxAttempts && time.Now().Before(deadline) && ctx.Err() == nil {
		res.attempts++
		a := c.post(ctx, r.base(worker, shift), path, key, body)
		if a.err != nil {
			shift++ // fail over: the instance may be dead
		}
		if transient(a) || a.status >= 500 {
			if note != nil {
				note(a)
			}
			switch {
			case a.status >= 500 && !transient(a):
				// A 500 is a bug; retry anyway so that the invariants are still checked.
				res.problems = append(res.problems, "unexpected "+a.String())
			case a.err == nil && a.retryAfter == "":
				res.problems = append(res.problems, "no Retry-After on "+a.String())
			}
			pause(ctx, a)
			continue
		}
		res.final, res.settled = a, true
		return res
	}
	return res
}

// metric reads one counter or gauge (without labels) from /metrics; -1 if absent.
func (c *client) metric(ctx context.Context, base, name string) float64 {
	a := c.get(ctx, base, "/metrics")
	if a.err != nil || a.status != http.StatusOK {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(a.body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}
