package expr

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestFieldPathsAndLiterals(t *testing.T) {
	doc := `{"a": 1, "b": {"c": "x"}, "arr": [{"b": 1}, {"c": 2}, {"b": [3]}, 7, [{"b": 4}]], "n": null}`
	runCases(t, []evalCase{
		{`5`, doc, `5`, 0},
		{`"plain"`, doc, `"plain"`, 0},
		{`"$a"`, doc, `1`, 0},
		{`"$b.c"`, doc, `"x"`, 0},
		{`"$nope"`, doc, `MISSING`, 0},
		{`"$a.b"`, doc, `MISSING`, 0},
		{`"$n"`, doc, `null`, 0},
		{`"$arr.b"`, doc, `[1, [3], [4]]`, 0},
		{`"$arr.0"`, doc, `[[]]`, 0},
		{`"$$ROOT.b.c"`, doc, `"x"`, 0},
		{`"$$CURRENT.a"`, doc, `1`, 0},
		{`"$$REMOVE"`, doc, `MISSING`, 0},
		{`"$$nope"`, doc, ``, 17276},
		{`"$"`, doc, ``, 16872},
		{`"$a..b"`, doc, ``, 15998},
		{`{"$literal": "$a"}`, doc, `"$a"`, 0},
		{`{"$literal": {"$add": 1}}`, doc, `{"$add": 1}`, 0},
		{`{"x": "$a", "y": "$nope", "z": {"w": "$b.c"}}`, doc, `{"x": 1, "z": {"w": "x"}}`, 0},
		{`["$a", "$nope", 2]`, doc, `[1, null, 2]`, 0},
		{`{}`, doc, `{}`, 0},
		{`{"$foo": 1}`, doc, ``, 168},
		{`{"$add": [1], "b": 2}`, doc, ``, 15983},
		{`{"a": 1, "a": 2}`, doc, ``, 16406},
		{`{"a.b": 1}`, doc, ``, 16412},
	})
}

func TestUnknownOperatorName(t *testing.T) {
	_, err := Eval(bson.D{{Key: "$foo", Value: 1}}, nil, nil)
	e := mongoerr.As(err)
	if e == nil || e.Code != 168 || e.Name != "InvalidPipelineOperator" || e.Msg != "Unrecognized expression '$foo'" {
		t.Fatalf("got %#v", e)
	}
}

func TestVariables(t *testing.T) {
	now := bson.DateTime(1_700_000_000_000)
	doc := bson.D{{Key: "a", Value: int32(1)}}
	cases := []struct {
		name string
		e    any
		vars Vars
		want any
	}{
		{"NOW from vars", "$$NOW", Vars{"NOW": now}, now},
		{"user var", "$$x", Vars{"x": "v"}, "v"},
		{"user var path", "$$x.y", Vars{"x": bson.D{{Key: "y", Value: int32(2)}}}, int32(2)},
		{"CURRENT override", "$a", Vars{"CURRENT": bson.D{{Key: "a", Value: "other"}}}, "other"},
		{"ROOT unaffected by CURRENT", "$$ROOT.a", Vars{"CURRENT": bson.D{}}, int32(1)},
		{"CLUSTER_TIME", "$$CLUSTER_TIME", Vars{"CLUSTER_TIME": bson.Timestamp{T: 5, I: 1}}, bson.Timestamp{T: 5, I: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Eval(tc.e, doc, tc.vars)
			if err != nil {
				t.Fatal(err)
			}
			if canon(got) != canon(tc.want) {
				t.Fatalf("got %s want %s", canon(got), canon(tc.want))
			}
		})
	}
	// $$NOW without a binding is the current time, stable within one evaluation.
	got, err := Eval(bson.A{"$$NOW", "$$NOW"}, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	arr := got.(bson.A)
	d, ok := arr[0].(bson.DateTime)
	if !ok || arr[0] != arr[1] || time.Since(d.Time()) > time.Minute {
		t.Fatalf("bad NOW %v", got)
	}
}

func TestTruthy(t *testing.T) {
	dec0, _ := bson.ParseDecimal128("0")
	decNeg0, _ := bson.ParseDecimal128("-0.00")
	dec1, _ := bson.ParseDecimal128("0.1")
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{false, false}, {nil, false}, {bsonkit.Missing, false}, {bson.Undefined{}, false},
		{int32(0), false}, {int64(0), false}, {0.0, false}, {dec0, false}, {decNeg0, false},
		{true, true}, {int32(1), true}, {dec1, true}, {"", true}, {bson.A{}, true}, {bson.D{}, true},
		{bson.DateTime(0), true},
	} {
		if got := Truthy(tc.v); got != tc.want {
			t.Errorf("Truthy(%#v) = %v", tc.v, got)
		}
	}
}

func TestComparisonAndLogic(t *testing.T) {
	doc := `{"a": 5, "d": {"$date": "2024-01-01T00:00:00Z"}, "n": null}`
	runCases(t, []evalCase{
		{`{"$eq": ["$a", 5.0]}`, doc, `true`, 0},
		{`{"$eq": ["$missing", null]}`, doc, `false`, 0},
		{`{"$eq": ["$n", null]}`, doc, `true`, 0},
		{`{"$lt": ["$missing", null]}`, doc, `true`, 0},
		{`{"$ne": ["$a", 6]}`, doc, `true`, 0},
		{`{"$gt": ["abc", 5]}`, doc, `true`, 0},
		{`{"$gte": ["$d", {"$date": "2024-01-01T00:00:00Z"}]}`, doc, `true`, 0},
		{`{"$lt": ["$d", {"$date": "2023-01-01T00:00:00Z"}]}`, doc, `false`, 0},
		{`{"$lte": [2, 2]}`, doc, `true`, 0},
		{`{"$cmp": [1, 2]}`, doc, `-1`, 0},
		{`{"$cmp": ["b", "a"]}`, doc, `1`, 0},
		{`{"$eq": [1]}`, doc, ``, 16020},
		{`{"$and": [1, "x", []]}`, doc, `true`, 0},
		{`{"$and": [1, 0]}`, doc, `false`, 0},
		{`{"$and": []}`, doc, `true`, 0},
		{`{"$or": []}`, doc, `false`, 0},
		{`{"$or": [null, false, "$a"]}`, doc, `true`, 0},
		{`{"$or": [true, {"$divide": ["$a", 0]}]}`, doc, `true`, 0},
		{`{"$not": [0]}`, doc, `true`, 0},
		{`{"$not": "$missing"}`, doc, `true`, 0},
		{`{"$cond": [{"$gt": ["$a", 3]}, "big", "small"]}`, doc, `"big"`, 0},
		{`{"$cond": {"if": "$missing", "then": 1, "else": 2}}`, doc, `2`, 0},
		{`{"$cond": {"if": true, "then": 1}}`, doc, ``, 17082},
		{`{"$cond": [true, 1]}`, doc, ``, 16020},
		{`{"$ifNull": ["$missing", "$n", "dflt"]}`, doc, `"dflt"`, 0},
		{`{"$ifNull": ["$a", "dflt"]}`, doc, `5`, 0},
		{`{"$ifNull": ["$n", "$missing"]}`, doc, `MISSING`, 0},
		{`{"$ifNull": ["$a"]}`, doc, ``, 1257300},
		{`{"$switch": {"branches": [{"case": {"$lt": ["$a", 0]}, "then": "neg"}, {"case": {"$gt": ["$a", 0]}, "then": "pos"}], "default": "zero"}}`, doc, `"pos"`, 0},
		{`{"$switch": {"branches": [{"case": false, "then": 1}], "default": "dflt"}}`, doc, `"dflt"`, 0},
		{`{"$switch": {"branches": [{"case": "$missing", "then": 1}]}}`, doc, ``, 40066},
		{`{"$switch": {"branches": []}}`, doc, ``, 40068},
	})
}

func TestArithmetic(t *testing.T) {
	doc := `{"ts": {"$date": "2024-01-01T00:00:00Z"}, "dur": 30000, "i": 7, "l": {"$numberLong": "9223372036854775807"}, "s": "x"}`
	runCases(t, []evalCase{
		{`{"$add": [1, 2]}`, doc, `3`, 0},
		{`{"$add": [1, {"$numberLong": "2"}]}`, doc, `{"$numberLong": "3"}`, 0},
		{`{"$add": [1, 2.5]}`, doc, `3.5`, 0},
		{`{"$add": [2147483647, 1]}`, doc, `{"$numberLong": "2147483648"}`, 0},
		{`{"$add": ["$l", 1]}`, doc, `{"$numberDouble": "9.223372036854775808E+18"}`, 0},
		{`{"$add": ["$ts", "$dur"]}`, doc, `{"$date": "2024-01-01T00:00:30Z"}`, 0},
		{`{"$add": ["$dur", "$ts", 1.6]}`, doc, `{"$date": "2024-01-01T00:00:30.002Z"}`, 0},
		{`{"$add": ["$ts", "$ts"]}`, doc, ``, 16612},
		{`{"$add": [1, "$missing"]}`, doc, `null`, 0},
		{`{"$add": [1, "$s"]}`, doc, ``, 16554},
		{`{"$add": []}`, doc, `0`, 0},
		{`{"$subtract": [10, 4.5]}`, doc, `5.5`, 0},
		{`{"$subtract": ["$ts", {"$date": "2023-12-31T23:59:59Z"}]}`, doc, `{"$numberLong": "1000"}`, 0},
		{`{"$subtract": ["$ts", 1000]}`, doc, `{"$date": "2023-12-31T23:59:59Z"}`, 0},
		{`{"$subtract": [1000, "$ts"]}`, doc, ``, 16556},
		{`{"$subtract": ["$ts", "$s"]}`, doc, ``, 16613},
		{`{"$subtract": [null, 1]}`, doc, `null`, 0},
		{`{"$multiply": [3, 4]}`, doc, `12`, 0},
		{`{"$multiply": [65536, 65536]}`, doc, `{"$numberLong": "4294967296"}`, 0},
		{`{"$multiply": [2, "$s"]}`, doc, ``, 16555},
		{`{"$divide": [7, 2]}`, doc, `3.5`, 0},
		{`{"$divide": [6, 3]}`, doc, `2.0`, 0},
		{`{"$divide": [1, 0]}`, doc, ``, 2},
		{`{"$divide": ["$s", 1]}`, doc, ``, 14},
		{`{"$divide": [{"$numberDecimal": "1"}, 4]}`, doc, `{"$numberDecimal": "0.25"}`, 0},
		{`{"$mod": [7, 3]}`, doc, `1`, 0},
		{`{"$mod": [-7, 3]}`, doc, `-1`, 0},
		{`{"$mod": [7.5, 2]}`, doc, `1.5`, 0},
		{`{"$mod": [7, 2.0]}`, doc, `1`, 0},
		{`{"$mod": [1, 0]}`, doc, ``, 16610},
		{`{"$abs": -5}`, doc, `5`, 0},
		{`{"$abs": [-2147483648]}`, doc, `{"$numberLong": "2147483648"}`, 0},
		{`{"$abs": "$missing"}`, doc, `null`, 0},
		{`{"$abs": "$s"}`, doc, ``, 28765},
		{`{"$ceil": 1.2}`, doc, `2.0`, 0},
		{`{"$floor": -1.2}`, doc, `-2.0`, 0},
		{`{"$floor": {"$numberDecimal": "-1.5"}}`, doc, `{"$numberDecimal": "-2"}`, 0},
		{`{"$sqrt": 16}`, doc, `4.0`, 0},
		{`{"$sqrt": -1}`, doc, ``, 28714},
		{`{"$pow": [2, 10]}`, doc, `1024`, 0},
		{`{"$pow": [2, -1]}`, doc, `0.5`, 0},
		{`{"$pow": [2, 40]}`, doc, `{"$numberLong": "1099511627776"}`, 0},
		{`{"$pow": [0, -1]}`, doc, ``, 28764},
		{`{"$exp": 0}`, doc, `1.0`, 0},
		{`{"$ln": 1}`, doc, `0.0`, 0},
		{`{"$ln": 0}`, doc, ``, 28766},
		{`{"$log10": 1000}`, doc, `3.0`, 0},
		{`{"$log": [8, 2]}`, doc, `3.0`, 0},
		{`{"$log": [8, 1]}`, doc, ``, 28759},
		{`{"$round": [2.5]}`, doc, `2.0`, 0},
		{`{"$round": [3.5, 0]}`, doc, `4.0`, 0},
		{`{"$round": [2.675, 2]}`, doc, `2.68`, 0},
		{`{"$round": [1234, -2]}`, doc, `1200`, 0},
		{`{"$round": [1250, -2]}`, doc, `1200`, 0},
		{`{"$trunc": [-2.7]}`, doc, `-2.0`, 0},
		{`{"$trunc": [2.789, 1]}`, doc, `2.7`, 0},
		{`{"$round": [{"$numberDecimal": "1.25"}, 1]}`, doc, `{"$numberDecimal": "1.2"}`, 0},
	})
}

func TestObjectOperators(t *testing.T) {
	doc := `{"a": {"x": 1, "y": 2}, "n": null, "s": "str", "$odd": 3}`
	runCases(t, []evalCase{
		{`{"$getField": "s"}`, doc, `"str"`, 0},
		{`{"$getField": {"$literal": "$odd"}}`, doc, `3`, 0},
		{`{"$getField": {"field": "x", "input": "$a"}}`, doc, `1`, 0},
		{`{"$getField": {"field": "z", "input": "$a"}}`, doc, `MISSING`, 0},
		{`{"$getField": {"field": "x", "input": "$n"}}`, doc, `null`, 0},
		{`{"$getField": {"field": "x", "input": "$s"}}`, doc, `MISSING`, 0},
		{`{"$getField": {"field": "$s"}}`, doc, ``, 5654601},
		{`{"$getField": {"field": 1}}`, doc, ``, 5654602},
		{`{"$setField": {"field": "x", "input": "$a", "value": 10}}`, doc, `{"x": 10, "y": 2}`, 0},
		{`{"$setField": {"field": "z", "input": "$a", "value": "$s"}}`, doc, `{"x": 1, "y": 2, "z": "str"}`, 0},
		{`{"$setField": {"field": "x", "input": "$a", "value": "$$REMOVE"}}`, doc, `{"y": 2}`, 0},
		{`{"$setField": {"field": "x", "input": "$n", "value": 1}}`, doc, `null`, 0},
		{`{"$setField": {"field": "x", "input": "$s", "value": 1}}`, doc, ``, 4161105},
		{`{"$unsetField": {"field": "y", "input": "$a"}}`, doc, `{"x": 1}`, 0},
		{`{"$mergeObjects": ["$a", {"y": 3, "z": 4}, null]}`, doc, `{"x": 1, "y": 3, "z": 4}`, 0},
		{`{"$mergeObjects": ["$a", "$s"]}`, doc, ``, 40400},
		{`{"$objectToArray": "$a"}`, doc, `[{"k": "x", "v": 1}, {"k": "y", "v": 2}]`, 0},
		{`{"$arrayToObject": [[["a", 1], ["b", 2], ["a", 3]]]}`, doc, `{"a": 3, "b": 2}`, 0},
		{`{"$arrayToObject": {"$literal": [{"k": "a", "v": 1}]}}`, doc, `{"a": 1}`, 0},
		{`{"$arrayToObject": [[["a"]]]}`, doc, ``, 40397},
		{`{"$let": {"vars": {"x": "$a.x", "y": 10}, "in": {"$add": ["$$x", "$$y"]}}}`, doc, `11`, 0},
		{`{"$let": {"vars": {"x": 1}, "in": {"$let": {"vars": {"x": 2, "y": "$$x"}, "in": ["$$x", "$$y"]}}}}`, doc, `[2, 1]`, 0},
		{`{"$let": {"vars": {"Bad": 1}, "in": 1}}`, doc, ``, 16867},
		{`{"$let": {"vars": {}, "in": "$$x"}}`, doc, ``, 17276},
	})
}

// The bank's lease lock: expired when lockTimestamp + lockDuration < $$NOW.
func TestLeaseLockExpressions(t *testing.T) {
	lockTS := bson.DateTime(1_700_000_000_000)
	doc := bson.D{{Key: "lockTimestamp", Value: lockTS}, {Key: "lockDuration", Value: int64(30_000)}}
	filter := bson.D{{Key: "$lt", Value: bson.A{bson.D{{Key: "$add", Value: bson.A{"$lockTimestamp", "$lockDuration"}}}, "$$NOW"}}}
	x, err := Compile(filter)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		now  bson.DateTime
		want bool
	}{{lockTS + 29_999, false}, {lockTS + 30_000, false}, {lockTS + 30_001, true}} {
		got, err := x.Eval(doc, Vars{"NOW": tc.now})
		if err != nil || got != tc.want {
			t.Errorf("now=%d: got %v, %v", tc.now, got, err)
		}
	}
	set := bson.D{{Key: "lockTimestamp", Value: "$$NOW"}, {Key: "owner", Value: bson.D{{Key: "$ifNull", Value: bson.A{"$owner", "me"}}}}}
	got, err := Eval(set, doc, Vars{"NOW": lockTS + 5})
	if err != nil {
		t.Fatal(err)
	}
	want := bson.D{{Key: "lockTimestamp", Value: lockTS + 5}, {Key: "owner", Value: "me"}}
	if canon(got) != canon(want) {
		t.Fatalf("got %s", canon(got))
	}
}

func TestNowStableAcrossScopes(t *testing.T) {
	e := ej(t, `{"$map": {"input": [1, 2], "in": "$$NOW"}}`)
	got, err := Eval(bson.A{e, "$$NOW"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	arr := got.(bson.A)
	inner := arr[0].(bson.A)
	if inner[0] != arr[1] || inner[1] != arr[1] {
		t.Fatalf("NOW differs within one evaluation: %v", got)
	}
}

func TestCompileReportsParseErrors(t *testing.T) {
	// Parse errors surface at Compile even in branches never evaluated.
	_, err := Compile(ej(t, `{"$cond": [false, {"$bogus": 1}, 1]}`))
	if !mongoerr.Is(err, 168) {
		t.Fatalf("got %v", err)
	}
	x, err := Compile(ej(t, `{"$add": [1, 2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := x.IsConstant(); !ok || v != int32(3) {
		t.Fatalf("constant folding: %v %v", v, ok)
	}
}
