package query

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestSortOrder(t *testing.T) {
	cases := []struct {
		spec string
		docs []string // input order
		want []int    // indexes into docs, sorted (stable)
	}{
		{`{"a": 1}`, []string{`{"a": 3}`, `{"a": 1}`, `{"a": 2}`}, []int{1, 2, 0}},
		{`{"a": -1}`, []string{`{"a": 3}`, `{"a": 1}`, `{"a": 2}`}, []int{0, 2, 1}},
		{`{"a": 1}`, []string{`{"a": "x"}`, `{"a": 1}`, `{}`, `{"a": null}`, `{"a": {"$minKey": 1}}`}, []int{4, 2, 3, 1, 0}},
		{`{"a": 1}`, []string{`{"a": [5, 1]}`, `{"a": 2}`}, []int{0, 1}},
		{`{"a": -1}`, []string{`{"a": [5, 1]}`, `{"a": 6}`, `{"a": 2}`}, []int{1, 0, 2}},
		{`{"a": 1}`, []string{`{"a": null}`, `{"a": []}`}, []int{1, 0}},
		{`{"a": 1, "b": -1}`, []string{`{"a": 1, "b": 1}`, `{"a": 1, "b": 2}`, `{"a": 0, "b": 0}`}, []int{2, 1, 0}},
		{`{"a.b": 1}`, []string{`{"a": [{"b": 9}, {"b": 4}]}`, `{"a": {"b": 5}}`}, []int{0, 1}},
		{`{"a": 1}`, []string{`{"a": 1, "i": 0}`, `{"a": 1.0, "i": 1}`, `{"a": {"$numberLong": "1"}, "i": 2}`}, []int{0, 1, 2}},
		{`{}`, []string{`{"a": 2}`, `{"a": 1}`}, []int{0, 1}},
		{`{"a": 1.0}`, []string{`{"a": 2}`, `{"a": 1}`}, []int{1, 0}},
	}
	for _, tc := range cases {
		s, err := CompileSort(doc(t, tc.spec))
		if err != nil {
			t.Fatalf("CompileSort(%s): %v", tc.spec, err)
		}
		docs := make([]bson.D, len(tc.docs))
		idx := make([]int, len(tc.docs))
		for i, d := range tc.docs {
			docs[i] = doc(t, d)
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int { return s.Compare(docs[x], docs[y]) })
		if !slices.Equal(idx, tc.want) {
			t.Errorf("sort %s of %v = %v, want %v", tc.spec, tc.docs, idx, tc.want)
		}
		keyed := slices.Clone(tc.want)
		slices.Sort(keyed)
		keys := make([][]any, len(docs))
		for i := range docs {
			keys[i] = s.Keys(docs[i])
		}
		slices.SortStableFunc(keyed, func(x, y int) int { return s.CompareKeys(keys[x], keys[y]) })
		if !slices.Equal(keyed, tc.want) {
			t.Errorf("sort by Keys %s of %v = %v, want %v", tc.spec, tc.docs, keyed, tc.want)
		}
	}
}

func TestSortErrors(t *testing.T) {
	for _, tc := range []struct {
		spec string
		code int32
	}{
		{`{"a": 2}`, 15975},
		{`{"a": 0}`, 15975},
		{`{"a": "x"}`, 15974},
		{`{"a": {"$meta": "textScore"}}`, 2},
		{`{"": 1}`, 2},
	} {
		if _, err := CompileSort(doc(t, tc.spec)); errCode(err) != tc.code {
			t.Errorf("CompileSort(%s) err = %v, want code %d", tc.spec, err, tc.code)
		}
	}
}
