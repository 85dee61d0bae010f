package agg

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestPipelineWithCollation(t *testing.T) {
	caseless, err := collation.Parse(bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: int32(2)}})
	if err != nil {
		t.Fatal(err)
	}
	input := `[{"_id": 1, "x": "ping"}, {"_id": 2, "x": "PING"}, {"_id": 3, "x": "pong"}, {"_id": 4, "x": "b"}, {"_id": 5, "x": "A"}]`
	cases := []struct{ pipe, want string }{
		{`[{"$match": {"x": "Ping"}}, {"$project": {"_id": 1}}]`, `[{"_id": 1}, {"_id": 2}]`},
		{`[{"$match": {"x": {"$lt": "c"}}}, {"$sort": {"x": 1}}, {"$project": {"_id": 1}}]`, `[{"_id": 5}, {"_id": 4}]`},
		// Collation-equal group keys form one group, represented by the first value seen.
		{`[{"$group": {"_id": "$x", "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]`,
			`[{"_id": "A", "n": 1}, {"_id": "b", "n": 1}, {"_id": "ping", "n": 2}, {"_id": "pong", "n": 1}]`},
		{`[{"$lookup": {"from": "other", "localField": "x", "foreignField": "k", "as": "j"}}, {"$match": {"_id": 2}}, {"$project": {"n": {"$size": "$j"}}}]`,
			`[{"_id": 2, "n": 1}]`},
	}
	env := newFakeEnv(t, map[string]string{"db.other": `[{"k": "Ping"}]`})
	for _, tc := range cases {
		var wrap bson.D
		if err := bson.UnmarshalExtJSON([]byte(`{"p":`+tc.pipe+`}`), false, &wrap); err != nil {
			t.Fatal(err)
		}
		var pipe []bson.D
		for _, s := range wrap[0].Value.(bson.A) {
			pipe = append(pipe, s.(bson.D))
		}
		got, err := Run(pipe, jsonDocs(t, input), Options{DB: "db", Env: env, Collation: caseless})
		if err != nil {
			t.Fatalf("%s: %v", tc.pipe, err)
		}
		if canon(t, got) != canon(t, jsonDocs(t, tc.want)) {
			t.Errorf("%s\n got %s\nwant %s", tc.pipe, canon(t, got), canon(t, jsonDocs(t, tc.want)))
		}
	}
}

type sessionEnv struct{ *fakeEnv }

func (sessionEnv) LocalSessions() []bson.D {
	return []bson.D{{{Key: "_id", Value: bson.D{{Key: "id", Value: "s1"}}}}}
}

func TestListLocalSessions(t *testing.T) {
	pipe := []bson.D{{{Key: "$listLocalSessions", Value: bson.D{}}}}
	got, err := Run(pipe, nil, Options{Env: sessionEnv{newFakeEnv(t, nil)}})
	if err != nil || len(got) != 1 {
		t.Fatalf("with a session cache: %v, %v; want its one session", got, err)
	}
	got, err = Run(pipe, nil, Options{Env: newFakeEnv(t, nil)})
	if err != nil || len(got) != 0 {
		t.Fatalf("without a session cache: %v, %v; want none", got, err)
	}
	_, err = Run([]bson.D{{{Key: "$listLocalSessions", Value: bson.D{{Key: "bad", Value: 1}}}}}, nil, Options{})
	if mongoerr.As(err) == nil || mongoerr.As(err).Code != 40415 {
		t.Fatalf("unknown option: %v, want 40415", err)
	}
}

func TestMergeFailReportsKey(t *testing.T) {
	env := newFakeEnv(t, map[string]string{"db.t": `[{"_id": 2, "x": 1}]`})
	pipe := []bson.D{{{Key: "$merge", Value: bson.D{{Key: "into", Value: "t"}, {Key: "whenMatched", Value: "fail"}}}}}
	_, err := Run(pipe, jsonDocs(t, `[{"_id": 2, "x": 2}]`), Options{DB: "db", Env: env})
	e := mongoerr.As(err)
	want := bson.D{
		{Key: "keyPattern", Value: bson.D{{Key: "_id", Value: int32(1)}}},
		{Key: "keyValue", Value: bson.D{{Key: "_id", Value: int32(2)}}},
	}
	if e == nil || e.Code != mongoerr.DuplicateKey || canon(t, []bson.D{e.Extra}) != canon(t, []bson.D{want}) {
		t.Fatalf("$merge whenMatched fail: %v (extra %v), want 11000 with %v", err, e, want)
	}
}
