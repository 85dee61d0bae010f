package agg

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestPipelineStructure(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "empty pipeline", input: `[{"_id":1}]`, pipe: `[]`, want: `[{"_id":1}]`},
		{name: "two fields", pipe: `[{"$match":{},"$skip":1}]`, code: 40323},
		{name: "no field", pipe: `[{}]`, code: 40323},
		{name: "unknown stage", pipe: `[{"$foo":{}}]`, code: 40324},
		{name: "parse error before running", input: `[]`, pipe: `[{"$limit":1},{"$bar":1}]`, code: 40324},
		{name: "out not last", pipe: `[{"$out":"x"},{"$match":{}}]`, code: 40601},
		{name: "merge not last", pipe: `[{"$merge":"x"},{"$match":{}}]`, code: 40601},
		{name: "documents not first", pipe: `[{"$match":{}},{"$documents":[]}]`, code: 40602},
	}, nil)
}

func TestMatch(t *testing.T) {
	in := `[{"_id":1,"a":5},{"_id":2,"a":10},{"_id":3}]`
	runCases(t, []pipeCase{
		{name: "equality", input: in, pipe: `[{"$match":{"a":10}}]`, want: `[{"_id":2,"a":10}]`},
		{name: "range", input: in, pipe: `[{"$match":{"a":{"$gte":5}}}]`, want: `[{"_id":1,"a":5},{"_id":2,"a":10}]`},
		{name: "expr", input: in, pipe: `[{"$match":{"$expr":{"$gt":["$a",6]}}}]`, want: `[{"_id":2,"a":10}]`},
		{name: "null matches missing", input: in, pipe: `[{"$match":{"a":null}}]`, want: `[{"_id":3}]`},
		{name: "not an object", input: in, pipe: `[{"$match":1}]`, code: 15959},
	}, nil)
}

func TestProject(t *testing.T) {
	in := `[{"_id":1,"a":1,"b":{"c":2,"d":3},"e":[{"c":1,"d":2},5,[{"c":3}]]}]`
	runCases(t, []pipeCase{
		{name: "inclusion keeps _id and input order", input: in, pipe: `[{"$project":{"b":1,"a":true}}]`,
			want: `[{"_id":1,"a":1,"b":{"c":2,"d":3}}]`},
		{name: "inclusion without _id", input: in, pipe: `[{"$project":{"a":1,"_id":0}}]`, want: `[{"a":1}]`},
		{name: "nested dotted inclusion", input: in, pipe: `[{"$project":{"b.c":1}}]`, want: `[{"_id":1,"b":{"c":2}}]`},
		{name: "nested object inclusion", input: in, pipe: `[{"$project":{"b":{"d":1}}}]`, want: `[{"_id":1,"b":{"d":3}}]`},
		{name: "inclusion through arrays drops scalars", input: in, pipe: `[{"$project":{"_id":0,"e.c":1}}]`,
			want: `[{"e":[{"c":1},[{"c":3}]]}]`},
		{name: "exclusion", input: in, pipe: `[{"$project":{"b":0,"e":0}}]`, want: `[{"_id":1,"a":1}]`},
		{name: "exclusion through arrays keeps scalars", input: in, pipe: `[{"$project":{"_id":0,"a":0,"b":0,"e.c":0}}]`,
			want: `[{"e":[{"d":2},5,[{}]]}]`},
		{name: "only _id excluded", input: `[{"_id":1,"a":1}]`, pipe: `[{"$project":{"_id":0}}]`, want: `[{"a":1}]`},
		{name: "only _id included", input: `[{"_id":1,"a":1}]`, pipe: `[{"$project":{"_id":1}}]`, want: `[{"_id":1}]`},
		{name: "computed fields appended", input: in, pipe: `[{"$project":{"x":{"$add":["$a",1]},"a":1,"lit":"hi"}}]`,
			want: `[{"_id":1,"a":1,"x":2,"lit":"hi"}]`},
		{name: "computed missing omitted", input: in, pipe: `[{"$project":{"x":"$nope","a":1}}]`, want: `[{"_id":1,"a":1}]`},
		{name: "computed nested into existing", input: in, pipe: `[{"$project":{"b.c":1,"b.z":"$a"}}]`,
			want: `[{"_id":1,"b":{"c":2,"z":1}}]`},
		{name: "computed _id", input: in, pipe: `[{"$project":{"_id":"$a"}}]`, want: `[{"_id":1}]`},
		{name: "exclusion _id with inclusion of _id", input: `[{"_id":1,"a":1,"b":2}]`, pipe: `[{"$project":{"a":0,"_id":1}}]`,
			want: `[{"_id":1,"b":2}]`},
		{name: "empty", input: in, pipe: `[{"$project":{}}]`, code: 51272},
		{name: "exclusion in inclusion", input: in, pipe: `[{"$project":{"a":1,"b":0}}]`, code: 31254},
		{name: "inclusion in exclusion", input: in, pipe: `[{"$project":{"a":0,"b":1}}]`, code: 31253},
		{name: "expression in exclusion", input: in, pipe: `[{"$project":{"a":0,"b":"$a"}}]`, code: 31252},
		{name: "path collision below leaf", input: in, pipe: `[{"$project":{"b":1,"b.c":1}}]`, code: 31249},
		{name: "path collision at node", input: in, pipe: `[{"$project":{"b.c":1,"b":1}}]`, code: 31250},
		{name: "positional", input: in, pipe: `[{"$project":{"e.$":1}}]`, code: 31324},
		{name: "positional in the middle", input: in, pipe: `[{"$project":{"e.$.c":1}}]`, code: 31394},
		{name: "two operators", input: in, pipe: `[{"$project":{"x":{"$add":[1],"$abs":1}}}]`, code: 16410},
		{name: "empty path component", input: in, pipe: `[{"$project":{"a..b":1}}]`, code: 15998},
		{name: "dollar field", input: in, pipe: `[{"$project":{"$a":1}}]`, code: 16410},
		{name: "empty sub-projection", input: in, pipe: `[{"$project":{"b":{}}}]`, code: 51270},
		{name: "not an object", input: in, pipe: `[{"$project":1}]`, code: 15969},
	}, nil)
}

func TestAddFieldsSetUnset(t *testing.T) {
	in := `[{"_id":1,"a":1,"b":{"c":2},"arr":[{"x":1},2]}]`
	runCases(t, []pipeCase{
		{name: "replace in place and append", input: in, pipe: `[{"$addFields":{"a":"$b.c","n":{"$multiply":["$a",10]}}}]`,
			want: `[{"_id":1,"a":2,"b":{"c":2},"arr":[{"x":1},2],"n":10}]`},
		{name: "set alias and literals", input: in, pipe: `[{"$set":{"t":true,"z":0}},{"$project":{"t":1,"z":1,"_id":0}}]`,
			want: `[{"t":true,"z":0}]`},
		{name: "nested object merges", input: in, pipe: `[{"$set":{"b":{"d":5}}},{"$project":{"b":1}}]`,
			want: `[{"_id":1,"b":{"c":2,"d":5}}]`},
		{name: "dotted path creates documents", input: in, pipe: `[{"$set":{"p.q":1}},{"$project":{"p":1,"_id":0}}]`,
			want: `[{"p":{"q":1}}]`},
		{name: "dotted path into arrays", input: in, pipe: `[{"$set":{"arr.y":7}},{"$project":{"arr":1,"_id":0}}]`,
			want: `[{"arr":[{"x":1,"y":7},{"y":7}]}]`},
		{name: "REMOVE removes", input: in, pipe: `[{"$set":{"a":"$$REMOVE"}},{"$project":{"arr":0}}]`,
			want: `[{"_id":1,"b":{"c":2}}]`},
		{name: "empty object literal", input: `[{"_id":1}]`, pipe: `[{"$set":{"e":{}}}]`, want: `[{"_id":1,"e":{}}]`},
		{name: "unset string", input: in, pipe: `[{"$unset":"arr"}]`, want: `[{"_id":1,"a":1,"b":{"c":2}}]`},
		{name: "unset array nested", input: in, pipe: `[{"$unset":["arr","b.c"]}]`, want: `[{"_id":1,"a":1,"b":{}}]`},
		{name: "unset bad", input: in, pipe: `[{"$unset":[1]}]`, code: 31120},
		{name: "unset empty", input: in, pipe: `[{"$unset":[]}]`, code: 31119},
		{name: "addFields not object", input: in, pipe: `[{"$addFields":1}]`, code: 40272},
		{name: "addFields collision", input: in, pipe: `[{"$set":{"a":1,"a.b":2}}]`, code: 31249},
		{name: "addFields empty", input: in, pipe: `[{"$addFields":{}}]`, code: 40177},
		{name: "unset duplicate", input: in, pipe: `[{"$unset":["a","a"]}]`, code: 31250},
		{name: "unset dollar", input: in, pipe: `[{"$unset":"$a"}]`, code: 16410},
	}, nil)
}

func TestReplaceRoot(t *testing.T) {
	in := `[{"_id":1,"s":{"x":1}},{"_id":2,"s":3}]`
	runCases(t, []pipeCase{
		{name: "replaceRoot", input: in, pipe: `[{"$limit":1},{"$replaceRoot":{"newRoot":"$s"}}]`, want: `[{"x":1}]`},
		{name: "replaceWith expression", input: in, pipe: `[{"$limit":1},{"$replaceWith":{"$mergeObjects":["$s",{"y":2}]}}]`,
			want: `[{"x":1,"y":2}]`},
		{name: "non-document", input: in, pipe: `[{"$replaceRoot":{"newRoot":"$s"}}]`, code: 40228},
		{name: "missing", input: in, pipe: `[{"$replaceWith":"$nope"}]`, code: 40228},
		{name: "no newRoot", input: in, pipe: `[{"$replaceRoot":{}}]`, code: 40414},
		{name: "unknown field", input: in, pipe: `[{"$replaceRoot":{"newRoot":"$s","x":1}}]`, code: 40415},
	}, nil)
}

func TestSortSkipLimitCount(t *testing.T) {
	in := `[{"_id":1,"a":3},{"_id":2,"a":1},{"_id":3,"a":2},{"_id":4,"a":1}]`
	runCases(t, []pipeCase{
		{name: "sort asc stable", input: in, pipe: `[{"$sort":{"a":1}}]`,
			want: `[{"_id":2,"a":1},{"_id":4,"a":1},{"_id":3,"a":2},{"_id":1,"a":3}]`},
		{name: "sort two keys", input: in, pipe: `[{"$sort":{"a":-1,"_id":-1}}]`,
			want: `[{"_id":1,"a":3},{"_id":3,"a":2},{"_id":4,"a":1},{"_id":2,"a":1}]`},
		{name: "skip limit", input: in, pipe: `[{"$skip":1},{"$limit":2}]`, want: `[{"_id":2,"a":1},{"_id":3,"a":2}]`},
		{name: "skip past end", input: in, pipe: `[{"$skip":10}]`, want: `[]`},
		{name: "limit as double", input: in, pipe: `[{"$limit":1.0}]`, want: `[{"_id":1,"a":3}]`},
		{name: "count", input: in, pipe: `[{"$match":{"a":1}},{"$count":"n"}]`, want: `[{"n":2}]`},
		{name: "count nothing", input: in, pipe: `[{"$match":{"a":9}},{"$count":"n"}]`, want: `[]`},
		{name: "sort empty", input: in, pipe: `[{"$sort":{}}]`, code: 15976},
		{name: "sort bad order", input: in, pipe: `[{"$sort":{"a":2}}]`, code: 15975},
		{name: "limit zero", input: in, pipe: `[{"$limit":0}]`, code: 15958},
		{name: "limit negative", input: in, pipe: `[{"$limit":-1}]`, code: 5107201},
		{name: "skip fraction", input: in, pipe: `[{"$skip":1.5}]`, code: 5107200},
		{name: "count dollar", input: in, pipe: `[{"$count":"$n"}]`, code: 40158},
		{name: "count dot", input: in, pipe: `[{"$count":"a.b"}]`, code: 40160},
		{name: "count empty", input: in, pipe: `[{"$count":""}]`, code: 40157},
		{name: "count not string", input: in, pipe: `[{"$count":1}]`, code: 40156},
	}, nil)
}

func TestGroup(t *testing.T) {
	in := `[{"_id":1,"k":"a","v":1,"o":{"x":1}},{"_id":2,"k":"b","v":2.5},{"_id":3,"k":"a","v":3,"o":{"y":2}},
		{"_id":4,"v":"str"},{"_id":5,"k":null,"v":4}]`
	runCases(t, []pipeCase{
		{name: "sum avg min max by key", input: in,
			pipe: `[{"$group":{"_id":"$k","s":{"$sum":"$v"},"a":{"$avg":"$v"},"mn":{"$min":"$v"},"mx":{"$max":"$v"},"n":{"$sum":1}}}]`,
			want: `[{"_id":"a","s":4,"a":2.0,"mn":1,"mx":3,"n":2},{"_id":"b","s":2.5,"a":2.5,"mn":2.5,"mx":2.5,"n":1},
				{"_id":null,"s":4,"a":4.0,"mn":4,"mx":"str","n":2}]`},
		{name: "first last push addToSet count", input: in,
			pipe: `[{"$group":{"_id":null,"f":{"$first":"$k"},"l":{"$last":"$o"},"p":{"$push":"$k"},"u":{"$addToSet":"$k"},"c":{"$count":{}}}}]`,
			want: `[{"_id":null,"f":"a","l":null,"p":["a","b","a",null],"u":["a","b",null],"c":5}]`},
		{name: "mergeObjects", input: in, pipe: `[{"$group":{"_id":"$k","m":{"$mergeObjects":"$o"}}},{"$match":{"_id":"a"}}]`,
			want: `[{"_id":"a","m":{"x":1,"y":2}}]`},
		{name: "document key", input: `[{"a":1,"b":2},{"a":1,"b":2.0},{"a":1}]`,
			pipe: `[{"$group":{"_id":{"x":"$a","y":"$b"},"n":{"$sum":1}}}]`,
			want: `[{"_id":{"x":1,"y":2},"n":2},{"_id":{"x":1},"n":1}]`},
		{name: "single-field key document nulls missing", input: `[{"a":1},{}]`,
			pipe: `[{"$group":{"_id":{"x":"$a"}}}]`, want: `[{"_id":{"x":1}},{"_id":{"x":null}}]`},
		{name: "numeric types group together", input: `[{"a":1},{"a":{"$numberLong":"1"}},{"a":1.0}]`,
			pipe: `[{"$group":{"_id":"$a","n":{"$sum":1}}}]`, want: `[{"_id":1,"n":3}]`},
		{name: "sum overflow to long", input: `[{"v":2147483647},{"v":1}]`,
			pipe: `[{"$group":{"_id":null,"s":{"$sum":"$v"}}}]`, want: `[{"_id":null,"s":{"$numberLong":"2147483648"}}]`},
		{name: "avg of nothing is null", input: `[{"v":"x"}]`,
			pipe: `[{"$group":{"_id":null,"a":{"$avg":"$v"},"m":{"$min":"$w"}}}]`, want: `[{"_id":null,"a":null,"m":null}]`},
		{name: "stdDev", input: `[{"v":2},{"v":4},{"v":4},{"v":4},{"v":5},{"v":5},{"v":7},{"v":9}]`,
			pipe: `[{"$group":{"_id":null,"p":{"$stdDevPop":"$v"},"s":{"$stdDevSamp":"$w"}}}]`, want: `[{"_id":null,"p":2.0,"s":null}]`},
		{name: "empty input", input: `[]`, pipe: `[{"$group":{"_id":null,"n":{"$sum":1}}}]`, want: `[]`},
		{name: "missing _id", input: in, pipe: `[{"$group":{"n":{"$sum":1}}}]`, code: 15955},
		{name: "unknown accumulator", input: in, pipe: `[{"$group":{"_id":null,"n":{"$foo":1}}}]`, code: 15952},
		{name: "not accumulator object", input: in, pipe: `[{"$group":{"_id":null,"n":1}}]`, code: 40234},
		{name: "two accumulators", input: in, pipe: `[{"$group":{"_id":null,"n":{"$sum":1,"$max":1}}}]`, code: 40238},
		{name: "dotted field", input: in, pipe: `[{"$group":{"_id":null,"a.b":{"$sum":1}}}]`, code: 40235},
		{name: "unary", input: in, pipe: `[{"$group":{"_id":null,"n":{"$sum":[1,2]}}}]`, code: 40237},
		{name: "mergeObjects non-object", input: in, pipe: `[{"$group":{"_id":null,"m":{"$mergeObjects":"$v"}}}]`, code: 40400},
		{name: "count with argument", input: in, pipe: `[{"$group":{"_id":null,"c":{"$count":{"a":1}}}}]`, code: 14},
	}, nil)
}

func TestApplyUpdatePipeline(t *testing.T) {
	now := bson.DateTime(1700000000000)
	cases := []struct {
		name string
		pipe string
		want string
		code int32
	}{
		{name: "set and unset", pipe: `[{"$set":{"b":{"$add":["$a",1]}}},{"$unset":"c"}]`, want: `[{"_id":1,"a":1,"b":2}]`},
		{name: "NOW variable", pipe: `[{"$set":{"t":"$$NOW"}},{"$project":{"t":1,"_id":0}}]`,
			want: `[{"t":{"$date":"2023-11-14T22:13:20Z"}}]`},
		{name: "replaceWith", pipe: `[{"$replaceWith":{"_id":"$_id","z":"$c"}}]`, want: `[{"_id":1,"z":"x"}]`},
		{name: "project", pipe: `[{"$project":{"a":1}}]`, want: `[{"_id":1,"a":1}]`},
		{name: "group not allowed", pipe: `[{"$group":{"_id":null}}]`, code: mongoerr.InvalidOptions},
		{name: "match not allowed", pipe: `[{"$match":{}}]`, code: mongoerr.InvalidOptions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := jsonDocs(t, `[{"_id":1,"a":1,"c":"x"}]`)[0]
			got, err := ApplyUpdatePipeline(jsonDocs(t, tc.pipe), doc, expr.Vars{"NOW": now})
			if tc.code != 0 {
				if !mongoerr.Is(err, tc.code) {
					t.Fatalf("want code %d, got %v", tc.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g, w := canon(t, []bson.D{got}), canon(t, jsonDocs(t, tc.want)); g != w {
				t.Fatalf("got %s want %s", g, w)
			}
		})
	}
}

func TestLetVars(t *testing.T) {
	runCases(t, []pipeCase{
		{name: "let var in expression", input: `[{"_id":1}]`, pipe: `[{"$set":{"v":"$$x"}}]`, want: `[{"_id":1,"v":42}]`},
		{name: "let var in match expr", input: `[{"_id":1},{"_id":42}]`, pipe: `[{"$match":{"$expr":{"$eq":["$_id","$$x"]}}}]`,
			want: `[{"_id":42}]`},
	}, func() Options { return Options{DB: "db", Vars: expr.Vars{"x": int32(42)}} })
}
