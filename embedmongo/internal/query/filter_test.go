package query

import (
	"testing"
)

type matchCase struct {
	filter, doc string
	want        bool
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, tc := range cases {
		m, err := Compile(doc(t, tc.filter), Options{})
		if err != nil {
			t.Errorf("Compile(%s): %v", tc.filter, err)
			continue
		}
		got, err := m.Match(doc(t, tc.doc))
		if err != nil {
			t.Errorf("Match(%s, %s): %v", tc.filter, tc.doc, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Match(%s, %s) = %v, want %v", tc.filter, tc.doc, got, tc.want)
		}
	}
}

func TestEquality(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{}`, `{"a": 1}`, true},
		{`{"a": 1}`, `{"a": 1}`, true},
		{`{"a": 1}`, `{"a": 1.0}`, true},
		{`{"a": 1}`, `{"a": {"$numberLong": "1"}}`, true},
		{`{"a": 1}`, `{"a": {"$numberDecimal": "1.00"}}`, true},
		{`{"a": 1}`, `{"a": "1"}`, false},
		{`{"a": 1}`, `{"b": 1}`, false},
		{`{"a": 1}`, `{"a": [3, 1]}`, true},
		{`{"a": 1}`, `{"a": [[1]]}`, false},
		{`{"a": [1]}`, `{"a": [[1]]}`, true},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, true},
		{`{"a": [1, 2]}`, `{"a": [2, 1]}`, false},
		{`{"a": [1, 2]}`, `{"a": 1}`, false},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1}}`, true},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1, "c": 2}}`, false},
		{`{"a": {"b": 1, "c": 2}}`, `{"a": {"c": 2, "b": 1}}`, false},
		{`{"a": {}}`, `{"a": {}}`, true},
		{`{"a": "x", "b": 2}`, `{"a": "x", "b": 2}`, true},
		{`{"a": "x", "b": 2}`, `{"a": "x", "b": 3}`, false},
		{`{"a": true}`, `{"a": 1}`, false},
		{`{"_id": {"$oid": "65a000000000000000000001"}}`, `{"_id": {"$oid": "65a000000000000000000001"}}`, true},
		{`{"_id": {"$oid": "65a000000000000000000001"}}`, `{"_id": {"$oid": "65a000000000000000000002"}}`, false},
		// DBRef-shaped documents compare as documents, not operators.
		{`{"r": {"$ref": "c", "$id": 1}}`, `{"r": {"$ref": "c", "$id": 1}}`, true},
	})
}

func TestNullAndMissing(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": null}`, `{"a": null}`, true},
		{`{"a": null}`, `{}`, true},
		{`{"a": null}`, `{"a": 0}`, false},
		{`{"a": null}`, `{"a": [1, null]}`, true},
		{`{"a": null}`, `{"a": [1, 2]}`, false},
		{`{"a": null}`, `{"a": {"$undefined": true}}`, false},
		{`{"a": {"$eq": null}}`, `{}`, true},
		{`{"a": {"$ne": null}}`, `{}`, false},
		{`{"a": {"$ne": null}}`, `{"a": 1}`, true},
		{`{"a": {"$ne": null}}`, `{"a": [1, null]}`, false},
		{`{"a": {"$gte": null}}`, `{}`, true},
		{`{"a": {"$lte": null}}`, `{"a": null}`, true},
		{`{"a": {"$gt": null}}`, `{"a": null}`, false},
		{`{"a": {"$lt": null}}`, `{}`, false},
		{`{"a": {"$in": [null]}}`, `{}`, true},
		{`{"a": {"$in": [null, 5]}}`, `{"a": 5}`, true},
		{`{"a": {"$nin": [null]}}`, `{}`, false},
		{`{"a": {"$nin": [null]}}`, `{"a": 3}`, true},
		{`{"a.b": null}`, `{"a": {"c": 1}}`, true},
		{`{"a.b": null}`, `{"a": 5}`, true},
		{`{"a.b": null}`, `{}`, true},
		{`{"a.b": null}`, `{"a": [{"b": 1}, {"c": 1}]}`, true},
		{`{"a.b": null}`, `{"a": [{"b": 1}, {"b": 2}]}`, false},
		{`{"a.b": null}`, `{"a": [{"b": [1, null]}]}`, true},
		{`{"a.b": 1}`, `{"a": null}`, false},
		// jstests/core/null2.js: scalars and empty arrays yield nothing for "a.b".
		{`{"a.b": null}`, `{"a": [5, {"b": 5}]}`, false},
		{`{"a.b": null}`, `{"a": []}`, false},
		{`{"a.b": null}`, `{"a": [{}]}`, true},
		{`{"a.b": {"$in": [null]}}`, `{"a": [{}, {"b": 5}]}`, true},
	})
}

func TestComparisonBracketing(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$gt": 5}}`, `{"a": 6}`, true},
		{`{"a": {"$gt": 5}}`, `{"a": 5}`, false},
		{`{"a": {"$gt": 5}}`, `{"a": 5.5}`, true},
		{`{"a": {"$gt": 5}}`, `{"a": {"$numberLong": "6"}}`, true},
		{`{"a": {"$gt": 5}}`, `{"a": "6"}`, false},
		{`{"a": {"$gt": 5}}`, `{"a": "abc"}`, false},
		{`{"a": {"$gt": 5}}`, `{"a": true}`, false},
		{`{"a": {"$gt": 5}}`, `{"a": null}`, false},
		{`{"a": {"$gt": 5}}`, `{}`, false},
		{`{"a": {"$gt": 5}}`, `{"a": [1, 7]}`, true},
		{`{"a": {"$gt": 5}}`, `{"a": [1, 2]}`, false},
		{`{"a": {"$gt": 5}}`, `{"a": [[7]]}`, false},
		{`{"a": {"$gte": 5}}`, `{"a": 5}`, true},
		{`{"a": {"$lt": 5}}`, `{"a": 4.99}`, true},
		{`{"a": {"$lt": 5}}`, `{"a": "4"}`, false},
		{`{"a": {"$lte": 5}}`, `{"a": 5}`, true},
		{`{"a": {"$lt": "b"}}`, `{"a": "a"}`, true},
		{`{"a": {"$lt": "b"}}`, `{"a": 1}`, false},
		{`{"a": {"$gt": 1, "$lt": 5}}`, `{"a": 3}`, true},
		{`{"a": {"$gt": 1, "$lt": 5}}`, `{"a": 7}`, false},
		// Each operator may be satisfied by a different element.
		{`{"a": {"$gt": 1, "$lt": 5}}`, `{"a": [0, 7]}`, true},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}}`, `{"a": [0, 7]}`, false},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}}`, `{"a": [0, 3]}`, true},
		{`{"a": {"$gt": {"$date": "2024-01-01T00:00:00Z"}}}`, `{"a": {"$date": "2024-06-01T00:00:00Z"}}`, true},
		{`{"a": {"$gt": {"$date": "2024-01-01T00:00:00Z"}}}`, `{"a": 99999999999999}`, false},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": "x"}`, true},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": null}`, true},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{}`, false},
		{`{"a": {"$lt": {"$maxKey": 1}}}`, `{"a": {"b": 1}}`, true},
		{`{"a": {"$lt": {"$minKey": 1}}}`, `{"a": 1}`, false},
		{`{"a": {"$gt": {"$maxKey": 1}}}`, `{"a": 1}`, false},
		{`{"a": {"$gte": {"$maxKey": 1}}}`, `{"a": {"$maxKey": 1}}`, true},
		{`{"a": {"$gt": [1]}}`, `{"a": [2]}`, true},
		{`{"a": {"$gt": {"x": 1}}}`, `{"a": {"x": 2}}`, true},
		{`{"a": {"$gt": {"$numberDouble": "NaN"}}}`, `{"a": 5}`, false},
		{`{"a": {"$lt": {"$numberDouble": "NaN"}}}`, `{"a": 5}`, false},
		{`{"a": {"$gte": {"$numberDouble": "NaN"}}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"a": {"$eq": {"$numberDouble": "NaN"}}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"a": {"$lt": 5}}`, `{"a": {"$numberDouble": "NaN"}}`, false},
		{`{"a": {"$gt": {"$numberLong": "9007199254740992"}}}`, `{"a": 9007199254740992.0}`, false},
		{`{"a": {"$gt": {"$numberLong": "9007199254740992"}}}`, `{"a": {"$numberLong": "9007199254740993"}}`, true},
		{`{"a": {"$eq": 2}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$eq": [1, 2]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$ne": 2}}`, `{"a": [1, 2]}`, false},
		{`{"a": {"$ne": 2}}`, `{"a": [1, 3]}`, true},
		{`{"a": {"$ne": 2}}`, `{}`, true},
		{`{"t": {"$gt": {"$timestamp": {"t": 5, "i": 1}}}}`, `{"t": {"$timestamp": {"t": 5, "i": 2}}}`, true},
	})
}

func TestInNin(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$in": [1, 2]}}`, `{"a": 2}`, true},
		{`{"a": {"$in": [1, 2]}}`, `{"a": 3}`, false},
		{`{"a": {"$in": [1, 2]}}`, `{"a": [5, 1]}`, true},
		{`{"a": {"$in": []}}`, `{"a": 1}`, false},
		{`{"a": {"$in": [[1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "^ab", "options": ""}}]}}`, `{"a": "abc"}`, true},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "^ab", "options": "i"}}]}}`, `{"a": "ABc"}`, true},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "^ab", "options": ""}}]}}`, `{"a": "xab"}`, false},
		{`{"a": {"$nin": [1, 2]}}`, `{"a": 3}`, true},
		{`{"a": {"$nin": [1, 2]}}`, `{"a": [3, 2]}`, false},
		{`{"a": {"$nin": [1, 2]}}`, `{}`, true},
		{`{"a": {"$nin": []}}`, `{"a": 1}`, true},
		{`{"a": {"$in": [1]}}`, `{"a": 1.0}`, true},
	})
}

func TestLogical(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 2}`, true},
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 3}`, false},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 2}`, true},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 0}`, false},
		{`{"$nor": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 0}`, true},
		{`{"$nor": [{"a": 1}, {"b": 2}]}`, `{"a": 1}`, false},
		{`{"_id": 1, "$or": [{"lockOwner": null}, {"lockOwner": "me"}]}`, `{"_id": 1}`, true},
		{`{"_id": 1, "$or": [{"lockOwner": null}, {"lockOwner": "me"}]}`, `{"_id": 1, "lockOwner": "you"}`, false},
		{`{"_id": 1, "$or": [{"lockOwner": null}, {"lockOwner": "me"}]}`, `{"_id": 1, "lockOwner": "me"}`, true},
		{`{"$and": [{"$or": [{"a": 1}, {"a": 2}]}, {"$or": [{"b": 1}, {"b": 2}]}]}`, `{"a": 2, "b": 1}`, true},
		{`{"a": {"$not": {"$gt": 5}}}`, `{"a": 3}`, true},
		{`{"a": {"$not": {"$gt": 5}}}`, `{"a": 7}`, false},
		{`{"a": {"$not": {"$gt": 5}}}`, `{}`, true},
		{`{"a": {"$not": {"$gt": 5}}}`, `{"a": "x"}`, true},
		{`{"a": {"$not": {"$gt": 5}}}`, `{"a": [3, 7]}`, false},
		{`{"a": {"$not": {"$regularExpression": {"pattern": "^x", "options": ""}}}}`, `{"a": "xy"}`, false},
		{`{"a": {"$not": {"$regularExpression": {"pattern": "^x", "options": ""}}}}`, `{"a": "yx"}`, true},
		{`{"a": {"$not": {"$regex": "^x"}}}`, `{"a": "yx"}`, true},
		{`{"$comment": "hi", "a": 1}`, `{"a": 1}`, true},
		{`{"$alwaysFalse": 1}`, `{"a": 1}`, false},
	})
}

func TestExists(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$exists": true}}`, `{"a": null}`, true},
		{`{"a": {"$exists": true}}`, `{}`, false},
		{`{"a": {"$exists": false}}`, `{}`, true},
		{`{"a": {"$exists": false}}`, `{"a": 0}`, false},
		{`{"a": {"$exists": 1}}`, `{"a": 0}`, true},
		{`{"a": {"$exists": 0}}`, `{"a": 0}`, false},
		{`{"a.b": {"$exists": true}}`, `{"a": [{"c": 1}, {"b": 1}]}`, true},
		{`{"a.b": {"$exists": true}}`, `{"a": [{"c": 1}]}`, false},
		{`{"a.b": {"$exists": false}}`, `{"a": [{"c": 1}]}`, true},
		{`{"a.b": {"$exists": false}}`, `{"a": 5}`, true},
		{`{"a.1": {"$exists": true}}`, `{"a": [1, 2]}`, true},
		{`{"a.2": {"$exists": true}}`, `{"a": [1, 2]}`, false},
		{`{"a": {"$exists": true}}`, `{"a": []}`, true},
	})
}

func TestDottedPaths(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a.b": 1}`, `{"a": {"b": 1}}`, true},
		{`{"a.b": 1}`, `{"a": {"b": 2}}`, false},
		{`{"a.b": 1}`, `{"a": [{"b": 2}, {"b": 1}]}`, true},
		{`{"a.b": 1}`, `{"a": [{"b": [2, 1]}]}`, true},
		{`{"a.b": 1}`, `{"a": [[{"b": 1}]]}`, false},
		{`{"a.b.c": 1}`, `{"a": [{"b": [{"c": 1}]}]}`, true},
		{`{"a.b.c": 1}`, `{"a": {"b": {"c": 1}}}`, true},
		{`{"a.0": 5}`, `{"a": [5, 6]}`, true},
		{`{"a.1": 5}`, `{"a": [5, 6]}`, false},
		{`{"a.0": 5}`, `{"a": {"0": 5}}`, true},
		{`{"a.0": 5}`, `{"a": [{"0": 5}]}`, true},
		{`{"a.0.b": 1}`, `{"a": [{"b": 1}, {"b": 2}]}`, true},
		{`{"a.1.b": 1}`, `{"a": [{"b": 1}, {"b": 2}]}`, false},
		{`{"a.0.0": 1}`, `{"a": [[1, 2]]}`, true},
		{`{"a.0": 1}`, `{"a": [[1, 2]]}`, true},
		{`{"a.00": 1}`, `{"a": [1]}`, false},
		{`{"a.b": {"$gt": 1}}`, `{"a": [{"b": 0}, {"b": 3}]}`, true},
		{`{"a.b": {"$size": 2}}`, `{"a": [{"b": [1, 2]}]}`, true},
	})
}

func TestRegex(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$regex": "^ab"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "^ab"}}`, `{"a": "cab"}`, false},
		{`{"a": {"$regex": "^ab", "$options": "i"}}`, `{"a": "ABc"}`, true},
		{`{"a": {"$regex": "^b", "$options": "m"}}`, `{"a": "a\nb"}`, true},
		{`{"a": {"$regex": "^b"}}`, `{"a": "a\nb"}`, false},
		{`{"a": {"$regex": "a.b", "$options": "s"}}`, `{"a": "a\nb"}`, true},
		{`{"a": {"$regex": "a.b"}}`, `{"a": "a\nb"}`, false},
		{`{"a": {"$regex": "a b # comment\n c", "$options": "x"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "a[ ]b", "$options": "x"}}`, `{"a": "a b"}`, true},
		{`{"a": {"$regularExpression": {"pattern": "b", "options": ""}}}`, `{"a": ["x", "abc"]}`, true},
		{`{"a": {"$regex": "1"}}`, `{"a": 1}`, false},
		{`{"a": {"$regularExpression": {"pattern": "b", "options": ""}}}`, `{"a": {"$regularExpression": {"pattern": "b", "options": ""}}}`, true},
		{`{"a": {"$regex": {"$regularExpression": {"pattern": "B", "options": ""}}, "$options": "i"}}`, `{"a": "b"}`, true},
		{`{"a": {"$eq": {"$regularExpression": {"pattern": "b", "options": ""}}}}`, `{"a": "b"}`, false},
		{`{"a": {"$symbol": "x"}}`, `{"a": "x"}`, true},
	})
}

func TestTypeSizeAllModElemMatch(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"a": {"$type": "string"}}`, `{"a": "x"}`, true},
		{`{"a": {"$type": "string"}}`, `{"a": 1}`, false},
		{`{"a": {"$type": 2}}`, `{"a": "x"}`, true},
		{`{"a": {"$type": 2.0}}`, `{"a": "x"}`, true},
		{`{"a": {"$type": "number"}}`, `{"a": {"$numberLong": "1"}}`, true},
		{`{"a": {"$type": "number"}}`, `{"a": "1"}`, false},
		{`{"a": {"$type": ["string", "int"]}}`, `{"a": 1}`, true},
		{`{"a": {"$type": "int"}}`, `{"a": 1.0}`, false},
		{`{"a": {"$type": "double"}}`, `{"a": 1.5}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": []}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": [1]}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": 1}`, false},
		{`{"a": {"$type": "string"}}`, `{"a": [1, "x"]}`, true},
		{`{"a": {"$type": "null"}}`, `{"a": null}`, true},
		{`{"a": {"$type": "null"}}`, `{}`, false},
		{`{"a": {"$type": "object"}}`, `{"a": {}}`, true},
		{`{"a": {"$type": "objectId"}}`, `{"a": {"$oid": "65a000000000000000000001"}}`, true},
		{`{"a": {"$type": "minKey"}}`, `{"a": {"$minKey": 1}}`, true},
		{`{"a": {"$type": -1}}`, `{"a": {"$minKey": 1}}`, true},
		{`{"a": {"$type": "bool"}}`, `{"a": false}`, true},
		{`{"a": {"$type": "date"}}`, `{"a": {"$date": "2024-01-01T00:00:00Z"}}`, true},
		{`{"a": {"$size": 2}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$size": 2}}`, `{"a": [1]}`, false},
		{`{"a": {"$size": 0}}`, `{"a": []}`, true},
		{`{"a": {"$size": 0}}`, `{}`, false},
		{`{"a": {"$size": 1}}`, `{"a": [[1, 2]]}`, true},
		{`{"a": {"$size": 2}}`, `{"a": [[1, 2]]}`, false},
		{`{"a": {"$size": 1}}`, `{"a": "x"}`, false},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3, 1]}`, true},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3]}`, false},
		{`{"a": {"$all": [1]}}`, `{"a": 1}`, true},
		{`{"a": {"$all": []}}`, `{"a": []}`, false},
		{`{"a": {"$all": [[1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$all": [{"$regularExpression": {"pattern": "^x", "options": ""}}, "yy"]}}`, `{"a": ["xa", "yy"]}`, true},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, {"$elemMatch": {"b": 2}}]}}`, `{"a": [{"b": 2}, {"b": 1}]}`, true},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, {"$elemMatch": {"b": 3}}]}}`, `{"a": [{"b": 2}, {"b": 1}]}`, false},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 5}`, true},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 6}`, false},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 5.9}`, true},
		{`{"a": {"$mod": [4, -1]}}`, `{"a": -5}`, true},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": "8"}`, false},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": [3, 8]}`, true},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": {"$numberDouble": "NaN"}}`, false},
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1, "c": 3}, {"b": 0, "c": 2}]}`, false},
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1, "c": 3}, {"b": 1, "c": 2}]}`, true},
		{`{"a.b": 1, "a.c": 2}`, `{"a": [{"b": 1, "c": 3}, {"b": 0, "c": 2}]}`, true},
		{`{"a": {"$elemMatch": {"b": 1}}}`, `{"a": {"b": 1}}`, false},
		{`{"a": {"$elemMatch": {"$eq": 3}}}`, `{"a": [1, 3]}`, true},
		{`{"a": {"$elemMatch": {"$ne": 3}}}`, `{"a": [3, 3]}`, false},
		{`{"a": {"$elemMatch": {"$ne": 3}}}`, `{"a": [3, 4]}`, true},
		{`{"a": {"$elemMatch": {"$or": [{"b": 1}, {"b": 2}]}}}`, `{"a": [{"b": 2}]}`, true},
		{`{"a": {"$elemMatch": {"$gt": 1}}}`, `{"a": [[5]]}`, false},
		{`{"a": {"$elemMatch": {"$size": 1}}}`, `{"a": [[5]]}`, true},
		{`{"a.b": {"$elemMatch": {"$gt": 1}}}`, `{"a": [{"b": [0]}, {"b": [2]}]}`, true},
		{`{"a": {"$bitsAllSet": 5}}`, `{"a": 7}`, true},
		{`{"a": {"$bitsAllSet": 5}}`, `{"a": 6}`, false},
		{`{"a": {"$bitsAnySet": [0, 3]}}`, `{"a": 8}`, true},
		{`{"a": {"$bitsAllClear": [0, 3]}}`, `{"a": 6}`, true},
		{`{"a": {"$bitsAnyClear": 3}}`, `{"a": 3}`, false},
		{`{"a": {"$bitsAllSet": [70]}}`, `{"a": -1}`, true},
		{`{"a": {"$bitsAllSet": 1}}`, `{"a": 1.5}`, false},
		{`{"a": {"$bitsAllSet": {"$binary": {"base64": "Aw==", "subType": "00"}}}}`, `{"a": {"$binary": {"base64": "Bw==", "subType": "00"}}}`, true},
	})
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		filter string
		code   int32
		msg    string
	}{
		{`{"$and": []}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$or": 1}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$nor": [1]}`, 2, "$or/$and/$nor entries need to be full objects"},
		{`{"$foo": 1}`, 2, "unknown top level operator: $foo. If you have a field name that starts with a '$' symbol, consider using $getField or $setField."},
		{`{"a": {"$foo": 1}}`, 2, "unknown operator: $foo"},
		{`{"a": {"$gt": 1, "b": 1}}`, 2, "unknown operator: b"},
		{`{"a": {"$in": 1}}`, 2, "$in needs an array"},
		{`{"a": {"$nin": 1}}`, 2, "$nin needs an array"},
		{`{"a": {"$in": [{"$gt": 1}]}}`, 2, "cannot nest $ under $in"},
		{`{"a": {"$all": 1}}`, 2, "$all needs an array"},
		{`{"a": {"$size": "x"}}`, 2, "$size needs a number"},
		{`{"a": {"$size": -1}}`, 2, "$size may not be negative"},
		{`{"a": {"$size": 1.5}}`, 2, "$size must be a whole number"},
		{`{"a": {"$mod": 1}}`, 2, "malformed mod, needs to be an array"},
		{`{"a": {"$mod": [1]}}`, 2, "malformed mod, not enough elements"},
		{`{"a": {"$mod": [1, 2, 3]}}`, 2, "malformed mod, too many elements"},
		{`{"a": {"$mod": ["x", 1]}}`, 2, "malformed mod, divisor not a number"},
		{`{"a": {"$mod": [0, 1]}}`, 2, "divisor cannot be 0"},
		{`{"a": {"$mod": [2, "x"]}}`, 2, "malformed mod, remainder not a number"},
		{`{"a": {"$not": 1}}`, 2, "$not needs a regex or a document"},
		{`{"a": {"$not": {}}}`, 2, "$not cannot be empty"},
		{`{"a": {"$type": "foo"}}`, 2, "Unknown type name alias: foo"},
		{`{"a": {"$type": 99}}`, 2, "Invalid numerical type code: 99"},
		{`{"a": {"$regex": 1}}`, 2, "$regex has to be a string"},
		{`{"a": {"$options": "i"}}`, 2, "$options needs a $regex"},
		{`{"a": {"$regex": "x", "$options": "z"}}`, 51108, "invalid flag in regex options: z"},
		{`{"a": {"$regex": "(?=x)"}}`, 51091, ""},
		{`{"a": {"$ne": {"$regularExpression": {"pattern": "b", "options": ""}}}}`, 2, "Can't have regex as arg to $ne."},
		{`{"a": {"$elemMatch": 1}}`, 2, "$elemMatch needs an Object"},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, 1]}}`, 2, "$all/$elemMatch has to be consistent"},
		{`{"$where": "1"}`, 238, ""},
		{`{"a": {"$near": [0, 0]}}`, 238, ""},
		{`{"$jsonSchema": {}}`, 238, ""},
	}
	for _, tc := range cases {
		_, err := Compile(doc(t, tc.filter), Options{})
		if errCode(err) != tc.code {
			t.Errorf("Compile(%s) err = %v, want code %d", tc.filter, err, tc.code)
			continue
		}
		if tc.msg != "" {
			if got := err.Error(); got[len(got)-len(tc.msg):] != tc.msg {
				t.Errorf("Compile(%s) err = %q, want message %q", tc.filter, got, tc.msg)
			}
		}
	}
}

func TestMatchPositional(t *testing.T) {
	cases := []struct {
		filter, doc string
		ok          bool
		pos         int
	}{
		{`{"a": 2}`, `{"a": [1, 2, 3]}`, true, 1},
		{`{"a": 2}`, `{"a": 2}`, true, -1},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, true, -1},
		{`{"a.b": 2}`, `{"a": [{"b": 1}, {"b": 2}]}`, true, 1},
		{`{"a.b": 4}`, `{"a": [{"b": [1, 2]}, {"b": [3, 4]}]}`, true, 1},
		{`{"a.b": 6}`, `{"a": {"b": [5, 6]}}`, true, 1},
		{`{"a": {"$gt": 2}}`, `{"a": [1, 2, 3]}`, true, 2},
		{`{"a": {"$elemMatch": {"b": 2}}}`, `{"a": [{"b": 1}, {"b": 2}]}`, true, 1},
		{`{"a": {"$elemMatch": {"$gt": 1}}}`, `{"a": [0, 0, 5]}`, true, 2},
		{`{"_id": 1, "a.b": 2}`, `{"_id": 1, "a": [{"b": 1}, {"b": 2}]}`, true, 1},
		{`{"a": {"$ne": 2}}`, `{"a": [1, 3]}`, true, -1},
		{`{"a": {"$in": [7, 3]}}`, `{"a": [1, 3]}`, true, 1},
		{`{"$or": [{"a": 9}, {"a": 3}]}`, `{"a": [1, 3]}`, true, 1},
		{`{"$or": [{"a": 1, "b": 0}, {"c": 1}]}`, `{"a": [0, 1], "b": 1, "c": 1}`, true, -1},
		{`{"a": 5}`, `{"a": [1, 3]}`, false, -1},
	}
	for _, tc := range cases {
		m, err := Compile(doc(t, tc.filter), Options{})
		if err != nil {
			t.Fatalf("Compile(%s): %v", tc.filter, err)
		}
		ok, pos, err := m.MatchPositional(doc(t, tc.doc))
		if err != nil || ok != tc.ok || pos != tc.pos {
			t.Errorf("MatchPositional(%s, %s) = %v, %d, %v; want %v, %d", tc.filter, tc.doc, ok, pos, err, tc.ok, tc.pos)
		}
	}
}

func TestExpr(t *testing.T) {
	runMatchCases(t, []matchCase{
		{`{"$expr": {"$eq": ["$a", "$b"]}}`, `{"a": 1, "b": 1}`, true},
		{`{"$expr": {"$eq": ["$a", "$b"]}}`, `{"a": 1, "b": 2}`, false},
		{`{"$expr": {"$gt": ["$a", 5]}}`, `{"a": 7}`, true},
		{`{"$expr": {"$lt": ["$lease", 100]}}`, `{"lease": 50}`, true},
		{`{"_id": 1, "$or": [{"owner": null}, {"$expr": {"$lt": ["$exp", 10]}}]}`, `{"_id": 1, "owner": "x", "exp": 5}`, true},
		{`{"_id": 1, "$or": [{"owner": null}, {"$expr": {"$lt": ["$exp", 10]}}]}`, `{"_id": 1, "owner": "x", "exp": 50}`, false},
		{`{"$expr": true}`, `{}`, true},
		{`{"$expr": 0}`, `{}`, false},
		{`{"a": {"$elemMatch": {"$expr": {"$eq": ["$b", 2]}}}}`, `{"a": [{"b": 1}, {"b": 2}]}`, true},
	})
	m, err := Compile(doc(t, `{"$expr": {"$lt": ["$t", "$$NOW"]}}`), Options{Vars: map[string]any{"NOW": int32(10)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d    string
		want bool
	}{{`{"t": 5}`, true}, {`{"t": 15}`, false}} {
		if got, err := m.Match(doc(t, tc.d)); err != nil || got != tc.want {
			t.Errorf("$$NOW match %s = %v, %v", tc.d, got, err)
		}
	}
	if _, err := Compile(doc(t, `{"$expr": {"$noSuchOp": 1}}`), Options{}); err == nil {
		t.Errorf("$expr with an unknown operator compiled")
	}
}
