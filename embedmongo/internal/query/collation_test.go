package query

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/collation"
)

func parseCollation(t *testing.T, spec string) *collation.Collation {
	t.Helper()
	c, err := collation.Parse(doc(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMatchWithCollation(t *testing.T) {
	caseless := parseCollation(t, `{"locale": "en_US", "strength": 2}`)
	cases := []struct {
		filter, doc string
		want        bool
	}{
		{`{"x": "PING"}`, `{"x": "ping"}`, true},
		{`{"x": {"$eq": "PING"}}`, `{"x": ["pong", "Ping"]}`, true},
		{`{"x": {"$in": ["A", "PING"]}}`, `{"x": "ping"}`, true},
		{`{"x": {"$nin": ["PING"]}}`, `{"x": "ping"}`, false},
		{`{"x": {"$ne": "PING"}}`, `{"x": "ping"}`, false},
		{`{"x": {"$gte": "PING", "$lte": "PING"}}`, `{"x": "ping"}`, true},
		{`{"x": {"$gt": "a"}}`, `{"x": "B"}`, true},
		{`{"x": {"y": "A"}}`, `{"x": {"y": "a"}}`, true},
		{`{"x": {"Y": "a"}}`, `{"x": {"y": "a"}}`, false},   // field names stay binary
		{`{"x": {"$regex": "^P"}}`, `{"x": "ping"}`, false}, // regexes ignore collations
		{`{"x": "PING"}`, `{"x": "pong"}`, false},
		{`{"x": 1}`, `{"x": 1.0}`, true},
	}
	for _, tc := range cases {
		m, err := Compile(doc(t, tc.filter), Options{Collation: caseless})
		if err != nil {
			t.Fatalf("Compile(%s): %v", tc.filter, err)
		}
		got, err := m.Match(doc(t, tc.doc))
		if err != nil || got != tc.want {
			t.Errorf("%s on %s = %v, %v; want %v", tc.filter, tc.doc, got, err, tc.want)
		}
	}
	// Without a collation the same filter is binary.
	m, err := Compile(doc(t, `{"x": "PING"}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := m.Match(doc(t, `{"x": "ping"}`)); ok {
		t.Error(`simple collation: {"x": "PING"} matched "ping"`)
	}
}

func TestSortWithCollation(t *testing.T) {
	docs := []string{`{"s": "b"}`, `{"s": "B"}`, `{"s": "a10"}`, `{"s": "A"}`, `{"s": "a2"}`, `{"s": ["c", "Z"]}`}
	cases := []struct {
		collation string // "" = simple
		spec      string
		want      []int
	}{
		{"", `{"s": 1}`, []int{3, 1, 5, 2, 4, 0}},
		{`{"locale": "en", "numericOrdering": true}`, `{"s": 1}`, []int{3, 4, 2, 0, 1, 5}},
		{`{"locale": "en", "strength": 2}`, `{"s": 1}`, []int{3, 2, 4, 0, 1, 5}},
		{`{"locale": "en"}`, `{"s": -1}`, []int{5, 1, 0, 4, 2, 3}},
	}
	for _, tc := range cases {
		var c *collation.Collation
		if tc.collation != "" {
			c = parseCollation(t, tc.collation)
		}
		s, err := CompileSortCollation(doc(t, tc.spec), c)
		if err != nil {
			t.Fatal(err)
		}
		parsed := make([]bson.D, len(docs))
		idx := make([]int, len(docs))
		for i, d := range docs {
			parsed[i], idx[i] = doc(t, d), i
		}
		slices.SortStableFunc(idx, func(x, y int) int { return s.Compare(parsed[x], parsed[y]) })
		if !slices.Equal(idx, tc.want) {
			t.Errorf("collation %s sort %s = %v, want %v", tc.collation, tc.spec, idx, tc.want)
		}
	}
}
