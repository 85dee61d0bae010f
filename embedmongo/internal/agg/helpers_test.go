package agg

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// jsonDocs parses a relaxed extended-JSON array of documents.
func jsonDocs(t *testing.T, s string) []bson.D {
	t.Helper()
	if s == "" {
		return nil
	}
	var wrap bson.D
	if err := bson.UnmarshalExtJSON([]byte(`{"x":`+s+`}`), false, &wrap); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	arr, ok := wrap[0].Value.(bson.A)
	if !ok {
		t.Fatalf("test JSON %s is not an array", s)
	}
	out := make([]bson.D, len(arr))
	for i, v := range arr {
		d, ok := v.(bson.D)
		if !ok {
			t.Fatalf("test JSON element %d is not a document", i)
		}
		out[i] = d
	}
	return out
}

// canon renders documents as canonical extended JSON, so types are compared too.
func canon(t *testing.T, docs []bson.D) string {
	t.Helper()
	s := "["
	for i, d := range docs {
		b, err := bson.MarshalExtJSON(d, true, false)
		if err != nil {
			t.Fatalf("marshal %v: %v", d, err)
		}
		if i > 0 {
			s += ","
		}
		s += string(b)
	}
	return s + "]"
}

// pipeCase is one table-driven pipeline test: either want (documents) or code (an error).
type pipeCase struct {
	name  string
	input string
	pipe  string
	want  string
	code  int32
}

func runCases(t *testing.T, cases []pipeCase, opts func() Options) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{DB: "db"}
			if opts != nil {
				o = opts()
			}
			in := jsonDocs(t, tc.input)
			inCopy := canon(t, in)
			got, err := Run(jsonDocs(t, tc.pipe), in, o)
			if tc.code != 0 {
				if err == nil {
					t.Fatalf("want error %d, got %s", tc.code, canon(t, got))
				}
				if e := mongoerr.As(err); e == nil || e.Code != tc.code {
					t.Fatalf("want error code %d, got %v", tc.code, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if g, w := canon(t, got), canon(t, jsonDocs(t, tc.want)); g != w {
				t.Fatalf("\n got %s\nwant %s", g, w)
			}
			if canon(t, in) != inCopy {
				t.Fatalf("input documents were modified")
			}
		})
	}
}
