package load

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

var fastRetry = RetryPolicy{Deadline: 5 * time.Second, BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}

// bankWithTwoAccounts starts a fakeBank holding accounts a (funded) and b.
func bankWithTwoAccounts(t *testing.T, delay time.Duration) (*fakeBank, *Client, []byte) {
	t.Helper()
	b := newFakeBank()
	b.delay = delay
	srv := b.start(t)
	b.balances["a"], b.balances["b"] = 1000, 0
	c := NewClient(srv.URL, "", 4, 5*time.Second)
	t.Cleanup(c.Close)
	body, _ := json.Marshal(transferRequest{From: "a", To: "b", Amount: 10, Currency: "USD"})
	return b, c, body
}

func TestDroppedAnswerIsRetriedOnce(t *testing.T) {
	for _, c := range []struct {
		name     string
		delay    time.Duration // how long the dropped request may run
		wantLost bool
	}{
		{"closed after send", 0, true},
		{"timeout shorter than the request", 10 * time.Millisecond, true},
		{"answer faster than the timeout", 2 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, cl, body := bankWithTwoAccounts(t, 50*time.Millisecond)
			ctx := context.Background()
			first := cl.PostDropped(ctx, "/v1/transfers", "k1", body, c.delay)
			if (first == nil) != c.wantLost {
				t.Fatalf("dropped answer: got %+v, want lost=%v", first, c.wantLost)
			}
			// The case under test is a request the bank received whose answer
			// was lost. A connection closed right after sending can otherwise
			// lose the race to the retry, which then is the original request.
			b.waitForKey(t, "k1")
			final, tries, err := cl.PostUntilAnswer(ctx, "/v1/transfers", "k1", body, fastRetry)
			if err != nil {
				t.Fatal(err)
			}
			if final.Status != 201 || !final.Replayed {
				t.Fatalf("retry answered %s (replayed %v), want the first request's 201 replayed", describe(final), final.Replayed)
			}
			if c.wantLost && tries < 2 {
				t.Errorf("retry took %d tries; the first request was still in progress, so a 409 was due", tries)
			}
			if first != nil && transferID(first) != transferID(final) {
				t.Errorf("first answer %s, replay %s", first.Body, final.Body)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.applied["k1"] != 1 || b.balances["a"] != 990 || b.balances["b"] != 10 {
				t.Errorf("applied %d times, balances %v", b.applied["k1"], b.balances)
			}
		})
	}
}

func TestPostUntilAnswer(t *testing.T) {
	for _, c := range []struct {
		name      string
		answers   []int // statuses served in turn; the last one repeats
		wantCode  int
		wantTries int
		wantErr   bool
	}{
		{"final at once", []int{201}, 201, 1, false},
		{"503 then success", []int{503, 503, 201}, 201, 3, false},
		{"409 then success", []int{409, 201}, 201, 2, false},
		{"422 is an answer", []int{422}, 422, 1, false},
		{"500 is an answer", []int{500}, 500, 1, false},
		{"409 for ever", []int{409}, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int64
			var keys []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				keys = append(keys, r.Header.Get("Idempotency-Key"))
				i := min(int(n.Add(1))-1, len(c.answers)-1)
				status := c.answers[i]
				code := map[int]string{409: "idempotency_key_in_use", 422: "insufficient_funds", 500: "internal", 503: "account_busy"}[status]
				if code != "" {
					w.Header().Set("Retry-After", "1")
					problem(w, status, code)
					return
				}
				w.WriteHeader(status)
				w.Write([]byte(`{"id":"t1"}`))
			}))
			defer srv.Close()
			cl := NewClient(srv.URL, "", 1, time.Second)
			defer cl.Close()
			policy := fastRetry
			policy.Deadline = 200 * time.Millisecond
			res, tries, err := cl.PostUntilAnswer(context.Background(), "/v1/transfers", "same", []byte(`{}`), policy)
			if c.wantErr {
				if !errors.Is(err, ErrNoAnswer) {
					t.Fatalf("err %v, want ErrNoAnswer", err)
				}
				return
			}
			if err != nil || res.Status != c.wantCode || tries != c.wantTries {
				t.Fatalf("got %v tries=%d err=%v; want %d in %d tries", res, tries, err, c.wantCode, c.wantTries)
			}
			for _, k := range keys {
				if k != "same" {
					t.Errorf("a retry sent key %q", k)
				}
			}
		})
	}
}

func TestTransportErrorIsRetried(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 { // kill the connection without an answer
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"t1"}`))
	}))
	defer srv.Close()
	cl := NewClient(srv.URL, "", 1, time.Second)
	defer cl.Close()
	res, tries, err := cl.PostUntilAnswer(context.Background(), "/v1/transfers", "k", []byte(`{}`), fastRetry)
	if err != nil || res.Status != 201 || tries < 2 {
		t.Fatalf("got %v, %d tries, %v", res, tries, err)
	}
}

func TestProblemCodeAndHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sekrit" {
			problem(w, 401, "unauthorized")
			return
		}
		if r.URL.Path == "/plain" {
			w.WriteHeader(502)
			w.Write([]byte("bad gateway"))
			return
		}
		w.Header().Set("Retry-After", "2")
		problem(w, 503, "account_busy")
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, c := range []struct {
		key, path, code string
		retryAfter      time.Duration
	}{
		{"wrong", "/x", "unauthorized", 0},
		{"sekrit", "/x", "account_busy", 2 * time.Second},
		{"sekrit", "/plain", "http_502", 0},
	} {
		cl := NewClient(srv.URL+"/", c.key, 1, time.Second)
		res, err := cl.Get(ctx, c.path)
		cl.Close()
		if err != nil || res.Code != c.code || res.RetryAfter != c.retryAfter || res.Outcome() != c.code {
			t.Errorf("key %s path %s: %+v, %v; want code %s", c.key, c.path, res, err, c.code)
		}
	}
}
