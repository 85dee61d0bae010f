package embedmongo

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestUpdatesKeepIndexesRight: updates skip the index work for fields they do not touch; every
// kind of update that does touch an indexed field (operators, a pipeline, $rename, a
// replacement) still moves the document in the index, and a unique index still refuses.
func TestUpdatesKeepIndexesRight(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("db").Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	idOf := func(a any) any {
		t.Helper()
		var d struct {
			ID any `bson:"_id"`
		}
		err := coll.FindOne(ctx, bson.D{{Key: "a", Value: a}}, options.FindOne().SetHint("a_1")).Decode(&d)
		if err == mongo.ErrNoDocuments {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	id1 := bson.D{{Key: "_id", Value: 1}}
	steps := []struct {
		name   string
		update any
		a      any // where document 1 is in the index afterwards
	}{
		{"untouched field", bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}, int32(1)},
		{"operator", bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 5}}}}, int32(5)},
		{"pipeline", mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "a", Value: 7}}}}}, int32(7)},
		{"pipeline on another field", mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "c", Value: 1}}}}}, int32(7)},
		{"rename", bson.D{{Key: "$rename", Value: bson.D{{Key: "b", Value: "a"}}}}, int32(1)},
	}
	for _, st := range steps {
		if _, err := coll.UpdateOne(ctx, id1, st.update); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := idOf(st.a); got != int32(1) {
			t.Errorf("%s: index finds %v at a=%v, want document 1", st.name, got, st.a)
		}
	}
	if _, err := coll.ReplaceOne(ctx, id1, bson.D{{Key: "a", Value: 9}}); err != nil {
		t.Fatal(err)
	}
	if idOf(int32(9)) != int32(1) || idOf(int32(1)) != nil {
		t.Error("replacement: the index did not follow")
	}
	_, err := coll.UpdateOne(ctx, id1, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 2}}}})
	if !mongo.IsDuplicateKeyError(err) {
		t.Errorf("update onto a taken unique key: got %v, want a duplicate key error", err)
	}
}
