package query

import "testing"

func TestUpsertSeed(t *testing.T) {
	cases := []struct{ filter, want string }{
		{`{}`, `{}`},
		{`{"a": 1}`, `{"a": 1}`},
		{`{"_id": 7, "owner": "x"}`, `{"_id": 7, "owner": "x"}`},
		{`{"a": {"$eq": 1}}`, `{"a": 1}`},
		{`{"a": {"$gt": 1}}`, `{}`},
		{`{"a": {"$gt": 1, "$eq": 3}}`, `{"a": 3}`},
		{`{"a": {"$in": [4]}}`, `{"a": 4}`},
		{`{"a": {"$in": [4, 5]}}`, `{}`},
		{`{"a.b": 1, "a.c": 2}`, `{"a": {"b": 1, "c": 2}}`},
		{`{"a.b.c": 1}`, `{"a": {"b": {"c": 1}}}`},
		{`{"$and": [{"a": 1}, {"b": {"$eq": 2}}]}`, `{"a": 1, "b": 2}`},
		{`{"$or": [{"a": 1}]}`, `{"a": 1}`},
		{`{"$or": [{"a": 1}, {"a": 2}]}`, `{}`},
		{`{"_id": 1, "$or": [{"lockOwner": null}, {"$expr": {"$lt": ["$t", 1]}}]}`, `{"_id": 1}`},
		{`{"a": null}`, `{"a": null}`},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1}}`},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`},
		{`{"a": {"$regularExpression": {"pattern": "x", "options": ""}}}`, `{}`},
		{`{"a": {"$exists": true}, "b": 2}`, `{"b": 2}`},
		{`{"$expr": {"$eq": ["$a", 1]}, "b": 2}`, `{"b": 2}`},
	}
	for _, tc := range cases {
		got, err := UpsertSeed(doc(t, tc.filter))
		if err != nil {
			t.Errorf("UpsertSeed(%s): %v", tc.filter, err)
			continue
		}
		if want := doc(t, tc.want); !sameDoc(got, want) {
			t.Errorf("UpsertSeed(%s) = %v, want %v", tc.filter, got, want)
		}
	}
	for _, f := range []string{
		`{"a": 1, "$and": [{"a": 2}]}`,
		`{"a": {"b": 1}, "a.c": 2}`,
		`{"a.b": 1, "a": {"$eq": 2}}`,
	} {
		if _, err := UpsertSeed(doc(t, f)); errCode(err) != 54 {
			t.Errorf("UpsertSeed(%s) err = %v, want NotSingleValueField", f, err)
		}
	}
}
