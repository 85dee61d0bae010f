package embedmongo

import (
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func setFailPoint(t *testing.T, client *mongo.Client, mode any, data bson.D) {
	t.Helper()
	err := client.Database("admin").RunCommand(testCtx(t), bson.D{
		{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}, {Key: "data", Value: data},
	}).Err()
	if err != nil {
		t.Fatal(err)
	}
}

func waitUsable(t *testing.T, client *mongo.Client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := client.Database("admin").RunCommand(testCtx(t), bson.D{{Key: "ping", Value: 1}}).Err()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("client never recovered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFailCommandErrorCodeTimes(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("fp").Collection("c")
	setFailPoint(t, client, bson.D{{Key: "times", Value: 2}}, bson.D{
		{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 91},
	})
	for i := 0; i < 2; i++ {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}})
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 91 {
			t.Fatalf("insert %d: got %v, want code 91", i, err)
		}
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 9}}); err != nil {
		t.Fatalf("third insert should pass once 'times' is used up: %v", err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("documents = %d, want 1 (failed inserts must store nothing)", n)
	}
}

func TestFailCommandSkipAndOff(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("fp").Collection("c")
	setFailPoint(t, client, bson.D{{Key: "skip", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2},
	})
	if err := coll.FindOne(ctx, bson.D{}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("first find (skipped): got %v, want ErrNoDocuments", err)
	}
	if err := coll.FindOne(ctx, bson.D{}).Err(); err == nil || errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("second find: got %v, want a server error", err)
	}
	setFailPoint(t, client, "off", bson.D{})
	if err := coll.FindOne(ctx, bson.D{}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("after off: got %v", err)
	}
}

func TestFailCommandCloseConnectionAndBlock(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("fp").Collection("c")
	setFailPoint(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true},
	})
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); !mongo.IsNetworkError(err) {
		t.Fatalf("got %v, want a network error", err)
	}
	// The driver clears its pool after a network error; wait until it is usable again.
	waitUsable(t, client)
	setFailPoint(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 200},
	})
	start := time.Now()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("blocked insert took %v, want ≥ 200ms", d)
	}
}

func TestFailCommandWriteConcernError(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	setFailPoint(t, client, bson.D{{Key: "times", Value: 1}}, bson.D{
		{Key: "failCommands", Value: bson.A{"insert"}},
		{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 100}, {Key: "errmsg", Value: "UnsatisfiableWriteConcern"}}},
	})
	_, err := client.Database("fp").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteConcernError == nil || we.WriteConcernError.Code != 100 {
		t.Fatalf("got %v, want a write concern error 100", err)
	}
}
