package transaction

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/internal/testmongo"
)

// markersOf reads an account's pending markers straight from the database.
func markersOf(t *testing.T, s *Service, id string) []string {
	t.Helper()
	var doc struct {
		Markers []string `bson:"pendingTransfers"`
	}
	if err := s.accounts.Collection().FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.Markers
}

// waitKept waits until finishBatch has handed transfer id's marker on
// account over to the account's next lease.
func waitKept(t *testing.T, s *Service, account, id string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.staleMu.Lock()
		kept := slices.Contains(s.stale[account], id)
		s.staleMu.Unlock()
		if kept {
			return
		}
	}
	t.Fatalf("the marker of %s on %s was never kept for a later lease", id, account)
}

// TestBatchMarkersGoWithTheNextLease: a batched transfer's markers stay on
// its accounts after it completes and are removed by the write that next
// leases each account, so they never pile up, and money is conserved.
func TestBatchMarkersGoWithTheNextLease(t *testing.T) {
	db := testmongo.Database(t)
	svc := newSvc(t, db, Config{})
	ids := openAccounts(t, svc, 3, 1000)
	a, b, c := ids[0], ids[1], ids[2]
	ctx := context.Background()

	t1, err := svc.Transfer(ctx, Request{ID: uuid.NewString(), From: a, To: b, Amount: 10, Currency: usd})
	if err != nil {
		t.Fatal(err)
	}
	waitKept(t, svc, a, t1.ID)
	if m := markersOf(t, svc, a); !slices.Contains(m, t1.ID) {
		t.Fatalf("a's markers %v: t1's should wait for a's next lease", m)
	}
	if _, err := svc.Transfer(ctx, Request{ID: uuid.NewString(), From: a, To: c, Amount: 5, Currency: usd}); err != nil {
		t.Fatal(err)
	}
	if m := markersOf(t, svc, a); slices.Contains(m, t1.ID) {
		t.Errorf("a's markers %v: t1's should have gone with a's next lease", m)
	}
	if m := markersOf(t, svc, b); !slices.Contains(m, t1.ID) {
		t.Errorf("b's markers %v: b was not leased again, t1's marker should still be there", m)
	}
	for range 20 {
		if _, err := svc.Transfer(ctx, Request{ID: uuid.NewString(), From: a, To: b, Amount: 1, Currency: usd}); err != nil {
			t.Fatal(err)
		}
	}
	// A transfer's markers are handed over after its caller is answered, so
	// the next lease may come just before them: a few may wait one lease more.
	for _, id := range []string{a, b} {
		if m := markersOf(t, svc, id); len(m) > 4 {
			t.Errorf("%d markers on %s after 20 transfers: they pile up", len(m), id)
		}
	}
	if got := balance(t, svc, a) + balance(t, svc, b) + balance(t, svc, c); got != 3000 {
		t.Errorf("balances sum to %d, want 3000", got)
	}
	mustAudit(t, svc)
}

// TestBatchMarkersPulledAtOnceWhenTooMany: past the bound, a batch removes
// its own markers with a write of its own, as before.
func TestBatchMarkersPulledAtOnceWhenTooMany(t *testing.T) {
	db := testmongo.Database(t)
	svc := newSvc(t, db, Config{})
	svc.staleMax = 0
	ids := openAccounts(t, svc, 2, 100)
	tr, err := svc.Transfer(context.Background(), Request{ID: uuid.NewString(), From: ids[0], To: ids[1], Amount: 10, Currency: usd})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		ma, mb := markersOf(t, svc, ids[0]), markersOf(t, svc, ids[1])
		if !slices.Contains(ma, tr.ID) && !slices.Contains(mb, tr.ID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("markers %v, %v still there", ma, mb)
		}
	}
	svc.staleMu.Lock()
	defer svc.staleMu.Unlock()
	if svc.staleN != 0 {
		t.Errorf("%d markers kept past a bound of 0", svc.staleN)
	}
}
