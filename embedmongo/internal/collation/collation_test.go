package collation

import (
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func mustParse(t *testing.T, spec string) *Collation {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(spec), false, &d); err != nil {
		t.Fatalf("bad JSON %s: %v", spec, err)
	}
	c, err := Parse(d)
	if err != nil {
		t.Fatalf("Parse(%s): %v", spec, err)
	}
	return c
}

func TestCompareStrings(t *testing.T) {
	cases := []struct {
		spec string
		a, b string
		want int
	}{
		{`{"locale": "en_US", "strength": 2}`, "ping", "PING", 0},
		{`{"locale": "en_US", "strength": 2}`, "cote", "côte", -1},
		{`{"locale": "en_US", "strength": 1}`, "cote", "Côte", 0},
		{`{"locale": "en_US"}`, "ping", "PING", -1}, // tertiary: lower case first
		{`{"locale": "en_US", "caseFirst": "upper"}`, "ping", "PING", 1},
		{`{"locale": "en_US", "caseFirst": "upper"}`, "a", "B", -1}, // case never beats letters
		{`{"locale": "en", "strength": 1, "caseLevel": true}`, "cote", "côte", 0},
		{`{"locale": "en", "strength": 1, "caseLevel": true}`, "cote", "Cote", -1},
		{`{"locale": "en"}`, "a10", "a2", -1},
		{`{"locale": "en", "numericOrdering": true}`, "a10", "a2", 1},
		{`{"locale": "en", "numericOrdering": true}`, "a02", "a2", 0},
		{`{"locale": "en", "alternate": "shifted"}`, "a-b", "ab", 0},
		{`{"locale": "en"}`, "a-b", "ab", -1},
		{`{"locale": "fr_CA"}`, "côte", "coté", -1}, // accents compared from the end
		{`{"locale": "fr"}`, "côte", "coté", 1},
		{`{"locale": "en", "strength": 5}`, "a", "a", 0},
		{`{"locale": "en"}`, "b", "a", 1},
	}
	for _, tc := range cases {
		c := mustParse(t, tc.spec)
		if got := c.CompareStrings(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: compare(%q, %q) = %d, want %d", tc.spec, tc.a, tc.b, got, tc.want)
		}
		if got := c.Key(tc.a) == c.Key(tc.b); got != (tc.want == 0) {
			t.Errorf("%s: Key(%q) == Key(%q) is %v, want %v", tc.spec, tc.a, tc.b, got, tc.want == 0)
		}
	}
}

func TestCompareValues(t *testing.T) {
	c := mustParse(t, `{"locale": "en", "strength": 2}`)
	a := bson.D{{Key: "x", Value: bson.A{"PING", int32(1)}}}
	b := bson.D{{Key: "x", Value: bson.A{"ping", 1.0}}}
	if got := c.Compare(a, b); got != 0 {
		t.Errorf("nested strings under strength 2: Compare = %d, want 0", got)
	}
	// Field names are never collated.
	if got := c.Compare(bson.D{{Key: "X", Value: 1}}, bson.D{{Key: "x", Value: 1}}); got == 0 {
		t.Error("field names compared by collation, want binary")
	}
	var simple *Collation
	if got := simple.Compare("a", "B"); got != 1 {
		t.Errorf("simple Compare(a, B) = %d, want 1 (binary)", got)
	}
}

func TestParse(t *testing.T) {
	if c := mustParse(t, `{"locale": "simple"}`); c != nil {
		t.Errorf("simple locale: got %v, want nil", c.Spec())
	}
	c := mustParse(t, `{"locale": "en_US", "strength": 2}`)
	want := `{"locale": "en_US","caseLevel": false,"caseFirst": "off","strength": 2,"numericOrdering": false,"alternate": "non-ignorable","maxVariable": "punct","normalization": false,"backwards": false,"version": "57.1"}`
	got, _ := bson.MarshalExtJSON(c.Spec(), false, false)
	var wantD bson.D
	_ = bson.UnmarshalExtJSON([]byte(want), false, &wantD)
	wantJSON, _ := bson.MarshalExtJSON(wantD, false, false)
	if string(got) != string(wantJSON) {
		t.Errorf("normalized spec = %s, want %s", got, wantJSON)
	}
	if mustParse(t, `{"locale": "en_US", "strength": 2}`) != c {
		t.Error("equal specs should share one cached collation")
	}

	errs := []struct {
		spec string
		code int32
	}{
		{`{"strength": 2}`, 40414},
		{`{"locale": "en", "foo": 1}`, 40415},
		{`{"locale": "en", "strength": 6}`, mongoerr.FailedToParse},
		{`{"locale": "en", "strength": "2"}`, mongoerr.TypeMismatch},
		{`{"locale": "en", "caseFirst": "middle"}`, mongoerr.FailedToParse},
		{`{"locale": "en", "alternate": "x"}`, mongoerr.FailedToParse},
		{`{"locale": "xx_YY"}`, mongoerr.BadValue},
		{`{"locale": ""}`, mongoerr.BadValue},
		{`{"locale": "simple", "strength": 2}`, mongoerr.BadValue},
		{`{"locale": "en", "version": "1.0"}`, 254},
	}
	for _, tc := range errs {
		var d bson.D
		if err := bson.UnmarshalExtJSON([]byte(tc.spec), false, &d); err != nil {
			t.Fatal(err)
		}
		_, err := Parse(d)
		if err == nil || mongoerr.As(err).Code != tc.code {
			t.Errorf("Parse(%s) = %v, want code %d", tc.spec, err, tc.code)
		}
	}
	if _, err := Parse("en"); err == nil || mongoerr.As(err).Code != mongoerr.TypeMismatch {
		t.Errorf("Parse(string) = %v, want TypeMismatch", err)
	}
}

// TestConcurrentUse checks a shared collation is safe across goroutines (x/text collators are
// not, so each comparison borrows its own).
func TestConcurrentUse(t *testing.T) {
	c := mustParse(t, `{"locale": "de", "strength": 1}`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if c.CompareStrings("Ärger", "arger") != 0 || c.CompareStrings("b", "a") != 1 {
					t.Error("strength 1: want Ärger = arger and b > a")
					return
				}
			}
		}()
	}
	wg.Wait()
}
