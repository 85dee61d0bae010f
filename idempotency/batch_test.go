package idempotency

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/bankd/bankd/internal/testmongo"
)

// TestGroupedCreateAndComplete: one grouped command creates new records and
// refuses an existing key without touching it; one grouped command completes
// records, and when one of its statements is refused (a record taken over)
// the others are still completed and only that one says ErrLeaseLost.
func TestGroupedCreateAndComplete(t *testing.T) {
	db := testmongo.Database(t)
	s := New(db, Config{Owner: "A"})
	ctx := context.Background()
	old, err := s.Begin(ctx, begin("old", "body"))
	if err != nil {
		t.Fatal(err)
	}
	recs := []*Record{s.newRecord(begin("n1", "b1")), s.newRecord(begin("old", "other")), s.newRecord(begin("n2", "b2"))}
	errs := s.createMany(ctx, recs)
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], errNotNew) {
		t.Fatalf("createMany: %v, want nil, errNotNew, nil", errs)
	}
	if got, err := s.Get(ctx, "client-1", "old"); err != nil || got.Fingerprint != old.Fingerprint || got.ResourceID != old.ResourceID {
		t.Fatalf("existing record changed: %+v, %v", got, err)
	}

	stale := *recs[2]
	stale.Token = 7 // as if another owner had taken it over since
	cs := []completion{
		{r: recs[0], out: Outcome{Status: 201}, id: "c0"},
		{r: &stale, out: Outcome{Status: 201}, id: "c1"},
		{r: old, out: Outcome{Status: 200}, id: "c2"},
	}
	errs = s.completeMany(ctx, cs)
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], ErrLeaseLost) {
		t.Fatalf("completeMany: %v, want nil, ErrLeaseLost, nil", errs)
	}
	for key, want := range map[string]State{"n1": StateDone, "n2": StateInFlight, "old": StateDone} {
		got, err := s.Get(ctx, "client-1", key)
		if err != nil || got.State != want {
			t.Errorf("%s: %+v, %v; want %s", key, got, err, want)
		}
	}
}

// TestConcurrentBeginsShareCommands: many concurrent new keys are all
// created in flight once, whatever batches they share, and each completes.
func TestConcurrentBeginsShareCommands(t *testing.T) {
	db := testmongo.Database(t)
	s := New(db, Config{Owner: "A"})
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("k%d", i%(n/2)) // every key twice: one creates, one finds it
			rec, err := s.Begin(ctx, begin(key, "body"))
			if err != nil {
				errs[i] = err
				return
			}
			if rec.Replay {
				ids[i] = rec.ResourceID
				return
			}
			ids[i] = rec.ResourceID
			errs[i] = s.Complete(ctx, rec, Outcome{Status: 201})
		}()
	}
	wg.Wait()
	byKey := map[string]string{}
	for i := range n {
		key := fmt.Sprintf("k%d", i%(n/2))
		if errs[i] != nil {
			if !errors.Is(errs[i], ErrInFlight) {
				t.Errorf("request %d: %v", i, errs[i])
			}
			continue
		}
		if prev, ok := byKey[key]; ok && prev != ids[i] {
			t.Errorf("key %s got two resource ids: %s, %s", key, prev, ids[i])
		}
		byKey[key] = ids[i]
	}
	for k := range n / 2 {
		rec, err := s.Get(ctx, "client-1", fmt.Sprintf("k%d", k))
		if err != nil || rec == nil || rec.State != StateDone {
			t.Errorf("k%d: %+v, %v; want done", k, rec, err)
		}
	}
}
