package expr

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func BenchmarkLeaseFilter(b *testing.B) {
	filter := bson.D{{Key: "$lt", Value: bson.A{bson.D{{Key: "$add", Value: bson.A{"$lockTimestamp", "$lockDuration"}}}, "$$NOW"}}}
	doc := bson.D{{Key: "_id", Value: "acct"}, {Key: "lockTimestamp", Value: bson.DateTime(1_700_000_000_000)}, {Key: "lockDuration", Value: int64(30_000)}}
	vars := Vars{"NOW": bson.DateTime(1_700_000_100_000)}
	b.Run("compiled", func(b *testing.B) {
		x, err := Compile(filter)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if v, err := x.Eval(doc, vars); err != nil || v != true {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			if v, err := Eval(filter, doc, vars); err != nil || v != true {
				b.Fatal(v, err)
			}
		}
	})
}
