package update

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// d parses relaxed extended JSON into a document (small integers become int32, as the
// shell's NumberInt would; use {"$numberLong": "1"} for int64).
func d(t testing.TB, s string) bson.D {
	t.Helper()
	var out bson.D
	if err := bson.UnmarshalExtJSON([]byte(s), false, &out); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return out
}

func js(v any) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
	if err != nil {
		return formatValue(v)
	}
	return string(b)
}

// updateCase is one table row: apply upd to doc and expect want (extended JSON) or an error
// with code (and, when msg is set, that exact message).
type updateCase struct {
	name     string
	doc      string
	upd      string
	filters  []string
	matchPos int
	insert   bool
	want     string
	code     int32
	msg      string
	noop     bool // expect ApplyChanged to report no change
}

func runCases(t *testing.T, cases []updateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := d(t, tc.doc)
			before := bsonkit.CopyDoc(doc)
			var opts Options
			for _, f := range tc.filters {
				opts.ArrayFilters = append(opts.ArrayFilters, d(t, f))
			}
			matchPos := tc.matchPos
			if matchPos == 0 {
				matchPos = -1
			} else if matchPos == -100 {
				matchPos = 0
			}
			u, err := Compile(d(t, tc.upd), opts)
			var got bson.D
			changed := false
			if err == nil {
				got, changed, err = u.ApplyChanged(doc, matchPos, tc.insert)
			}
			if tc.code != 0 {
				if err == nil {
					t.Fatalf("want error %d, got %s", tc.code, js(got))
				}
				e := mongoerr.As(err)
				if e.Code != tc.code {
					t.Fatalf("want code %d, got %v", tc.code, err)
				}
				if tc.msg != "" && e.Msg != tc.msg {
					t.Fatalf("message:\n got %q\nwant %q", e.Msg, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := d(t, tc.want)
			if !identical(got, want) {
				t.Fatalf("got  %s\nwant %s", js(got), js(want))
			}
			if tc.noop && changed {
				t.Fatalf("expected no change")
			}
			if !tc.noop && changed == identical(doc, got) {
				t.Fatalf("changed=%v but result identical=%v", changed, identical(doc, got))
			}
			if !identical(doc, before) {
				t.Fatalf("input document was mutated: %s", js(doc))
			}
		})
	}
}
