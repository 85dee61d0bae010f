package embedmongo

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// An update command's statements are applied in runs (updateRun), several to a collection
// write. Seen from outside it must be exactly statement by statement: an ordered command stops
// at its first failure with everything before it applied, an unordered one applies everything
// but its failures, wherever they fall in or between runs (a failure while applying, at 70,
// and one while compiling, at 100; runs are maxRunLength long).
func TestUpdateRunsKeepStatementSemantics(t *testing.T) {
	const stmts = 150
	for _, ordered := range []bool{true, false} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) {
			_, client := startEngine(t, Options{Dir: t.TempDir()})
			ctx := testCtx(t)
			db := client.Database("runs")
			coll := db.Collection("docs")
			if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "docs"}, {Key: "indexes", Value: bson.A{
				bson.D{{Key: "key", Value: bson.D{{Key: "uniq", Value: 1}}}, {Key: "name", Value: "uniq_1"}, {Key: "unique", Value: true}},
			}}}).Err(); err != nil {
				t.Fatal(err)
			}
			var docs []any
			for i := range stmts {
				docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "n", Value: 0}, {Key: "uniq", Value: i}})
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			updates := bson.A{}
			for i := range stmts {
				u := bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}
				switch i {
				case 70: // takes document 0's unique value: DuplicateKey while applying
					u = bson.D{{Key: "$set", Value: bson.D{{Key: "uniq", Value: 0}}}}
				case 100: // no such operator: refused while compiling
					u = bson.D{{Key: "$nosuch", Value: bson.D{{Key: "n", Value: 1}}}}
				}
				updates = append(updates, bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: i}}}, {Key: "u", Value: u}})
			}
			var reply struct {
				N           int32 `bson:"n"`
				NModified   int32 `bson:"nModified"`
				WriteErrors []struct {
					Index int32 `bson:"index"`
					Code  int32 `bson:"code"`
				} `bson:"writeErrors"`
			}
			// The driver reports the write errors as an error and still hands over the reply.
			raw, _ := db.RunCommand(ctx, bson.D{{Key: "update", Value: "docs"}, {Key: "updates", Value: updates},
				{Key: "ordered", Value: ordered}}).Raw()
			if err := bson.Unmarshal(raw, &reply); err != nil {
				t.Fatalf("reply %v: %v", raw, err)
			}
			wantErrs := []int32{70}
			applied := func(i int) bool { return i < 70 }
			if !ordered {
				wantErrs = []int32{70, 100}
				applied = func(i int) bool { return i != 70 && i != 100 }
			}
			var gotErrs []int32
			for _, we := range reply.WriteErrors {
				gotErrs = append(gotErrs, we.Index)
			}
			if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) || reply.WriteErrors[0].Code != 11000 {
				t.Fatalf("write errors at %v (first code %d), want %v (11000 first)", gotErrs, reply.WriteErrors[0].Code, wantErrs)
			}
			want := 0
			for i := range stmts {
				if applied(i) {
					want++
				}
			}
			if int(reply.N) != want || int(reply.NModified) != want {
				t.Fatalf("n %d, nModified %d; want %d", reply.N, reply.NModified, want)
			}
			for i := range stmts {
				var d struct {
					N    int `bson:"n"`
					Uniq int `bson:"uniq"`
				}
				if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: i}}).Decode(&d); err != nil {
					t.Fatal(err)
				}
				wantN := 0
				if applied(i) {
					wantN = 1
				}
				if d.N != wantN || d.Uniq != i {
					t.Fatalf("document %d: n %d uniq %d; want n %d uniq %d", i, d.N, d.Uniq, wantN, i)
				}
			}
		})
	}
}
