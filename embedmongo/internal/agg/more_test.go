package agg

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestUnwind(t *testing.T) {
	in := `[{"_id":1,"a":[1,2]},{"_id":2,"a":[]},{"_id":3,"a":null},{"_id":4},{"_id":5,"a":"x"},{"_id":6,"s":{"b":[7]}}]`
	runCases(t, []pipeCase{
		{name: "string form", input: in, pipe: `[{"$unwind":"$a"}]`,
			want: `[{"_id":1,"a":1},{"_id":1,"a":2},{"_id":5,"a":"x"}]`},
		{name: "preserve and index", input: in,
			pipe: `[{"$unwind":{"path":"$a","includeArrayIndex":"i","preserveNullAndEmptyArrays":true}}]`,
			want: `[{"_id":1,"a":1,"i":{"$numberLong":"0"}},{"_id":1,"a":2,"i":{"$numberLong":"1"}},{"_id":2,"i":null},
				{"_id":3,"a":null,"i":null},{"_id":4,"i":null},{"_id":5,"a":"x","i":null},{"_id":6,"s":{"b":[7]},"i":null}]`},
		{name: "nested path", input: in, pipe: `[{"$unwind":"$s.b"}]`, want: `[{"_id":6,"s":{"b":7}}]`},
		{name: "no dollar", input: in, pipe: `[{"$unwind":"a"}]`, code: 28818},
		{name: "bad type", input: in, pipe: `[{"$unwind":1}]`, code: 15981},
		{name: "no path", input: in, pipe: `[{"$unwind":{}}]`, code: 28812},
		{name: "unknown option", input: in, pipe: `[{"$unwind":{"path":"$a","x":1}}]`, code: 28811},
		{name: "preserve not bool", input: in, pipe: `[{"$unwind":{"path":"$a","preserveNullAndEmptyArrays":1}}]`, code: 28809},
		{name: "index with dollar", input: in, pipe: `[{"$unwind":{"path":"$a","includeArrayIndex":"$i"}}]`, code: 28822},
	}, nil)
}

func lookupEnv(t *testing.T) func() Options {
	return func() Options {
		return Options{DB: "db", Vars: expr.Vars{"NOW": bson.DateTime(0)}, Env: newFakeEnv(t, map[string]string{
			"db.items": `[{"_id":"i1","sku":"a","qty":1},{"_id":"i2","sku":"b","qty":5},{"_id":"i3","sku":["a","c"],"qty":9},{"_id":"i4","qty":0}]`,
			"db.other": `[{"_id":100},{"_id":101}]`,
			"x.y":      `[{"_id":"xy"}]`,
		})}
	}
}

func TestLookup(t *testing.T) {
	in := `[{"_id":1,"s":"a"},{"_id":2,"s":["b","z"]},{"_id":3}]`
	runCases(t, []pipeCase{
		{name: "equality with array semantics", input: in,
			pipe: `[{"$lookup":{"from":"items","localField":"s","foreignField":"sku","as":"m"}},{"$project":{"m.qty":0}}]`,
			want: `[{"_id":1,"s":"a","m":[{"_id":"i1","sku":"a"},{"_id":"i3","sku":["a","c"]}]},
				{"_id":2,"s":["b","z"],"m":[{"_id":"i2","sku":"b"}]},{"_id":3,"m":[{"_id":"i4"}]}]`},
		{name: "let and pipeline", input: `[{"_id":1,"min":4}]`,
			pipe: `[{"$lookup":{"from":"items","let":{"m":"$min"},"pipeline":[{"$match":{"$expr":{"$gte":["$qty","$$m"]}}},{"$project":{"_id":1}}],"as":"big"}}]`,
			want: `[{"_id":1,"min":4,"big":[{"_id":"i2"},{"_id":"i3"}]}]`},
		{name: "combined form", input: `[{"_id":1,"s":"a"}]`,
			pipe: `[{"$lookup":{"from":"items","localField":"s","foreignField":"sku","pipeline":[{"$match":{"qty":{"$gt":1}}},{"$project":{"_id":1}}],"as":"m"}}]`,
			want: `[{"_id":1,"s":"a","m":[{"_id":"i3"}]}]`},
		{name: "missing collection gives empty", input: `[{"_id":1}]`,
			pipe: `[{"$lookup":{"from":"nope","localField":"a","foreignField":"b","as":"m"}}]`, want: `[{"_id":1,"m":[]}]`},
		{name: "other database and dotted as", input: `[{"_id":1}]`,
			pipe: `[{"$lookup":{"from":{"db":"x","coll":"y"},"pipeline":[],"as":"a.b"}}]`, want: `[{"_id":1,"a":{"b":[{"_id":"xy"}]}}]`},
		{name: "documents sub-pipeline without from", input: `[{"_id":1}]`,
			pipe: `[{"$lookup":{"pipeline":[{"$documents":[{"v":1}]}],"as":"d"}}]`, want: `[{"_id":1,"d":[{"v":1}]}]`},
		{name: "missing as", input: in, pipe: `[{"$lookup":{"from":"items","localField":"s","foreignField":"sku"}}]`, code: 9},
		{name: "only localField", input: in, pipe: `[{"$lookup":{"from":"items","localField":"s","as":"m"}}]`, code: 9},
		{name: "unknown argument", input: in, pipe: `[{"$lookup":{"from":"items","pipeline":[],"as":"m","x":1}}]`, code: 9},
		{name: "out in sub-pipeline", input: in, pipe: `[{"$lookup":{"from":"items","pipeline":[{"$out":"z"}],"as":"m"}}]`, code: 51047},
	}, lookupEnv(t))
}

func TestUnionFacetDocuments(t *testing.T) {
	in := `[{"_id":1,"k":"a"},{"_id":2,"k":"b"},{"_id":3,"k":"a"}]`
	runCases(t, []pipeCase{
		{name: "unionWith string", input: `[{"_id":1}]`, pipe: `[{"$unionWith":"other"}]`, want: `[{"_id":1},{"_id":100},{"_id":101}]`},
		{name: "unionWith pipeline", input: `[{"_id":1}]`, pipe: `[{"$unionWith":{"coll":"other","pipeline":[{"$match":{"_id":101}}]}}]`,
			want: `[{"_id":1},{"_id":101}]`},
		{name: "unionWith documents", input: `[]`, pipe: `[{"$unionWith":{"pipeline":[{"$documents":[{"a":1}]}]}}]`, want: `[{"a":1}]`},
		{name: "unionWith bad field", input: `[]`, pipe: `[{"$unionWith":{"coll":"other","x":1}}]`, code: 40415},
		{name: "facet", input: in,
			pipe: `[{"$facet":{"n":[{"$count":"c"}],"ks":[{"$group":{"_id":"$k"}},{"$sort":{"_id":1}}],"none":[{"$match":{"k":"z"}}]}}]`,
			want: `[{"n":[{"c":3}],"ks":[{"_id":"a"},{"_id":"b"}],"none":[]}]`},
		{name: "facet on empty input", input: `[]`, pipe: `[{"$facet":{"n":[{"$count":"c"}]}}]`, want: `[{"n":[]}]`},
		{name: "facet not arrays", input: in, pipe: `[{"$facet":{"n":1}}]`, code: 40170},
		{name: "facet empty", input: in, pipe: `[{"$facet":{}}]`, code: 40169},
		{name: "facet with out", input: in, pipe: `[{"$facet":{"n":[{"$out":"x"}]}}]`, code: 40600},
		{name: "nested facet", input: in, pipe: `[{"$facet":{"n":[{"$facet":{"m":[]}}]}}]`, code: 40600},
		{name: "documents", input: `[]`, pipe: `[{"$documents":[{"a":1},{"a":{"$add":[1,1]}}]},{"$match":{"a":2}}]`, want: `[{"a":2}]`},
		{name: "documents from variable", input: `[]`, pipe: `[{"$documents":{"$literal":[{"x":1}]}}]`, want: `[{"x":1}]`},
		{name: "documents non-array", input: `[]`, pipe: `[{"$documents":1}]`, code: 5858203},
		{name: "listLocalSessions is empty", input: `[]`, pipe: `[{"$listLocalSessions":{}}]`, want: `[]`},
		{name: "sortByCount", input: in, pipe: `[{"$sortByCount":"$k"}]`, want: `[{"_id":"a","count":2},{"_id":"b","count":1}]`},
		{name: "sortByCount bad", input: in, pipe: `[{"$sortByCount":"k"}]`, code: 40148},
		{name: "sample all", input: in, pipe: `[{"$sample":{"size":10}},{"$sort":{"_id":1}}]`, want: in},
		{name: "sample size", input: in, pipe: `[{"$sample":{"size":2}},{"$count":"n"}]`, want: `[{"n":2}]`},
		{name: "sample negative", input: in, pipe: `[{"$sample":{"size":-1}}]`, code: 28747},
	}, lookupEnv(t))
}

func TestBucket(t *testing.T) {
	in := `[{"p":1},{"p":5},{"p":12},{"p":"str"},{"p":10}]`
	runCases(t, []pipeCase{
		{name: "buckets with default", input: in,
			pipe: `[{"$bucket":{"groupBy":"$p","boundaries":[0,10,20],"default":"other"}}]`,
			want: `[{"_id":0,"count":2},{"_id":10,"count":2},{"_id":"other","count":1}]`},
		{name: "output accumulators", input: `[{"p":1},{"p":3}]`,
			pipe: `[{"$bucket":{"groupBy":"$p","boundaries":[0,5],"output":{"ps":{"$push":"$p"}}}}]`,
			want: `[{"_id":0,"ps":[1,3]}]`},
		{name: "no matching bucket", input: in, pipe: `[{"$bucket":{"groupBy":"$p","boundaries":[0,10]}}]`, code: 40066},
		{name: "unsorted boundaries", input: in, pipe: `[{"$bucket":{"groupBy":"$p","boundaries":[10,0]}}]`, code: 40194},
		{name: "default inside range", input: in, pipe: `[{"$bucket":{"groupBy":"$p","boundaries":[0,10],"default":5}}]`, code: 40199},
		{name: "missing groupBy", input: in, pipe: `[{"$bucket":{"boundaries":[0,10]}}]`, code: 40198},
	}, nil)
}

// writeCase runs a pipeline ending in $out/$merge and checks the target collection.
type writeCase struct {
	name   string
	target string // existing target documents (db.t)
	input  string
	pipe   string
	after  string // target collection after the run
	ns     string // target namespace, default db.t
	code   int32
}

func TestOutAndMerge(t *testing.T) {
	cases := []writeCase{
		{name: "out replaces", target: `[{"_id":9}]`, input: `[{"_id":1,"a":1},{"_id":2}]`,
			pipe: `[{"$match":{"a":1}},{"$out":"t"}]`, after: `[{"_id":1,"a":1}]`},
		{name: "out other db", input: `[{"_id":1}]`, pipe: `[{"$out":{"db":"o","coll":"c"}}]`, ns: "o.c", after: `[{"_id":1}]`},
		{name: "out bad spec", input: `[]`, pipe: `[{"$out":1}]`, code: 16990},
		{name: "out duplicate ids", input: `[{"_id":1},{"_id":1}]`, pipe: `[{"$out":"t"}]`, code: 11000},
		{name: "merge defaults: merge and insert", target: `[{"_id":1,"a":1,"b":1}]`, input: `[{"_id":1,"b":2,"c":3},{"_id":2,"x":1}]`,
			pipe: `[{"$merge":"t"}]`, after: `[{"_id":1,"a":1,"b":2,"c":3},{"_id":2,"x":1}]`},
		{name: "merge replace", target: `[{"_id":1,"a":1}]`, input: `[{"_id":1,"b":2}]`,
			pipe: `[{"$merge":{"into":"t","whenMatched":"replace"}}]`, after: `[{"_id":1,"b":2}]`},
		{name: "merge keepExisting discard", target: `[{"_id":1,"a":1}]`, input: `[{"_id":1,"b":2},{"_id":2}]`,
			pipe: `[{"$merge":{"into":"t","whenMatched":"keepExisting","whenNotMatched":"discard"}}]`, after: `[{"_id":1,"a":1}]`},
		{name: "merge fail on match", target: `[{"_id":1}]`, input: `[{"_id":1}]`,
			pipe: `[{"$merge":{"into":"t","whenMatched":"fail"}}]`, code: mongoerr.DuplicateKey},
		{name: "merge fail on no match", input: `[{"_id":1}]`,
			pipe: `[{"$merge":{"into":"t","whenNotMatched":"fail"}}]`, code: 13113},
		{name: "merge pipeline with new", target: `[{"_id":1,"n":1}]`, input: `[{"_id":1,"n":5}]`,
			pipe: `[{"$merge":{"into":"t","whenMatched":[{"$set":{"n":{"$add":["$n","$$new.n"]}}}]}}]`, after: `[{"_id":1,"n":6}]`},
		{name: "merge pipeline with let", target: `[{"_id":1,"n":1}]`, input: `[{"_id":1,"n":5}]`,
			pipe: `[{"$merge":{"into":"t","let":{"inc":"$n"},"whenMatched":[{"$set":{"n":{"$add":["$n","$$inc"]}}}]}}]`, after: `[{"_id":1,"n":6}]`},
		{name: "merge on other field keeps target _id", target: `[{"_id":1,"k":"a","v":0}]`, input: `[{"k":"a","v":1}]`,
			pipe: `[{"$merge":{"into":"t","on":"k","whenMatched":"replace"}}]`, after: `[{"_id":1,"k":"a","v":1}]`},
		{name: "merge on field missing", input: `[{"v":1}]`, pipe: `[{"$merge":{"into":"t","on":"k"}}]`, code: 51132},
		{name: "merge changes _id", target: `[{"_id":1,"k":"a"}]`, input: `[{"_id":2,"k":"a"}]`,
			pipe: `[{"$merge":{"into":"t","on":"k","whenMatched":"replace"}}]`, code: mongoerr.ImmutableField},
		{name: "merge missing into", input: `[]`, pipe: `[{"$merge":{"on":"_id"}}]`, code: mongoerr.Location40414},
		{name: "merge bad whenMatched", input: `[]`, pipe: `[{"$merge":{"into":"t","whenMatched":"x"}}]`, code: mongoerr.BadValue},
		{name: "merge let without pipeline", input: `[]`, pipe: `[{"$merge":{"into":"t","let":{"a":1}}}]`, code: 51199},
		{name: "merge group in pipeline", input: `[]`, pipe: `[{"$merge":{"into":"t","whenMatched":[{"$group":{"_id":1}}]}}]`,
			code: mongoerr.InvalidOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := tc.ns
			if ns == "" {
				ns = "db.t"
			}
			env := newFakeEnv(t, map[string]string{"db.t": tc.target})
			out, err := Run(jsonDocs(t, tc.pipe), jsonDocs(t, tc.input), Options{DB: "db", Env: env})
			if tc.code != 0 {
				if !mongoerr.Is(err, tc.code) {
					t.Fatalf("want code %d, got %v", tc.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 0 {
				t.Fatalf("write stage returned documents: %v", out)
			}
			if g, w := canon(t, env.colls[ns]), canon(t, jsonDocs(t, tc.after)); g != w {
				t.Fatalf("\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestWriteStagesGenerateIDs(t *testing.T) {
	env := newFakeEnv(t, nil)
	if _, err := Run(jsonDocs(t, `[{"$out":"t"}]`), jsonDocs(t, `[{"a":1}]`), Options{DB: "db", Env: env}); err != nil {
		t.Fatal(err)
	}
	got := env.colls["db.t"]
	if len(got) != 1 || got[0][0].Key != "_id" {
		t.Fatalf("$out did not add _id first: %v", got)
	}
	if _, ok := got[0][0].Value.(bson.ObjectID); !ok {
		t.Fatalf("generated _id is %T", got[0][0].Value)
	}
	if _, err := Run(jsonDocs(t, `[{"$merge":"m"}]`), jsonDocs(t, `[{"a":1}]`), Options{DB: "db", Env: env}); err != nil {
		t.Fatal(err)
	}
	if m := env.colls["db.m"]; len(m) != 1 || !bsonkit.Equal(m[0][1].Value, int32(1)) {
		t.Fatalf("$merge insert: %v", m)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		pipe string
		code int32
	}{
		{`[{"$match":{"a":1}},{"$out":"x"}]`, 0},
		{`[{"$nope":1}]`, 40324},
		{`[{"$out":"x"},{"$limit":1}]`, 40601},
		{`[{"$project":{"a":1,"b":0}}]`, 31254},
	} {
		err := Validate(jsonDocs(t, tc.pipe))
		if (tc.code == 0 && err != nil) || (tc.code != 0 && !mongoerr.Is(err, tc.code)) {
			t.Errorf("Validate(%s) = %v, want code %d", tc.pipe, err, tc.code)
		}
	}
	if !IsWriteStage(jsonDocs(t, `[{"$match":{}},{"$merge":"x"}]`)) || IsWriteStage(jsonDocs(t, `[{"$match":{}}]`)) {
		t.Error("IsWriteStage")
	}
}

func TestNAccumulators(t *testing.T) {
	in := `[{"k":"a","v":3},{"k":"b","v":1},{"k":"c"},{"k":"d","v":2}]`
	runCases(t, []pipeCase{
		{name: "firstN lastN", input: in,
			pipe: `[{"$group":{"_id":null,"f":{"$firstN":{"input":"$v","n":3}},"l":{"$lastN":{"input":"$k","n":2}}}}]`,
			want: `[{"_id":null,"f":[3,1,null],"l":["c","d"]}]`},
		{name: "minN maxN skip nulls", input: in,
			pipe: `[{"$group":{"_id":null,"mn":{"$minN":{"input":"$v","n":2}},"mx":{"$maxN":{"input":"$v","n":5}}}}]`,
			want: `[{"_id":null,"mn":[1,2],"mx":[3,2,1]}]`},
		{name: "top bottom", input: in,
			pipe: `[{"$group":{"_id":null,"t":{"$top":{"sortBy":{"v":-1},"output":"$k"}},"b":{"$bottomN":{"n":2,"sortBy":{"v":-1},"output":"$k"}},"tn":{"$topN":{"n":2,"sortBy":{"v":1},"output":["$k","$v"]}}}}]`,
			want: `[{"_id":null,"t":"a","b":["b","c"],"tn":[["c",null],["b",1]]}]`},
		{name: "n depends on group key", input: in,
			pipe: `[{"$group":{"_id":2,"f":{"$firstN":{"input":"$k","n":"$_id"}}}}]`, want: `[{"_id":2,"f":["a","b"]}]`},
		{name: "n zero", input: in, pipe: `[{"$group":{"_id":null,"f":{"$firstN":{"input":"$k","n":0}}}}]`, code: 5787908},
		{name: "missing n", input: in, pipe: `[{"$group":{"_id":null,"f":{"$firstN":{"input":"$k"}}}}]`, code: 5787906},
	}, nil)
}
