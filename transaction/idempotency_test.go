package transaction

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/bankd/bankd/idempotency"
	"github.com/bankd/bankd/internal/testmongo"
)

// TestRecoverySettlesIdempotencyRecords: the instance serving a keyed
// request dies mid-transfer. The recovery loop of another instance finishes
// the transfer and settles the idempotency record by re-running the stored
// request under the record's resource id, so the client's retry replays one
// outcome and money moved once.
func TestRecoverySettlesIdempotencyRecords(t *testing.T) {
	db := testmongo.Database(t)
	db2 := secondInstance(t, db)
	ctx := context.Background()
	crashing := newSvc(t, db, Config{Lock: shortLeases("crashing"), Hooks: crashAt(StepCredit)})
	keysA := idempotency.New(db, idempotency.Config{Owner: "crashing", LeaseDuration: 150 * time.Millisecond})
	survivor := newSvc(t, db2, Config{Lock: shortLeases("survivor"), RecoveryGrace: time.Millisecond})
	keysB := idempotency.New(db2, idempotency.Config{Owner: "survivor", SettleGrace: time.Millisecond})
	if err := keysB.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	ids := openAccounts(t, survivor, 2, 100)

	body, _ := json.Marshal(Request{From: ids[0], To: ids[1], Amount: 25, Currency: usd})
	begin := idempotency.Begin{Scope: "api-key-1", Key: "retry-me", Fingerprint: idempotency.Fingerprint(body), Request: body}
	rec, err := keysA.Begin(ctx, begin)
	if err != nil {
		t.Fatal(err)
	}
	var req Request
	_ = json.Unmarshal(rec.Request, &req)
	req.ID = rec.ResourceID
	if _, err := crashing.Transfer(ctx, req); !errors.Is(err, errCrashed) {
		t.Fatalf("got %v, want the simulated crash", err)
	}

	replay := func(ctx context.Context, r *idempotency.Record) (idempotency.Outcome, error) {
		var req Request
		if err := json.Unmarshal(r.Request, &req); err != nil {
			return idempotency.Outcome{}, err
		}
		req.ID = r.ResourceID
		tr, err := survivor.Transfer(ctx, req)
		if err != nil {
			return idempotency.Outcome{}, err
		}
		return idempotency.Outcome{Status: 201, Body: []byte(tr.ID)}, nil
	}
	loopCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		survivor.RunRecovery(loopCtx, 20*time.Millisecond, func(ctx context.Context) error {
			_, err := keysB.Settle(ctx, replay)
			return err
		})
	}()
	defer func() { stop(); <-stopped }()

	var final *idempotency.Record
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if final, err = keysB.Get(ctx, begin.Scope, begin.Key); err != nil {
			t.Fatal(err)
		}
		if final.State == idempotency.StateDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idempotency record never settled")
		}
	}
	if string(final.Outcome.Body) != rec.ResourceID {
		t.Errorf("settled outcome names transfer %q, want %q", final.Outcome.Body, rec.ResourceID)
	}
	retry, err := keysB.Begin(ctx, begin)
	if err != nil || !retry.Replay || string(retry.Outcome.Body) != rec.ResourceID {
		t.Errorf("client retry: got %+v, %v; want a replay of the settled outcome", retry, err)
	}
	if tr, err := survivor.Get(ctx, rec.ResourceID); err != nil || tr.State != StateCompleted {
		t.Errorf("transfer: %v, %v; want completed", tr, err)
	}
	if a, b := balance(t, survivor, ids[0]), balance(t, survivor, ids[1]); a != 75 || b != 125 {
		t.Errorf("balances %d, %d; want 75, 125", a, b)
	}
	mustAudit(t, survivor)
}
