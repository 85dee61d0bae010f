package expr

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// ej parses relaxed extended JSON into a value (5 → int32, 5.5 → double, {"$date": ...}).
func ej(t testing.TB, s string) any {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(`{"v":`+s+`}`), false, &d); err != nil {
		t.Fatalf("bad ext JSON %s: %v", s, err)
	}
	return d[0].Value
}

func ejDoc(t testing.TB, s string) bson.D {
	t.Helper()
	if s == "" {
		return bson.D{}
	}
	d, ok := ej(t, s).(bson.D)
	if !ok {
		t.Fatalf("not a document: %s", s)
	}
	return d
}

// canon renders a value as canonical extended JSON so types are compared too.
func canon(v any) string {
	if bsonkit.IsMissing(v) {
		return "MISSING"
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
	if err != nil {
		return "UNMARSHALABLE: " + err.Error()
	}
	return string(b)
}

// evalCase is one table row: expression and document in extended JSON, and either the
// expected result (extended JSON, or "MISSING") or the expected error code.
type evalCase struct {
	expr string
	doc  string
	want string
	code int32
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			got, err := Eval(ej(t, tc.expr), ejDoc(t, tc.doc), nil)
			if tc.code != 0 {
				if !mongoerr.Is(err, tc.code) {
					t.Fatalf("want error %d, got %v (value %s)", tc.code, err, canon(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := "MISSING"
			if tc.want != "MISSING" {
				want = canon(ej(t, tc.want))
			}
			if g := canon(got); g != want {
				t.Fatalf("got %s, want %s", g, want)
			}
		})
	}
}
