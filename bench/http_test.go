package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"github.com/bankd/bankd/internal/app"
)

// BenchmarkHTTPTransfer puts bankd and the lock-free ceiling behind the same HTTP client: the
// uniform load's transfers as POST requests from 64 keep-alive clients over loopback, each
// answered after its durable writes. The ceiling's server is a bare net/http handler doing
// incTransfer; bankd's is its whole API (authentication, idempotency keys, the batching
// Service) as app.Start serves it. Both pay the same client and HTTP costs, so their ratio is
// the like-for-like one for bankd over HTTP (bankload's figures beside the in-process ceiling
// also charge bankd with HTTP).
func BenchmarkHTTPTransfer(b *testing.B) {
	const n = uniformAccounts
	b.Run("ceiling/uniform", func(b *testing.B) {
		eng := startEngine(b)
		defer eng.close()
		coll := eng.client.Database("baseline").Collection("accounts")
		seedPlain(b, coll, n)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req httpTransfer
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			o, err := incTransfer(r.Context(), coll, req.From, req.To, req.Amount)
			switch {
			case err != nil:
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
			case o == failed:
				http.Error(w, `{"code":"insufficient_funds"}`, http.StatusUnprocessableEntity)
			default:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, `{"state":"completed"}`)
			}
		}))
		defer srv.Close()
		ids := make([]string, n)
		for i := range ids {
			ids[i] = plainID(i)
		}
		postTransfers(b, srv.URL+"/v1/transfers", "", ids)
		if got, want := sumPlain(b, coll), initialBalance*int64(n); got != want {
			b.Errorf("balances sum to %d, want %d", got, want)
		}
	})
	b.Run("bankd/uniform", func(b *testing.B) {
		eng := startEngine(b)
		defer eng.close()
		const key = "bench-key-0123456789abcdef"
		cfg := app.Defaults()
		cfg.MongoURI, cfg.Addr, cfg.APIKeys = eng.srv.URI(), "127.0.0.1:0", []string{key}
		a, err := app.Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = a.Close(context.Background()) }()
		svc := a.Transactions()
		ids := seedFunded(b, svc, eng.client.Database(cfg.Database), n)
		postTransfers(b, a.URL()+"/v1/transfers", key, ids)
		rep, err := svc.Audit(context.Background())
		switch {
		case err != nil:
			b.Error(err)
		case !rep.OK() || rep.Unfinished != 0:
			b.Errorf("audit: %d violations, %d unfinished: %v", len(rep.Violations), rep.Unfinished, rep.Violations)
		}
	})
}

type httpTransfer struct {
	From     string `json:"from_account_id"`
	To       string `json:"to_account_id"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// postTransfers runs the clients against url, each transfer between two of ids chosen
// uniformly, with a fresh Idempotency-Key.
func postTransfers(b *testing.B, url, apiKey string, ids []string) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer hc.CloseIdleConnections()
	runClients(b, func(ctx context.Context, _ int, rng *rand.Rand) (outcome, error) {
		i, j := pair(rng, len(ids))
		body, err := json.Marshal(httpTransfer{From: ids[i], To: ids[j], Amount: 1 + rng.Int64N(100), Currency: string(usd)})
		if err != nil {
			return 0, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+apiKey)
		req.Header.Set("Idempotency-Key", uuid.NewString())
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		answer, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		switch {
		case err != nil:
			return 0, err
		case resp.StatusCode == http.StatusCreated:
			return ok, nil
		case resp.StatusCode == http.StatusUnprocessableEntity:
			return failed, nil
		case resp.StatusCode == http.StatusServiceUnavailable:
			return busy, nil
		}
		return 0, fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, answer)
	})
}
