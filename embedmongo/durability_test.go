package embedmongo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// TestMain lets the test binary double as an engine process for the crash test: with
// EMBEDMONGO_CHILD_DIR set it serves that directory until killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("EMBEDMONGO_CHILD_DIR"); dir != "" {
		srv, err := Start(context.Background(), Options{Dir: dir, Addr: os.Getenv("EMBEDMONGO_CHILD_ADDR")})
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		fmt.Println("READY", srv.Addr())
		select {}
	}
	os.Exit(m.Run())
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startChild runs the engine in a child process on dir and waits until it accepts connections.
func startChild(t *testing.T, dir, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EMBEDMONGO_CHILD_DIR="+dir, "EMBEDMONGO_CHILD_ADDR="+addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("child engine did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An acknowledged write survives kill -9: writers insert and update under concurrency, the
// engine is SIGKILLed at a random moment, restarted on the same directory, and every
// acknowledged write must be there, with no torn document.
func TestAcknowledgedWritesSurviveKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns engine processes")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	child := startChild(t, dir, addr)
	client := dialChild(t, addr)
	coll := client.Database("dur").Collection("docs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	acked := map[string]int64{} // _id → last acknowledged version
	killMidLoad(t, child, client, func(w, i int, id string) bool {
		// The payload repeats the id so a torn document is detectable.
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "v", Value: int64(1)}, {Key: "check", Value: strings.Repeat(id, 8)}})
		if err != nil {
			return false // the engine died: this write was not acknowledged
		}
		mu.Lock()
		acked[id] = 1
		mu.Unlock()
		_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: int64(2)}}}})
		if err != nil {
			return false
		}
		mu.Lock()
		acked[id] = 2
		mu.Unlock()
		return true
	})

	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	found := map[string]int64{}
	for _, d := range reopenDocs(t, dir) {
		if d.Check != strings.Repeat(d.ID, 8) {
			t.Errorf("torn document %q: check=%q", d.ID, d.Check)
		}
		found[d.ID] = d.V
	}
	for id, v := range acked {
		got, ok := found[id]
		if !ok {
			t.Errorf("acknowledged insert %s lost", id)
		} else if got < v {
			t.Errorf("acknowledged update of %s lost: v=%d, want ≥ %d", id, got, v)
		}
	}
	t.Logf("%d acknowledged documents, %d present after kill -9", len(acked), len(found))
}

// A data directory held by a live engine cannot be opened by a second one.
// killMidLoad runs 16 writers against the child engine, each calling write with its number,
// a counter and an id made of both until write fails; it kill -9s the engine at a random
// moment, then waits for the writers and disconnects.
func killMidLoad(t *testing.T, child *exec.Cmd, client *mongo.Client, write func(w, i int, id string) bool) {
	t.Helper()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 16; w++ {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if !write(w, i, fmt.Sprintf("w%d-%d", w, i)) {
					return
				}
			}
		})
	}
	time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	close(stop)
	wg.Wait()
	_ = client.Disconnect(context.Background())
}

// dialChild connects to a child engine. Writers that start an operation after it is killed
// wait in server selection: keep that short, or they hold up the check for up to the driver's
// default 30 s.
func dialChild(t *testing.T, addr string) *mongo.Client {
	t.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr + "/?directConnection=true").
		SetMaxPoolSize(64).SetServerSelectionTimeout(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

type durDoc struct {
	ID    string `bson:"_id"`
	V     int64  `bson:"v"`
	Check string `bson:"check"`
}

// reopenDocs starts an engine on dir and reads back dur.docs.
func reopenDocs(t *testing.T, dir string) []durDoc {
	t.Helper()
	_, client := startEngine(t, Options{Dir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // the check's own time
	defer cancel()
	cur, err := client.Database("dur").Collection("docs").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []durDoc
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

// A write acknowledged with {j: false} may be lost in a crash, but not once a later write
// with a journal wait is acknowledged: the log is one sequence, so that wait covers it. Each
// writer inserts documents unjournaled, then records the last one in a journaled write; after
// kill -9, every insert up to each writer's last journaled record must be there.
func TestUnjournaledWritesAreCoveredByTheNextJournaled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns engine processes")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	child := startChild(t, dir, addr)
	client := dialChild(t, addr)
	db := client.Database("dur")
	lazy := db.Collection("docs", options.Collection().SetWriteConcern(&writeconcern.WriteConcern{W: 1, Journal: new(false)}))
	marks := db.Collection("marks")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	covered := map[int]int{} // writer → inserts 0..n-1 covered by an acknowledged journaled write
	killMidLoad(t, child, client, func(w, i int, id string) bool {
		if _, err := lazy.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "check", Value: strings.Repeat(id, 8)}}); err != nil {
			return false
		}
		if i%4 != 3 {
			return true
		}
		_, err := marks.UpdateOne(ctx, bson.D{{Key: "_id", Value: w}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: i + 1}}}},
			options.UpdateOne().SetUpsert(true))
		if err != nil {
			return false
		}
		mu.Lock()
		covered[w] = i + 1
		mu.Unlock()
		return true
	})

	mu.Lock()
	defer mu.Unlock()
	if len(covered) == 0 {
		t.Fatal("no journaled write was acknowledged before the kill")
	}
	found := map[string]bool{}
	for _, d := range reopenDocs(t, dir) {
		found[d.ID] = d.Check == strings.Repeat(d.ID, 8)
	}
	lost := 0
	for w, n := range covered {
		for i := 0; i < n; i++ {
			if !found[fmt.Sprintf("w%d-%d", w, i)] {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d unjournaled inserts lost although a later journaled write was acknowledged", lost)
	}
	t.Logf("%d writers, %d documents present after kill -9", len(covered), len(found))
}

func TestDataDirIsExclusive(t *testing.T) {
	dir := t.TempDir()
	startEngine(t, Options{Dir: dir})
	srv, err := Start(context.Background(), Options{Dir: dir})
	if err == nil {
		srv.Close()
		t.Fatal("second engine opened a data dir that is in use")
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q should name the directory", err)
	}
}

// Data written with a data dir is there after a clean restart, indexes included.
func TestRestartKeepsDataAndIndexes(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	srv, err := Start(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		t.Fatal(err)
	}
	coll := client.Database("r").Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
	_ = client.Disconnect(ctx)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	_, client2 := startEngine(t, Options{Dir: dir})
	coll = client2.Database("r").Collection("c")
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("after restart: %d docs, %v; want 1", n, err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "email", Value: "a@x"}})
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("unique index not enforced after restart: %v", err)
	}
}
