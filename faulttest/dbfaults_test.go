package faulttest

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// fault is one setting of the failCommand fail point. All are limited to bankd's own
// connections (appName "bankd") so the test's own client is never hit.
type fault struct {
	name  string
	times int32
	data  bson.D
}

var faults = []fault{
	{"ShutdownInProgress on findAndModify/update", 4, bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify", "update"}},
		{Key: "errorCode", Value: int32(91)}}},
	{"InterruptedAtShutdown on writes and finds", 4, bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify", "update", "insert", "find", "aggregate"}},
		{Key: "errorCode", Value: int32(11600)}}},
	{"connection closed", 2, bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify", "update", "find"}},
		{Key: "closeConnection", Value: true}}},
	{"200 ms stall", 6, bson.D{
		{Key: "failCommands", Value: bson.A{"findAndModify", "update"}},
		{Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: int32(200)}}},
}

func setFailPoint(ctx context.Context, admin *mongo.Database, mode any, data bson.D) error {
	cmd := bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}}
	if data != nil {
		cmd = append(cmd, bson.E{Key: "data", Value: append(bson.D{{Key: "appName", Value: "bankd"}}, data...)})
	}
	return admin.RunCommand(ctx, cmd).Err()
}

// databaseFaults: bankd runs against a cmd/embedmongo whose failCommand fail point makes
// its commands fail with errors, lose their connection, or stall, round after round while
// transfers run. Clients may see only final answers, 409 or 503 with Retry-After; retried
// with the same key, every transfer ends exactly once and no money is lost.
func databaseFaults(t *testing.T, bins binaries) {
	c := newClient(t)
	_, uri := startEngine(t, bins.embedmongo)
	addr := freeAddr(t)
	base := "http://" + addr
	r := router{bases: []string{base}}
	startBankd(t, c, bins.bankd, "bankd", addr, nil, "MONGODB_URI="+uri)

	mc, err := mongo.Connect(options.Client().ApplyURI(uri).SetAppName("faulttest"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mc.Disconnect(context.Background()) })
	admin := mc.Database("admin")
	off := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := setFailPoint(ctx, admin, "off", nil); err != nil {
			t.Errorf("turn the fail point off: %v", err)
		}
	}
	t.Cleanup(off)

	b := openBank(t, c, r, "dbfault")
	start := time.Now()
	l, done := c.startLoad(t.Context(), r, b.plan(seed(t), numTransfers))
	rounds := 0
inject:
	for ; rounds < 20; rounds++ {
		for _, f := range faults {
			if err := setFailPoint(t.Context(), admin, bson.D{{Key: "times", Value: f.times}}, f.data); err != nil {
				t.Fatalf("configure %s: %v", f.name, err)
			}
			select {
			case <-done:
				break inject
			case <-time.After(150 * time.Millisecond):
			}
		}
	}
	off()
	t.Logf("%d rounds of %d faults injected", rounds, len(faults))
	waitLoad(t, done)
	l.report(t, time.Since(start))
	t.Logf("transfers recovered: %v", c.metric(t.Context(), base, "bankd_transfers_recovered_total"))
	verify(t, c, base, b, l)
}

// shutdownErrorUnderReads: a "node is shutting down" error (11600) makes the driver clear
// its connection pool (as the server discovery spec requires), so the operations running
// beside the failed one fail too, with the driver's pool-cleared error rather than a
// server reply. Those must be answered 503 unavailable like the failed one, never 500.
func shutdownErrorUnderReads(t *testing.T, bins binaries) {
	c := newClient(t)
	_, uri := startEngine(t, bins.embedmongo)
	addr := freeAddr(t)
	base := "http://" + addr
	startBankd(t, c, bins.bankd, "bankd", addr, nil, "MONGODB_URI="+uri)
	mc, err := mongo.Connect(options.Client().ApplyURI(uri).SetAppName("faulttest"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mc.Disconnect(context.Background()) })
	admin := mc.Database("admin")
	t.Cleanup(func() { _ = setFailPoint(context.Background(), admin, "off", nil) })
	b := openBank(t, c, router{bases: []string{base}}, "reads")

	var mu sync.Mutex
	statuses := map[int]int{}
	var bad []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range numClients {
		wg.Go(func() {
			for i := 0; i < 2000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a := c.get(t.Context(), base, "/v1/accounts/"+b.accounts[(w+i)%len(b.accounts)])
				mu.Lock()
				statuses[a.status]++
				if a.err == nil && a.status != http.StatusOK && !transient(a) {
					bad = append(bad, a.String())
				}
				mu.Unlock()
			}
		})
	}
	for range 20 {
		if err := setFailPoint(t.Context(), admin, bson.D{{Key: "times", Value: int32(1)}}, bson.D{
			{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: int32(11600)}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("GET /v1/accounts/{id} answers by status: %v", statuses)
	for i, s := range bad {
		if i == 5 {
			t.Errorf("... %d in all", len(bad))
			break
		}
		t.Errorf("answered %s, want 200 or 503 unavailable", s)
	}
}
