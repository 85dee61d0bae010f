package embedmongo

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// serverCode extracts the server error code of a command or write error (0 if none).
func serverCode(err error) int {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return int(ce.Code)
	}
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		return we.WriteErrors[0].Code
	}
	return 0
}

func TestCollation(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("c").Collection("words")
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "ping"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: "PING"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: "pong"}},
	}); err != nil {
		t.Fatal(err)
	}
	// An index on x must not hide collation-equal strings from the query.
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	caseless := &options.Collation{Locale: "en_US", Strength: 2}
	filter := bson.D{{Key: "x", Value: "Ping"}}

	n, err := coll.CountDocuments(ctx, filter, options.Count().SetCollation(caseless))
	if err != nil || n != 2 {
		t.Errorf("count with collation = %d, %v; want 2", n, err)
	}
	if n, _ := coll.CountDocuments(ctx, filter); n != 0 {
		t.Errorf("count without collation = %d, want 0", n)
	}
	var vals []string
	if err := coll.Distinct(ctx, "x", bson.D{}, options.Distinct().SetCollation(caseless)).Decode(&vals); err != nil || len(vals) != 2 {
		t.Errorf("distinct with collation = %v, %v; want 2 values (ping, pong)", vals, err)
	}
	res, err := coll.UpdateMany(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "seen", Value: true}}}}, options.UpdateMany().SetCollation(caseless))
	if err != nil || res.MatchedCount != 2 {
		t.Errorf("updateMany with collation: %+v, %v; want 2 matched", res, err)
	}
	del, err := coll.DeleteOne(ctx, bson.D{{Key: "x", Value: "PONG"}}, options.DeleteOne().SetCollation(caseless))
	if err != nil || del.DeletedCount != 1 {
		t.Errorf("deleteOne with collation: %+v, %v; want 1 deleted", del, err)
	}
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "x", Value: 1}}).SetCollation(&options.Collation{Locale: "en"}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID int `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil || len(docs) != 2 || docs[0].ID != 1 {
		t.Errorf("sort under en collation: %+v, %v; want ping (lower case first) before PING", docs, err)
	}
	err = coll.FindOne(ctx, filter, options.FindOne().SetCollation(&options.Collation{Locale: "no_such_locale"})).Err()
	if serverCode(err) != 2 {
		t.Errorf("bad locale: %v, want BadValue", err)
	}
}

func TestCollectionDefaultCollation(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	db := client.Database("c")
	if err := db.CreateCollection(ctx, "ci", options.CreateCollection().SetCollation(&options.Collation{Locale: "en", Strength: 1})); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("ci")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "x", Value: "Émile"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "x", Value: "emile"}}); err != nil || n != 1 {
		t.Errorf("collection default collation: count = %d, %v; want 1", n, err)
	}
	simple := &options.Collation{Locale: "simple"}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "x", Value: "emile"}}, options.Count().SetCollation(simple)); n != 0 {
		t.Errorf("explicit simple collation: count = %d, want 0", n)
	}
}

func TestViews(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	db := client.Database("v")
	src := db.Collection("src")
	if _, err := src.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}},
		bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 2}},
		bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: 3}},
	}); err != nil {
		t.Fatal(err)
	}
	gt1 := mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$gt", Value: 1}}}}}}}
	if err := db.CreateView(ctx, "big", "src", gt1); err != nil {
		t.Fatal(err)
	}
	// A view on the view.
	if err := db.CreateView(ctx, "bigger", "big", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "x", Value: 3}}}}}); err != nil {
		t.Fatal(err)
	}
	view := db.Collection("big")
	if n, err := view.EstimatedDocumentCount(ctx); err != nil || n != 2 {
		t.Errorf("count on view = %d, %v; want 2", n, err)
	}
	if n, err := view.CountDocuments(ctx, bson.D{{Key: "x", Value: 2}}); err != nil || n != 1 {
		t.Errorf("countDocuments on view = %d, %v; want 1", n, err)
	}
	if n, err := db.Collection("bigger").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("count on view of view = %d, %v; want 1", n, err)
	}
	var got bson.D
	if err := view.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "x", Value: -1}})).Decode(&got); err != nil || got[0].Value != int32(3) {
		t.Errorf("find on view sorted desc: %v, %v; want _id 3", got, err)
	}
	if _, err := view.InsertOne(ctx, bson.D{{Key: "x", Value: 9}}); serverCode(err) != 166 {
		t.Errorf("insert into view: %v, want CommandNotSupportedOnView (166)", err)
	}
	if _, err := view.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}); serverCode(err) != 166 {
		t.Errorf("update of view: %v, want 166", err)
	}
	if _, err := view.DeleteMany(ctx, bson.D{}); serverCode(err) != 166 {
		t.Errorf("delete from view: %v, want 166", err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "big"}})
	if err != nil || len(specs) != 1 || specs[0].Type != "view" || !specs[0].ReadOnly {
		t.Errorf("listCollections for view: %+v, %v; want one read-only view", specs, err)
	}
	if err := view.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.Collection("big").EstimatedDocumentCount(ctx); n != 0 {
		t.Errorf("dropped view still counts %d", n)
	}
	if n, _ := src.EstimatedDocumentCount(ctx); n != 3 {
		t.Errorf("dropping a view changed its source: %d docs, want 3", n)
	}
}

func TestValidator(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	db := client.Database("val")
	stringX := bson.D{{Key: "x", Value: bson.D{{Key: "$type", Value: "string"}}}}
	if err := db.CreateCollection(ctx, "c", options.CreateCollection().SetValidator(stringX)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "ok"}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 5}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 121 {
		t.Fatalf("invalid insert: %v, want write error 121", err)
	}
	info, _ := bson.Raw(we.WriteErrors[0].Details).LookupErr("failingDocumentId")
	if id, ok := info.Int32OK(); !ok || id != 2 {
		t.Errorf("errInfo.failingDocumentId = %v, want 2 (details %v)", info, we.WriteErrors[0].Details)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: 5}}, options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
		t.Errorf("bypassDocumentValidation insert: %v", err)
	}
	setInt := bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, setInt); serverCode(err) != 121 {
		t.Errorf("invalid update: %v, want 121", err)
	}
	err = coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, setInt).Err()
	if serverCode(err) != 121 {
		t.Errorf("invalid findOneAndUpdate: %v, want 121", err)
	}
	// moderate: documents already invalid may be updated; valid ones must stay valid.
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "validationLevel", Value: "moderate"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, setInt); err != nil {
		t.Errorf("moderate: update of an invalid document: %v", err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, setInt); serverCode(err) != 121 {
		t.Errorf("moderate: update making a valid document invalid: %v, want 121", err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "validationAction", Value: "warn"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "x", Value: 7}}); err != nil {
		t.Errorf("validationAction warn: insert failed: %v", err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "c"}, {Key: "validationLevel", Value: "bogus"}}).Err(); serverCode(err) != 2 {
		t.Errorf("bad validationLevel: %v, want BadValue", err)
	}
}

func TestValidatorSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	srv, client := startEngine(t, Options{Dir: dir})
	ctx := testCtx(t)
	db := client.Database("val")
	if err := db.CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	validator := bson.D{{Key: "validator", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$gte", Value: 0}}}}}}
	if err := db.RunCommand(ctx, append(bson.D{{Key: "collMod", Value: "c"}}, validator...)).Err(); err != nil {
		t.Fatal(err)
	}
	_ = client.Disconnect(ctx)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	_, client = startEngine(t, Options{Dir: dir})
	_, err := client.Database("val").Collection("c").InsertOne(ctx, bson.D{{Key: "n", Value: -1}})
	if serverCode(err) != 121 {
		t.Errorf("after restart: invalid insert gave %v, want 121", err)
	}
}

func TestStrictWriteStatements(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	db := client.Database("s")
	cases := []struct {
		cmd  bson.D
		want string
	}{
		{bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}},
		}}}, "BSON field 'update.updates.sort' is an unknown field."},
		{bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 1}, {Key: "bogus", Value: 1}},
		}}}, "BSON field 'delete.deletes.bogus' is an unknown field."},
	}
	for _, tc := range cases {
		err := db.RunCommand(ctx, tc.cmd).Err()
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 40415 || ce.Message != tc.want {
			t.Errorf("%v: got %v, want 40415 %q", tc.cmd, err, tc.want)
		}
	}
}

func TestDollarPrefixedID(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	coll := client.Database("d").Collection("c")
	for _, id := range []any{
		bson.D{{Key: "$a", Value: 1}},
		bson.D{{Key: "a", Value: bson.D{{Key: "$b", Value: 1}}}},
	} {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); serverCode(err) != 52 {
			t.Errorf("insert _id %v: %v, want DollarPrefixedFieldName (52)", id, err)
		}
	}
	upsert := options.Replace().SetUpsert(true)
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "_id", Value: bson.D{{Key: "$c", Value: 1}}}}, upsert); serverCode(err) != 52 {
		t.Errorf("upsert with $-prefixed _id field: %v, want 52", err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "$top", Value: 1}}); err != nil {
		t.Errorf("$-prefixed top-level field (allowed since 5.0): %v", err)
	}
}

func TestListLocalSessions(t *testing.T) {
	_, client := startEngine(t, Options{})
	ctx := testCtx(t)
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	admin := client.Database("admin")
	if err := admin.RunCommand(mongo.NewSessionContext(ctx, sess), bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	list := func() []bson.D {
		cur, err := admin.Aggregate(ctx, mongo.Pipeline{{{Key: "$listLocalSessions", Value: bson.D{}}}})
		if err != nil {
			t.Fatal(err)
		}
		var out []bson.D
		if err := cur.All(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	_, want, _ := sess.ID().Lookup("id").BinaryOK()
	found := func() bool {
		for _, d := range list() {
			id := d[0].Value.(bson.D)
			if b, ok := id[0].Value.(bson.Binary); ok && string(b.Data) == string(want) {
				return len(id) == 2 && len(d) == 2 && d[1].Key == "lastUse"
			}
		}
		return false
	}
	if !found() {
		t.Fatal("$listLocalSessions does not list a session that ran a command")
	}
	defer sess.EndSession(ctx) // after the checks: the driver would reuse its id for them
	if err := admin.RunCommand(ctx, bson.D{{Key: "endSessions", Value: bson.A{sess.ID()}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if found() {
		t.Error("an ended session is still listed")
	}
}
