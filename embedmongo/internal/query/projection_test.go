package query

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func sameDoc(a, b bson.D) bool {
	ra, err1 := bson.Marshal(a)
	rb, err2 := bson.Marshal(b)
	return err1 == nil && err2 == nil && string(ra) == string(rb)
}

func TestProjection(t *testing.T) {
	const src = `{"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "arr": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, 5], "n": [1, 2, 3, 4, 5]}`
	cases := []struct {
		spec, doc, want string
		pos             int
	}{
		{`{}`, src, src, -1},
		{`{"a": 1}`, src, `{"_id": 1, "a": 1}`, -1},
		{`{"a": true}`, src, `{"_id": 1, "a": 1}`, -1},
		{`{"a": 1, "_id": 0}`, src, `{"a": 1}`, -1},
		{`{"_id": 0, "a": 1}`, src, `{"a": 1}`, -1},
		{`{"_id": 1}`, src, `{"_id": 1}`, -1},
		{`{"zz": 1}`, src, `{"_id": 1}`, -1},
		{`{"b.c": 1}`, src, `{"_id": 1, "b": {"c": 2}}`, -1},
		{`{"b": {"c": 1}}`, src, `{"_id": 1, "b": {"c": 2}}`, -1},
		{`{"arr.x": 1}`, src, `{"_id": 1, "arr": [{"x": 1}, {"x": 3}]}`, -1},
		{`{"a.z": 1}`, src, `{"_id": 1}`, -1},
		{`{"a": 0}`, src, `{"_id": 1, "b": {"c": 2, "d": 3}, "arr": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, 5], "n": [1, 2, 3, 4, 5]}`, -1},
		{`{"_id": 0}`, `{"_id": 1, "a": 1}`, `{"a": 1}`, -1},
		{`{"b.c": 0, "arr": false, "n": 0}`, src, `{"_id": 1, "a": 1, "b": {"d": 3}}`, -1},
		{`{"arr.x": 0, "b": 0, "n": 0, "_id": 0}`, src, `{"a": 1, "arr": [{"y": 2}, {"y": 4}, 5]}`, -1},
		{`{"_id": 1, "a": 0, "b": 0, "arr": 0}`, src, `{"_id": 1, "n": [1, 2, 3, 4, 5]}`, -1},
		{`{"n": {"$slice": 2}}`, `{"_id": 1, "a": 1, "n": [1, 2, 3]}`, `{"_id": 1, "a": 1, "n": [1, 2]}`, -1},
		{`{"n": {"$slice": -2}}`, `{"_id": 1, "n": [1, 2, 3]}`, `{"_id": 1, "n": [2, 3]}`, -1},
		{`{"n": {"$slice": [1, 2]}}`, `{"_id": 1, "n": [1, 2, 3, 4]}`, `{"_id": 1, "n": [2, 3]}`, -1},
		{`{"n": {"$slice": [-3, 2]}}`, `{"_id": 1, "n": [1, 2, 3, 4]}`, `{"_id": 1, "n": [2, 3]}`, -1},
		{`{"n": {"$slice": [10, 2]}}`, `{"_id": 1, "n": [1, 2]}`, `{"_id": 1, "n": []}`, -1},
		{`{"n": {"$slice": 2}, "a": 1}`, `{"_id": 1, "a": 1, "b": 2, "n": [1, 2, 3]}`, `{"_id": 1, "a": 1, "n": [1, 2]}`, -1},
		{`{"n": {"$slice": 2}}`, `{"_id": 1, "n": 7}`, `{"_id": 1, "n": 7}`, -1},
		{`{"arr": {"$elemMatch": {"x": 3}}}`, src, `{"_id": 1, "arr": [{"x": 3, "y": 4}]}`, -1},
		{`{"arr": {"$elemMatch": {"x": 9}}}`, src, `{"_id": 1}`, -1},
		{`{"n": {"$elemMatch": {"$gt": 3}}}`, src, `{"_id": 1, "n": [4]}`, -1},
		{`{"n.$": 1}`, src, `{"_id": 1, "n": [3]}`, 2},
		{`{"arr.$": 1, "a": 1}`, src, `{"_id": 1, "a": 1, "arr": [{"x": 3, "y": 4}]}`, 1},
		{`{"s": {"$add": ["$a", 10]}}`, src, `{"_id": 1, "s": 11}`, -1},
		{`{"s": "$b.c", "a": 1}`, src, `{"_id": 1, "a": 1, "s": 2}`, -1},
		{`{"s": {"$literal": 1}, "_id": 0}`, src, `{"s": 1}`, -1},
		{`{"s": "lit", "_id": 0}`, src, `{"s": "lit"}`, -1},
		{`{"s": "$nope", "_id": 0}`, src, `{}`, -1},
		{`{"_id": {"$literal": "x"}}`, src, `{"_id": "x"}`, -1},
		{`{"q.r": {"$literal": 1}, "_id": 0}`, src, `{"q": {"r": 1}}`, -1},
	}
	for _, tc := range cases {
		p, err := CompileProjection(doc(t, tc.spec), Options{})
		if err != nil {
			t.Errorf("CompileProjection(%s): %v", tc.spec, err)
			continue
		}
		got, err := p.Apply(doc(t, tc.doc), tc.pos)
		if err != nil {
			t.Errorf("Apply(%s, %s): %v", tc.spec, tc.doc, err)
			continue
		}
		if want := doc(t, tc.want); !sameDoc(got, want) {
			t.Errorf("Apply(%s, %s) = %v, want %v", tc.spec, tc.doc, got, want)
		}
	}
}

func TestProjectionErrors(t *testing.T) {
	cases := []struct {
		spec string
		code int32
	}{
		{`{"a": 1, "b": 0}`, 31254},
		{`{"a": 0, "b": 1}`, 31253},
		{`{"a": 0, "b": {"$add": [1, 2]}}`, 31253},
		{`{"a": 1, "a.b": 1}`, 31250},
		{`{"a.b": 1, "a": 1}`, 31250},
		{`{"n": {"$slice": "x"}}`, 2},
		{`{"n": {"$slice": [1, 0]}}`, 2},
		{`{"n": {"$slice": [1]}}`, 2},
		{`{"$a": 1}`, 16410},
		{`{"a.$": 1, "b.$": 1}`, 2},
		{`{"a": {"$meta": "textScore"}}`, 2},
		{`{"a": {}}`, 51270},
		{`{"a": {"$elemMatch": {"b": 1}}, "c": 0}`, 31254},
		{`{"a.b": {"$elemMatch": {"b": 1}}}`, 2},
	}
	for _, tc := range cases {
		_, err := CompileProjection(doc(t, tc.spec), Options{})
		if errCode(err) != tc.code {
			t.Errorf("CompileProjection(%s) err = %v, want code %d", tc.spec, err, tc.code)
		}
	}
	p, err := CompileProjection(doc(t, `{"n.$": 1}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(doc(t, `{"n": [1, 2]}`), -1); errCode(err) != 51246 {
		t.Errorf("positional projection without a match: err = %v, want 51246", err)
	}
}
