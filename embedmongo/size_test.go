package embedmongo

import (
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A write whose document would pass the 16 MiB limit is refused with BSONObjectTooLarge and
// leaves the collection as it was: inserts, updates that grow a document, and upserts.
func TestDocumentSizeLimit(t *testing.T) {
	for _, opts := range []Options{{}, {Dir: t.TempDir()}} {
		_, client := startEngine(t, opts)
		ctx := testCtx(t)
		coll := client.Database("size").Collection("docs")
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: "small"}}); err != nil {
			t.Fatal(err)
		}
		// Under the wire limit (16 MiB + 16 KiB per command) but over the document limit once
		// the update adds it to the existing field.
		half := strings.Repeat("x", 9<<20)

		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: half}, {Key: "b", Value: half}})
		wantTooLarge(t, "insert", err)

		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: half}}}}); err != nil {
			t.Fatalf("growing to 9 MiB: %v", err)
		}
		_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: half}}}})
		wantTooLarge(t, "update", err)

		_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: half}, {Key: "b", Value: half}}}}, options.UpdateOne().SetUpsert(true))
		wantTooLarge(t, "upsert", err)

		var doc bson.M
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if _, has := doc["b"]; has || len(doc["a"].(string)) != len(half) {
			t.Fatalf("refused update changed the document: fields %d", len(doc))
		}
		if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
			t.Fatalf("documents after refused writes: %d, %v; want 1", n, err)
		}
	}
}

func wantTooLarge(t *testing.T, what string, err error) {
	t.Helper()
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 10334 {
		t.Fatalf("%s over 16 MiB: %v; want write error 10334 (BSONObjectTooLarge)", what, err)
	}
}
