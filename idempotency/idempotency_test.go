package idempotency

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/internal/testmongo"
)

func TestMain(m *testing.M) { testmongo.Main(m) }

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key  string
		want error
	}{
		{"abc-123", nil},
		{strings.Repeat("k", 255), nil},
		{"with space ~", nil},
		{"", ErrInvalidKey},
		{strings.Repeat("k", 256), ErrInvalidKey},
		{"tab\there", ErrInvalidKey},
		{"naïve", ErrInvalidKey},
	}
	for _, tc := range tests {
		if got := ValidateKey(tc.key); !errors.Is(got, tc.want) {
			t.Errorf("ValidateKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a := Fingerprint([]byte("POST"), []byte(`{"amount":1}`))
	tests := []struct {
		name  string
		other string
		same  bool
	}{
		{"same parts", Fingerprint([]byte("POST"), []byte(`{"amount":1}`)), true},
		{"other body", Fingerprint([]byte("POST"), []byte(`{"amount":2}`)), false},
		{"bytes moved across parts", Fingerprint([]byte("POST{"), []byte(`"amount":1}`)), false},
	}
	for _, tc := range tests {
		if got := a == tc.other; got != tc.same {
			t.Errorf("%s: equal = %v, want %v", tc.name, got, tc.same)
		}
	}
	if len(a) != 64 {
		t.Errorf("fingerprint length %d, want 64 hex digits", len(a))
	}
}

func begin(key, body string) Begin {
	return Begin{Scope: "client-1", Key: key, Fingerprint: Fingerprint([]byte(body)), Request: []byte(body)}
}

func TestBeginCompleteReplay(t *testing.T) {
	db := testmongo.Database(t)
	s := New(db, Config{Owner: "A"})
	ctx := context.Background()
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	rec, err := s.Begin(ctx, begin("k1", "body"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Replay || rec.TakenOver || rec.ResourceID == "" || rec.State != StateInFlight {
		t.Fatalf("new record = %+v, want ours, in flight, with a resource id", rec)
	}
	steps := []struct {
		name string
		b    Begin
		want error
	}{
		{"duplicate in flight", begin("k1", "body"), ErrInFlight},
		{"other request, same key", begin("k1", "other"), ErrKeyMismatch},
		{"other key", begin("k2", "body"), nil},
		{"same key, other scope", Begin{Scope: "client-2", Key: "k1", Fingerprint: Fingerprint([]byte("body"))}, nil},
		{"invalid key", begin("", "body"), ErrInvalidKey},
	}
	for _, st := range steps {
		if _, err := s.Begin(ctx, st.b); !errors.Is(err, st.want) {
			t.Errorf("%s: got %v, want %v", st.name, err, st.want)
		}
	}
	out := Outcome{Status: 201, Body: []byte(`{"id":"x"}`)}
	if err := s.Complete(ctx, rec, out); err != nil {
		t.Fatal(err)
	}
	again, err := s.Begin(ctx, begin("k1", "body"))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replay || again.Outcome == nil || again.Outcome.Status != 201 || string(again.Outcome.Body) != `{"id":"x"}` {
		t.Errorf("replay = %+v, want the stored outcome", again)
	}
	if again.ResourceID != rec.ResourceID {
		t.Errorf("resource id %s, want %s", again.ResourceID, rec.ResourceID)
	}
	if _, err := s.Begin(ctx, begin("k1", "other")); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("done, other request: got %v, want ErrKeyMismatch", err)
	}
	if err := s.Complete(ctx, rec, out); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("completing twice: got %v, want ErrLeaseLost", err)
	}
}

// TestTakeOver: a record whose owner died is taken over once its lease
// expires (by the database clock), with the same resource id; the dead
// owner's late Complete is refused. Release hands over at once.
func TestTakeOver(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	dead := New(db, Config{Owner: "dead", LeaseDuration: 150 * time.Millisecond})
	live := New(testmongo.NewClient(t).Database(db.Name()), Config{Owner: "live"})

	rec, err := dead.Begin(ctx, begin("k", "body"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Begin(ctx, begin("k", "body")); !errors.Is(err, ErrInFlight) {
		t.Fatalf("live lease: got %v, want ErrInFlight", err)
	}
	var took *Record
	for deadline := time.Now().Add(10 * time.Second); took == nil; time.Sleep(20 * time.Millisecond) {
		took, err = live.Begin(ctx, begin("k", "body"))
		if err != nil && !errors.Is(err, ErrInFlight) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("never taken over")
		}
	}
	if !took.TakenOver || took.ResourceID != rec.ResourceID || took.Token != rec.Token+1 {
		t.Errorf("taken over = %+v, want TakenOver, resource %s, token %d", took, rec.ResourceID, rec.Token+1)
	}
	if err := dead.Complete(ctx, rec, Outcome{Status: 500}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("dead owner completes: got %v, want ErrLeaseLost", err)
	}
	// Release: a transient failure lets the next retry in at once.
	if err := live.Release(ctx, took); err != nil {
		t.Fatal(err)
	}
	retry, err := dead.Begin(ctx, begin("k", "body"))
	if err != nil || !retry.TakenOver || retry.ResourceID != rec.ResourceID {
		t.Fatalf("after release: got %+v, %v; want taken over, same resource", retry, err)
	}
	if err := dead.Complete(ctx, retry, Outcome{Status: 201}); err != nil {
		t.Fatal(err)
	}
}

// TestSettle: records nobody came back for are re-run and completed.
func TestSettle(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	crashed := New(db, Config{Owner: "crashed", LeaseDuration: 100 * time.Millisecond})
	for _, k := range []string{"ok", "fails"} {
		if _, err := crashed.Begin(ctx, begin(k, "req-"+k)); err != nil {
			t.Fatal(err)
		}
	}
	settler := New(db, Config{Owner: "settler", SettleGrace: time.Millisecond})
	replay := func(_ context.Context, r *Record) (Outcome, error) {
		if r.Key == "fails" {
			return Outcome{}, errors.New("still broken")
		}
		return Outcome{Status: 201, Body: append([]byte("done:"), r.Request...)}, nil
	}
	var settled int
	for deadline := time.Now().Add(10 * time.Second); settled == 0; time.Sleep(20 * time.Millisecond) {
		n, err := settler.Settle(ctx, replay)
		if n == 0 && err == nil && time.Now().After(deadline) {
			t.Fatal("nothing settled")
		}
		settled = n
	}
	if settled != 1 {
		t.Errorf("settled %d, want 1", settled)
	}
	rec, err := settler.Get(ctx, "client-1", "ok")
	if err != nil || rec.State != StateDone || string(rec.Outcome.Body) != "done:req-ok" {
		t.Errorf("settled record = %+v, %v; want done with the replayed outcome", rec, err)
	}
	rec, err = settler.Get(ctx, "client-1", "fails")
	if err != nil || rec.State != StateInFlight || rec.Owner != "" {
		t.Errorf("failed replay left %+v, %v; want in flight, released", rec, err)
	}
}

func TestTTLIndex(t *testing.T) {
	db := testmongo.Database(t)
	ctx := context.Background()
	s := New(db, Config{TTL: time.Millisecond})
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	specs, err := s.coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sp := range specs {
		if sp.Name == "expiresAt_ttl" && sp.ExpireAfterSeconds != nil && *sp.ExpireAfterSeconds == 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no TTL index on expiresAt among %v", specs)
	}
	if testmongo.Target(t) != "embedmongo" {
		t.Skip("a real mongod's TTL monitor runs every 60 s; removal checked on embedmongo only")
	}
	rec, err := s.Begin(ctx, begin("short", "x"))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n, err := s.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: rec.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("expired record never removed")
		}
	}
}
