package update

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func benchDoc() bson.D {
	hist := bson.A{}
	for i := 0; i < 20; i++ {
		hist = append(hist, bson.D{{Key: "amount", Value: int64(i)}, {Key: "ref", Value: "tx"}})
	}
	return bson.D{
		{Key: "_id", Value: "acct-1"}, {Key: "owner", Value: "alice"}, {Key: "currency", Value: "EUR"},
		{Key: "balance", Value: int64(1_000_000)}, {Key: "version", Value: int64(3)},
		{Key: "history", Value: hist}, {Key: "updatedAt", Value: bson.DateTime(0)},
	}
}

func BenchmarkIncPush(b *testing.B) {
	u, err := Compile(bson.D{
		{Key: "$inc", Value: bson.D{{Key: "balance", Value: int64(-500)}, {Key: "version", Value: int64(1)}}},
		{Key: "$push", Value: bson.D{{Key: "history", Value: bson.D{{Key: "amount", Value: int64(-500)}, {Key: "ref", Value: "tx"}}}}},
	}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	doc := benchDoc()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := u.Apply(doc, -1, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSet(b *testing.B) {
	u, err := Compile(bson.D{{Key: "$set", Value: bson.D{
		{Key: "owner", Value: "bob"}, {Key: "updatedAt", Value: bson.DateTime(5)},
	}}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	doc := benchDoc()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := u.Apply(doc, -1, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile compiles what a batched lease write sends: every statement of an update
// command is compiled on its own.
func BenchmarkCompile(b *testing.B) {
	u := bson.D{
		{Key: "$set", Value: bson.D{{Key: "lockOwner", Value: "instance-1"}, {Key: "lockDuration", Value: int64(10000)}, {Key: "acq", Value: "a1"}}},
		{Key: "$currentDate", Value: bson.D{{Key: "lockTimestamp", Value: true}}},
		{Key: "$inc", Value: bson.D{{Key: "fencingToken", Value: int64(1)}}},
		{Key: "$pull", Value: bson.D{{Key: "pendingTransfers", Value: bson.D{{Key: "$in", Value: bson.A{"t1", "t2"}}}}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(u, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
