package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/bankd/bankd/idempotency"
	"github.com/bankd/bankd/internal/testmongo"
	"github.com/bankd/bankd/lock"
	"github.com/bankd/bankd/transaction"
)

func TestMain(m *testing.M) { testmongo.Main(m) }

// env is one API over a fresh database.
type env struct {
	t   *testing.T
	h   *Handler
	db  *mongo.Database
	svc *transaction.Service
	key string // bearer token, "" when auth is off
}

type envOpts struct {
	keys     []string
	lockWait time.Duration
	hooks    transaction.Hooks
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	db := testmongo.Database(t)
	if o.lockWait == 0 {
		o.lockWait = 5 * time.Second
	}
	svc, err := transaction.New(db, transaction.Config{Lock: lock.Config{WaitTimeout: o.lockWait}, Hooks: o.hooks})
	if err != nil {
		t.Fatal(err)
	}
	keys := idempotency.New(db, idempotency.Config{})
	ctx := context.Background()
	if err := svc.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := keys.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	var log *slog.Logger
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	h := New(Config{APIKeys: o.keys, MaxBodyBytes: 4096, Logger: log}, Deps{
		Transfers: svc, Accounts: svc.Accounts(), Keys: keys,
		Ping: func(ctx context.Context) error { return db.Client().Ping(ctx, nil) },
	})
	e := &env{t: t, h: h, db: db, svc: svc}
	if len(o.keys) > 0 {
		e.key = o.keys[0]
	}
	return e
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (e *env) do(method, path, idemKey, body string) reply {
	e.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	r := reply{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
	_ = json.Unmarshal(rec.Body.Bytes(), &r.body)
	return r
}

// wantProblem checks status, code and the problem+json shape.
func wantProblem(t *testing.T, r reply, status int, code string) {
	t.Helper()
	if r.status != status || r.body["code"] != code {
		t.Fatalf("got %d %v (%s), want %d %s", r.status, r.body["code"], r.raw, status, code)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	for _, f := range []string{"type", "title", "status", "code"} {
		if _, ok := r.body[f]; !ok {
			t.Errorf("problem lacks %q: %s", f, r.raw)
		}
	}
	if status == 503 || status == 409 {
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%d without Retry-After", status)
		}
	}
}

func (e *env) account(owner, currency string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/accounts", uuid.NewString(), fmt.Sprintf(`{"currency":%q,"owner":%q}`, currency, owner))
	if r.status != 201 {
		e.t.Fatalf("create account: %d %s", r.status, r.raw)
	}
	return r.body["id"].(string)
}

func (e *env) deposit(id string, amount int64) {
	e.t.Helper()
	r := e.do("POST", "/v1/accounts/"+id+"/deposits", uuid.NewString(), fmt.Sprintf(`{"amount":%d,"currency":"USD"}`, amount))
	if r.status != 201 {
		e.t.Fatalf("deposit: %d %s", r.status, r.raw)
	}
}

func (e *env) balance(id string) int64 {
	e.t.Helper()
	r := e.do("GET", "/v1/accounts/"+id, "", "")
	if r.status != 200 {
		e.t.Fatalf("get account: %d %s", r.status, r.raw)
	}
	return int64(r.body["balance"].(float64))
}

func transferBody(from, to string, amount int64) string {
	return fmt.Sprintf(`{"from_account_id":%q,"to_account_id":%q,"amount":%d,"currency":"USD"}`, from, to, amount)
}

func TestAccountsAndTransfersHappyPath(t *testing.T) {
	e := newEnv(t, envOpts{})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 1000)
	r := e.do("POST", "/v1/transfers", "t-1", transferBody(a, b, 300))
	if r.status != 201 || r.body["status"] != "completed" || r.body["amount"].(float64) != 300 {
		t.Fatalf("transfer: %d %s", r.status, r.raw)
	}
	for _, f := range []string{"id", "from_account_id", "to_account_id", "amount", "currency", "reference", "status", "created_at", "completed_at"} {
		if _, ok := r.body[f]; !ok {
			t.Errorf("transfer lacks %q", f)
		}
	}
	if got := e.balance(a); got != 700 {
		t.Errorf("alice balance = %d, want 700", got)
	}
	if got := e.balance(b); got != 300 {
		t.Errorf("bob balance = %d, want 300", got)
	}
	got := e.do("GET", "/v1/transfers/"+r.body["id"].(string), "", "")
	if got.status != 200 || got.body["id"] != r.body["id"] {
		t.Errorf("GET transfer: %d %s", got.status, got.raw)
	}
	w := e.do("POST", "/v1/accounts/"+a+"/withdrawals", "w-1", `{"amount":200,"currency":"USD"}`)
	if w.status != 201 || e.balance(a) != 500 {
		t.Errorf("withdrawal: %d %s, balance %d", w.status, w.raw, e.balance(a))
	}
	audit := e.do("GET", "/v1/audit", "", "")
	if audit.status != 200 || audit.body["ok"] != true {
		t.Errorf("audit: %d %s", audit.status, audit.raw)
	}
}

func TestIdempotentReplayAndMismatch(t *testing.T) {
	e := newEnv(t, envOpts{})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 1000)
	first := e.do("POST", "/v1/transfers", "same-key", transferBody(a, b, 100))
	again := e.do("POST", "/v1/transfers", "same-key", transferBody(a, b, 100))
	if first.status != 201 || again.status != 201 || !bytes.Equal(first.raw, again.raw) {
		t.Fatalf("replay differs: %d %s vs %d %s", first.status, first.raw, again.status, again.raw)
	}
	if again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Error("Idempotent-Replayed header wrong")
	}
	if got := e.balance(a); got != 900 {
		t.Errorf("balance after replay = %d, want 900 (moved once)", got)
	}
	wantProblem(t, e.do("POST", "/v1/transfers", "same-key", transferBody(a, b, 101)), 422, CodeKeyReused)
	// A failed outcome is replayed too, and nothing moves.
	poor := e.do("POST", "/v1/transfers", "too-much", transferBody(a, b, 1_000_000))
	wantProblem(t, poor, 422, CodeInsufficient)
	wantProblem(t, e.do("POST", "/v1/transfers", "too-much", transferBody(a, b, 1_000_000)), 422, CodeInsufficient)
	if got := e.balance(a); got != 900 {
		t.Errorf("balance after failed transfer = %d, want 900", got)
	}
}

// Concurrent identical requests with one key: exactly one transfer happens; the others get the
// stored answer or 409 while the first is in flight.
func TestConcurrentSameKeyMovesOnce(t *testing.T) {
	e := newEnv(t, envOpts{})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 1000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do("POST", "/v1/transfers", "race-key", transferBody(a, b, 10))
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[201] == 0 || statuses[201]+statuses[409] != 16 {
		t.Errorf("statuses = %v, want only 201 and 409", statuses)
	}
	if got := e.balance(a); got != 990 {
		t.Errorf("balance = %d, want 990: the transfer must happen exactly once", got)
	}
}

func TestInFlightKeyGets409(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	var block atomic.Bool
	var once sync.Once
	hooks := transaction.Hooks{BeforeStep: func(ctx context.Context, id string, step transaction.Step) error {
		if block.Load() && step == transaction.StepDebit {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	}}
	e := newEnv(t, envOpts{hooks: hooks})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 1000)
	block.Store(true)
	done := make(chan reply)
	go func() { done <- e.do("POST", "/v1/transfers", "slow", transferBody(a, b, 5)) }()
	<-entered
	wantProblem(t, e.do("POST", "/v1/transfers", "slow", transferBody(a, b, 5)), 409, CodeKeyInUse)
	close(release)
	if r := <-done; r.status != 201 {
		t.Fatalf("first request: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/transfers", "slow", transferBody(a, b, 5)); r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("after completion: %d %s", r.status, r.raw)
	}
}

func TestValidationErrors(t *testing.T) {
	e := newEnv(t, envOpts{})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	eur := e.account("eve", "EUR")
	e.deposit(a, 100)
	tests := []struct {
		name, method, path, key, body string
		status                        int
		code                          string
	}{
		{"malformed JSON", "POST", "/v1/transfers", "k1", `{"from_account_id":`, 400, CodeInvalidRequest},
		{"unknown field", "POST", "/v1/transfers", "k2", `{"from_account_id":"x","bogus":1}`, 400, CodeInvalidRequest},
		{"wrong type", "POST", "/v1/transfers", "k3", `{"from_account_id":"` + a + `","to_account_id":"` + b + `","amount":"5","currency":"USD"}`, 400, CodeInvalidRequest},
		{"fractional amount", "POST", "/v1/transfers", "k4", `{"from_account_id":"` + a + `","to_account_id":"` + b + `","amount":5.5,"currency":"USD"}`, 400, CodeInvalidRequest},
		{"zero amount", "POST", "/v1/transfers", "k5", transferBody(a, b, 0), 400, CodeInvalidRequest},
		{"negative amount", "POST", "/v1/transfers", "k6", transferBody(a, b, -5), 400, CodeInvalidRequest},
		{"from equals to", "POST", "/v1/transfers", "k7", transferBody(a, a, 5), 400, CodeInvalidRequest},
		{"unknown currency", "POST", "/v1/accounts", "k8", `{"currency":"XYZ","owner":"z"}`, 400, CodeInvalidRequest},
		{"missing key", "POST", "/v1/transfers", "", transferBody(a, b, 5), 400, CodeInvalidRequest},
		{"key too long", "POST", "/v1/transfers", strings.Repeat("k", 256), transferBody(a, b, 5), 400, CodeInvalidRequest},
		{"empty body", "POST", "/v1/accounts", "k9", ``, 400, CodeInvalidRequest},
		{"trailing data", "POST", "/v1/accounts", "k10", `{"currency":"USD","owner":"a"} {}`, 400, CodeInvalidRequest},
		{"huge body", "POST", "/v1/accounts", "k11", `{"currency":"USD","owner":"` + strings.Repeat("a", 10_000) + `"}`, 413, CodePayloadTooLarge},
		{"unknown account", "GET", "/v1/accounts/" + uuid.NewString(), "", "", 404, CodeNotFound},
		{"non-uuid account", "GET", "/v1/accounts/nope", "", "", 404, CodeNotFound},
		{"unknown transfer", "GET", "/v1/transfers/" + uuid.NewString(), "", "", 404, CodeNotFound},
		{"transfer from unknown account", "POST", "/v1/transfers", "k12", transferBody(uuid.NewString(), b, 5), 404, CodeNotFound},
		{"insufficient funds", "POST", "/v1/transfers", "k13", transferBody(b, a, 5), 422, CodeInsufficient},
		{"currency mismatch", "POST", "/v1/transfers", "k14", transferBody(a, eur, 5), 422, CodeCurrencyMismatch},
		{"deposit currency mismatch", "POST", "/v1/accounts/" + eur + "/deposits", "k15", `{"amount":5,"currency":"USD"}`, 422, CodeCurrencyMismatch},
		{"bad page limit", "GET", "/v1/accounts/" + a + "/transfers?limit=0", "", "", 400, CodeInvalidRequest},
		{"bad cursor", "GET", "/v1/accounts/" + a + "/transfers?after=not-a-cursor", "", "", 400, CodeInvalidRequest},
		{"unknown route", "GET", "/v1/nothing", "", "", 404, CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, e.do(tt.method, tt.path, tt.key, tt.body), tt.status, tt.code)
		})
	}
	if got := e.balance(a); got != 100 {
		t.Errorf("balance after bad requests = %d, want 100", got)
	}
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t, envOpts{keys: []string{"secret-1", "secret-2"}})
	e.key = ""
	wantProblem(t, e.do("GET", "/v1/accounts/"+uuid.NewString(), "", ""), 401, CodeUnauthorized)
	e.key = "wrong"
	wantProblem(t, e.do("POST", "/v1/accounts", "k", `{"currency":"USD","owner":"a"}`), 401, CodeUnauthorized)
	e.key = "secret-2"
	if r := e.do("POST", "/v1/accounts", "k", `{"currency":"USD","owner":"a"}`); r.status != 201 {
		t.Fatalf("with a valid key: %d %s", r.status, r.raw)
	}
	// Keys are scoped per API key: the same Idempotency-Key under another API key is new.
	e.key = "secret-1"
	if r := e.do("POST", "/v1/accounts", "k", `{"currency":"USD","owner":"b"}`); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("same idempotency key, other API key: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/healthz", "", ""); r.status != 200 {
		t.Errorf("healthz needs no key: %d", r.status)
	}
}

// A lease held by another instance past the wait deadline: 503 account_busy with Retry-After,
// and the retry with the same key succeeds once the lease is free.
func TestAccountBusy(t *testing.T) {
	e := newEnv(t, envOpts{lockWait: 200 * time.Millisecond})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 100)
	other, err := lock.New(e.db.Collection("accounts"), lock.Config{LeaseDuration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := other.Acquire(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, e.do("POST", "/v1/transfers", "busy", transferBody(a, b, 10)), 503, CodeAccountBusy)
	if err := other.Release(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	if r := e.do("POST", "/v1/transfers", "busy", transferBody(a, b, 10)); r.status != 201 {
		t.Fatalf("retry after release: %d %s", r.status, r.raw)
	}
	if got := e.balance(a); got != 90 {
		t.Errorf("balance = %d, want 90", got)
	}
}

// Database errors injected with the failCommand fail point: 503 unavailable, nothing moves,
// and the retry with the same key succeeds.
func TestDatabaseFaultGives503ThenRetrySucceeds(t *testing.T) {
	if testmongo.Target(t) != "embedded" && testmongo.Target(t) != "uri" {
		t.Skip("needs fail points")
	}
	e := newEnv(t, envOpts{})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 100)
	admin := e.db.Client().Database("admin")
	err := admin.RunCommand(context.Background(), bson.D{{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"findAndModify", "update"}}, {Key: "errorCode", Value: 91}}}}).Err()
	if err != nil {
		t.Skipf("fail points unavailable on this target: %v", err)
	}
	r := e.do("POST", "/v1/transfers", "fault", transferBody(a, b, 10))
	_ = admin.RunCommand(context.Background(), bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Err()
	wantProblem(t, r, 503, CodeUnavailable)
	if r := e.do("POST", "/v1/transfers", "fault", transferBody(a, b, 10)); r.status != 201 {
		t.Fatalf("retry: %d %s", r.status, r.raw)
	}
	if got := e.balance(a); got != 90 {
		t.Errorf("balance = %d, want 90 (moved exactly once)", got)
	}
}

func TestPanicBecomes500(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.h.engine.GET("/v1/boom", func(*ginContext) { panic("secret internal detail") })
	r := e.do("GET", "/v1/boom", "", "")
	wantProblem(t, r, 500, CodeInternal)
	if bytes.Contains(r.raw, []byte("secret")) {
		t.Errorf("panic detail leaked: %s", r.raw)
	}
}

func TestListTransfersPaginates(t *testing.T) {
	e := newEnv(t, envOpts{})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 1000)
	for i := 0; i < 5; i++ {
		// created_at has millisecond resolution and ties go by id: one transfer a millisecond.
		time.Sleep(2 * time.Millisecond)
		if r := e.do("POST", "/v1/transfers", fmt.Sprintf("p%d", i), transferBody(a, b, int64(i+1))); r.status != 201 {
			t.Fatal(r.status, string(r.raw))
		}
	}
	var amounts []float64
	path := "/v1/accounts/" + a + "/transfers?limit=2"
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		r := e.do("GET", path, "", "")
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.raw)
		}
		for _, d := range r.body["data"].([]any) {
			amounts = append(amounts, d.(map[string]any)["amount"].(float64))
		}
		next, _ := r.body["next"].(string)
		if r.body["next"] == nil {
			break
		}
		path = "/v1/accounts/" + a + "/transfers?limit=2&after=" + next
	}
	// Newest first: 5, 4, 3, 2, 1, then the deposit of 1000.
	want := []float64{5, 4, 3, 2, 1, 1000}
	if fmt.Sprint(amounts) != fmt.Sprint(want) {
		t.Errorf("amounts = %v, want %v", amounts, want)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	e := newEnv(t, envOpts{})
	if r := e.do("GET", "/readyz", "", ""); r.status != 200 {
		t.Errorf("readyz: %d %s", r.status, r.raw)
	}
	a := e.account("alice", "USD")
	e.deposit(a, 5)
	r := e.do("GET", "/metrics", "", "")
	for _, m := range []string{"bankd_http_requests_total", "bankd_http_request_duration_seconds", "bankd_transfers_total",
		"bankd_lease_acquire_failures_total", "bankd_leases_lost_total", "bankd_transfers_recovered_total"} {
		if !bytes.Contains(r.raw, []byte(m)) {
			t.Errorf("metrics lack %s", m)
		}
	}
	if r.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id in response")
	}
}

// A client that hangs up right after sending must not leave its key stuck in flight: the work
// finishes, and the retry gets the stored answer at once.
func TestClientDisconnectDoesNotStrandKey(t *testing.T) {
	e := newEnv(t, envOpts{})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client is already gone when the handler runs
	req := httptest.NewRequest("POST", "/v1/transfers", strings.NewReader(transferBody(a, b, 10))).WithContext(ctx)
	req.Header.Set("Idempotency-Key", "gone")
	e.h.ServeHTTP(httptest.NewRecorder(), req)
	r := e.do("POST", "/v1/transfers", "gone", transferBody(a, b, 10))
	if r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry after disconnect: %d %s (replayed=%q)", r.status, r.raw, r.header.Get("Idempotent-Replayed"))
	}
	if got := e.balance(a); got != 90 {
		t.Errorf("balance = %d, want 90", got)
	}
}

// Money movements keep their key in the journal itself: a refusal is replayed like a success,
// a key is tied to one kind of movement, and keys are scoped per API key.
func TestMoneyMovementKeys(t *testing.T) {
	e := newEnv(t, envOpts{keys: []string{"secret-1", "secret-2"}})
	a, b := e.account("alice", "USD"), e.account("bob", "USD")
	e.deposit(a, 100)

	missing := transferBody(a, uuid.NewString(), 10)
	first := e.do("POST", "/v1/transfers", "to-nobody", missing)
	wantProblem(t, first, 404, CodeNotFound)
	again := e.do("POST", "/v1/transfers", "to-nobody", missing)
	wantProblem(t, again, 404, CodeNotFound)
	if again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" || !bytes.Equal(first.raw, again.raw) {
		t.Errorf("refusal replay: %q %s vs %q %s", first.header.Get("Idempotent-Replayed"), first.raw,
			again.header.Get("Idempotent-Replayed"), again.raw)
	}

	if r := e.do("POST", "/v1/transfers", "k1", transferBody(a, b, 10)); r.status != 201 {
		t.Fatalf("transfer: %d %s", r.status, r.raw)
	}
	// The same key for a deposit, or for a transfer to another account, is a different request.
	wantProblem(t, e.do("POST", "/v1/accounts/"+a+"/deposits", "k1", `{"amount":10,"currency":"USD"}`), 422, CodeKeyReused)
	wantProblem(t, e.do("POST", "/v1/transfers", "k1", transferBody(b, a, 10)), 422, CodeKeyReused)
	// Under the other API key, k1 is new.
	e.key = "secret-2"
	if r := e.do("POST", "/v1/transfers", "k1", transferBody(a, b, 10)); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("same key, other API key: %d %s", r.status, r.raw)
	}
	if got := e.balance(a); got != 80 {
		t.Errorf("balance = %d, want 80: two transfers of 10, nothing else", got)
	}
}
