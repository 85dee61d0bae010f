// Package testmongo gives tests a MongoDB to run against: one suite, two
// targets. Tests call Database(t) and get a fresh, uniquely named database
// that is dropped when the test ends, on
//
//  1. the real MongoDB at MONGODB_URI, when that variable is set;
//  2. else a MongoDB container (testcontainers-go), when a Docker engine
//     answers (checked cheaply first, so machines without Docker don't wait);
//  3. else the in-process embedmongo engine, started once per test binary.
//
// Which target was chosen, and why the real-MongoDB one was skipped, is
// logged once per test binary. Packages that start goroutines call Main from
// TestMain, which also tears the target down and checks for leaked goroutines.
package testmongo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// target is the server all tests of this binary share.
type target struct {
	name   string // "MONGODB_URI", "testcontainers", "embedmongo"
	uri    string
	note   string // why the real-MongoDB target was skipped, if it was
	client *mongo.Client
	close  func() // stops what we started
	err    error
}

var (
	once   sync.Once
	shared target
	logged sync.Once
)

func get(t testing.TB) *target {
	t.Helper()
	once.Do(func() { shared = start() })
	logged.Do(func() {
		msg := "testmongo: running against " + shared.name
		if shared.note != "" {
			msg += " (real MongoDB skipped: " + shared.note + ")"
		}
		t.Log(msg)
		if testing.Verbose() {
			fmt.Fprintln(os.Stderr, msg)
		}
	})
	if shared.err != nil {
		t.Fatalf("testmongo: %s: %v", shared.name, shared.err)
	}
	return &shared
}

func start() target {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var tg target
	switch uri := os.Getenv("MONGODB_URI"); {
	case uri != "":
		tg = target{name: "MONGODB_URI", uri: uri, close: func() {}}
	default:
		tg = startContainer(ctx)
		if tg.err != nil || tg.uri == "" {
			note := tg.note
			tg = startEmbedded(ctx)
			tg.note = note
		}
	}
	if tg.err != nil {
		return tg
	}
	tg.client, tg.err = connect(ctx, tg.uri)
	return tg
}

func connect(ctx context.Context, uri string) (*mongo.Client, error) {
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx, nil); err != nil {
		_ = c.Disconnect(context.Background())
		return nil, fmt.Errorf("ping %s: %w", uri, err)
	}
	return c, nil
}

// URI is the connection string of the shared target.
func URI(t testing.TB) string { return get(t).uri }

// Target names the shared target: "MONGODB_URI", "testcontainers" or "embedmongo".
func Target(t testing.TB) string { return get(t).name }

// Client is the client shared by all tests of the binary. Don't disconnect it.
func Client(t testing.TB) *mongo.Client { return get(t).client }

// NewClient connects a separate client (its own connection pool) to the
// shared target, disconnected when the test ends. Two clients on one
// database stand for two bankd instances.
func NewClient(t testing.TB) *mongo.Client {
	t.Helper()
	tg := get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := connect(ctx, tg.uri)
	if err != nil {
		t.Fatalf("testmongo: %v", err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// Database returns a fresh database named after the test, dropped when the test ends.
func Database(t testing.TB) *mongo.Database {
	t.Helper()
	db := get(t).client.Database(DatabaseName(t))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			t.Logf("testmongo: drop %s: %v", db.Name(), err)
		}
	})
	return db
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// DatabaseName is a unique database name derived from the test's name
// (MongoDB allows 63 bytes and no "/\. \"$").
func DatabaseName(t testing.TB) string {
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 48 {
		name = name[:48]
	}
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "t_" + name + "_" + hex.EncodeToString(b[:])
}

// Main runs the tests, then stops the shared target and fails the binary if
// goroutines of bankd or the driver are still running (a leak).
func Main(m *testing.M) {
	code := m.Run()
	if shared.client != nil {
		_ = shared.client.Disconnect(context.Background())
	}
	if shared.close != nil {
		shared.close()
	}
	if code == 0 {
		if leaks := leakedGoroutines(3 * time.Second); leaks != "" {
			fmt.Fprintf(os.Stderr, "testmongo: leaked goroutines:\n%s\n", leaks)
			code = 1
		}
	}
	os.Exit(code)
}
