package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeBank is an in-memory test double of bankd's HTTP contract (accounts,
// deposits, transfers, history, audit, idempotent replay), with switches
// for the bugs bankload must catch.
type fakeBank struct {
	delay     time.Duration // processing time of a POST, not cut short by a client leaving
	forgetful bool          // ignores Idempotency-Key: retries apply twice
	leaky     bool          // loses one minor unit per transfer
	noAudit   bool          // GET /v1/audit is 404
	// forgetsDropped forgets a key whose client left before the answer, so
	// the retry applies the transfer again and is then replayed consistently.
	forgetsDropped bool
	busyEvery      int // every n-th first attempt of a transfer answers 503 account_busy

	mu       sync.Mutex
	nextID   int
	balances map[string]int64
	history  map[string][]listed // account → transfers, newest first
	keys     map[string]*idemEntry
	applied  map[string]int // key → times its effect was applied
	attempts int
}

type listed struct {
	ID        string `json:"id"`
	Reference string `json:"reference,omitempty"`
}

type idemEntry struct {
	body   []byte
	done   bool
	status int
	answer []byte
}

func newFakeBank() *fakeBank {
	return &fakeBank{
		balances: make(map[string]int64),
		history:  make(map[string][]listed),
		keys:     make(map[string]*idemEntry),
		applied:  make(map[string]int),
	}
}

func (b *fakeBank) start(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/accounts", b.idempotent(b.createAccount))
	mux.HandleFunc("POST /v1/accounts/{id}/deposits", b.idempotent(b.deposit))
	mux.HandleFunc("POST /v1/transfers", b.idempotent(b.transfer))
	mux.HandleFunc("GET /v1/accounts/{id}", b.getAccount)
	mux.HandleFunc("GET /v1/accounts/{id}/transfers", b.listTransfers)
	mux.HandleFunc("GET /v1/audit", func(w http.ResponseWriter, r *http.Request) {
		if b.noAudit {
			problem(w, 404, "not_found")
			return
		}
		writeJSON(w, 200, map[string]any{"ok": true, "violations": []string{}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func problem(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"code":%q}`, code, status, code)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// idempotent wraps a POST handler with bankd's Idempotency-Key rules.
func (b *fakeBank) idempotent(h func(r *http.Request, key string, body []byte) (int, []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		body, _ := io.ReadAll(r.Body)
		if key == "" {
			problem(w, 400, "invalid_request")
			return
		}
		b.mu.Lock()
		e := b.keys[key]
		switch {
		case b.forgetful || e == nil:
			e = &idemEntry{body: body}
			b.keys[key] = e
		case !bytes.Equal(e.body, body):
			b.mu.Unlock()
			problem(w, 422, "idempotency_key_reused")
			return
		case !e.done:
			b.mu.Unlock()
			w.Header().Set("Retry-After", "1")
			problem(w, 409, "idempotency_key_in_use")
			return
		default:
			b.mu.Unlock()
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.status)
			w.Write(e.answer)
			return
		}
		b.mu.Unlock()
		time.Sleep(b.delay) // the work goes on whether or not the client is still there
		status, answer := h(r, key, body)
		b.mu.Lock()
		if status == 503 || b.forgetsDropped && r.Context().Err() != nil {
			delete(b.keys, key) // a transient failure is not remembered
		} else {
			e.done, e.status, e.answer = true, status, answer
		}
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(answer)
	}
}

// waitForKey waits until a request with key has reached the bank.
func (b *fakeBank) waitForKey(t *testing.T, key string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.mu.Lock()
		_, ok := b.keys[key]
		b.mu.Unlock()
		if ok {
			return
		}
	}
	t.Fatalf("no request with key %s reached the bank", key)
}

func (b *fakeBank) newID() string {
	b.nextID++
	return fmt.Sprintf("00000000-0000-0000-0000-%012d", b.nextID)
}

func (b *fakeBank) createAccount(_ *http.Request, key string, body []byte) (int, []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.newID()
	b.balances[id] = 0
	out, _ := json.Marshal(map[string]any{"id": id, "balance": 0, "currency": "USD", "status": "active"})
	return 201, out
}

func (b *fakeBank) deposit(r *http.Request, key string, body []byte) (int, []byte) {
	var d struct{ Amount int64 }
	_ = json.Unmarshal(body, &d)
	b.mu.Lock()
	defer b.mu.Unlock()
	id := r.PathValue("id")
	if _, ok := b.balances[id]; ok {
		b.balances[id] += d.Amount
		tid := b.newID()
		b.history[id] = append([]listed{{ID: tid}}, b.history[id]...)
		out, _ := json.Marshal(map[string]any{"id": tid, "amount": d.Amount, "status": "completed"})
		return 201, out
	}
	return 404, []byte(`{"code":"not_found"}`)
}

func (b *fakeBank) transfer(_ *http.Request, key string, body []byte) (int, []byte) {
	var t transferRequest
	_ = json.Unmarshal(body, &t)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attempts++
	if b.busyEvery > 0 && b.attempts%b.busyEvery == 0 {
		return 503, []byte(`{"code":"account_busy","status":503}`)
	}
	if b.balances[t.From] < t.Amount {
		return 422, []byte(`{"code":"insufficient_funds","status":422}`)
	}
	b.applied[key]++
	b.balances[t.From] -= t.Amount
	credit := t.Amount
	if b.leaky {
		credit--
	}
	b.balances[t.To] += credit
	id := b.newID()
	b.history[t.From] = append([]listed{{id, t.Reference}}, b.history[t.From]...)
	b.history[t.To] = append([]listed{{id, t.Reference}}, b.history[t.To]...)
	out, _ := json.Marshal(map[string]any{"id": id, "from_account_id": t.From, "to_account_id": t.To,
		"amount": t.Amount, "currency": "USD", "status": "completed"})
	return 201, out
}

func (b *fakeBank) getAccount(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	bal, ok := b.balances[r.PathValue("id")]
	b.mu.Unlock()
	if !ok {
		problem(w, 404, "not_found")
		return
	}
	writeJSON(w, 200, map[string]any{"id": r.PathValue("id"), "balance": bal, "currency": "USD"})
}

// listTransfers pages with the cursor being the offset, 7 per page at most
// so that paging is exercised.
func (b *fakeBank) listTransfers(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	limit = min(max(limit, 1), 7)
	off, _ := strconv.Atoi(r.URL.Query().Get("after"))
	b.mu.Lock()
	h := b.history[r.PathValue("id")]
	end := min(off+limit, len(h))
	data := append([]listed{}, h[min(off, end):end]...)
	b.mu.Unlock()
	var next *string
	if end < len(h) {
		s := strconv.Itoa(end)
		next = &s
	}
	writeJSON(w, 200, map[string]any{"data": data, "next": next})
}
