package query

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Sort is a compiled sort specification. It is immutable and safe for concurrent use.
type Sort struct {
	keys []sortKey
	sc   bsonkit.StringCompare // collation string order; nil = binary
}

type sortKey struct {
	path  string
	parts []string
	desc  bool
}

// CompileSort parses a sort document ({a: 1, b: -1}). An empty spec orders nothing.
func CompileSort(spec bson.D) (*Sort, error) { return CompileSortCollation(spec, nil) }

// CompileSortCollation is CompileSort ordering strings by a collation (nil = simple).
func CompileSortCollation(spec bson.D, coll *collation.Collation) (*Sort, error) {
	s := &Sort{keys: make([]sortKey, 0, len(spec)), sc: coll.StringCompare()}
	for _, e := range spec {
		if e.Key == "" {
			return nil, badValue("FieldPath cannot be constructed with empty string")
		}
		if d, ok := e.Value.(bson.D); ok && len(d) > 0 && d[0].Key == "$meta" {
			return nil, badValue("$meta sort is not supported by this server")
		}
		if !bsonkit.IsNumber(e.Value) {
			return nil, mongoerr.New(15974, "Illegal key in $sort specification: %s: %s", e.Key, fmtValue(e.Value))
		}
		f, _ := bsonkit.ToFloat64(e.Value)
		if f != 1 && f != -1 {
			return nil, mongoerr.New(15975, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
		s.keys = append(s.keys, sortKey{path: e.Key, parts: splitPath(e.Key), desc: f == -1})
	}
	return s, nil
}

func fmtValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// Compare orders two documents by the sort specification (-1, 0, +1). Ties are 0: callers
// use a stable sort to keep input order.
func (s *Sort) Compare(a, b bson.D) int {
	for _, k := range s.keys {
		ka := extremum(a, k.parts, k.desc, s.sc)
		kb := extremum(b, k.parts, k.desc, s.sc)
		if c := bsonkit.CompareWith(ka, kb, s.sc); c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// Keys extracts doc's sort key values once, for callers that sort many documents
// (compare them with CompareKeys).
func (s *Sort) Keys(doc bson.D) []any {
	out := make([]any, len(s.keys))
	for i, k := range s.keys {
		out[i] = extremum(doc, k.parts, k.desc, s.sc)
	}
	return out
}

// CompareKeys orders two key slices produced by Keys.
func (s *Sort) CompareKeys(a, b []any) int {
	for i, k := range s.keys {
		if c := bsonkit.CompareWith(a[i], b[i], s.sc); c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// emptyArrayKey is the sort key of an empty array: below null and missing, as in mongod.
var emptyArrayKey = bson.Undefined{}

// extremum returns the sort key at path: with arrays along the path, the smallest value for
// an ascending sort and the largest for a descending one; missing sorts as null.
func extremum(v any, parts []string, desc bool, sc bsonkit.StringCompare) any {
	if len(parts) == 0 {
		arr, ok := v.(bson.A)
		if !ok {
			return v
		}
		if len(arr) == 0 {
			return emptyArrayKey
		}
		best := arr[0]
		for _, e := range arr[1:] {
			if better(e, best, desc, sc) {
				best = e
			}
		}
		return best
	}
	switch x := v.(type) {
	case bson.D:
		child, ok := bsonkit.Get(x, parts[0])
		if !ok {
			return nil
		}
		return extremum(child, parts[1:], desc, sc)
	case bson.A:
		var best any
		found := false
		consider := func(c any) {
			if !found || better(c, best, desc, sc) {
				best, found = c, true
			}
		}
		if idx, ok := bsonkit.ArrayIndex(parts[0]); ok && idx < len(x) {
			consider(extremum(x[idx], parts[1:], desc, sc))
		}
		for _, e := range x {
			if d, ok := e.(bson.D); ok {
				consider(extremum(d, parts, desc, sc))
			} else {
				consider(nil)
			}
		}
		if !found {
			return nil
		}
		return best
	}
	return nil
}

func better(c, best any, desc bool, sc bsonkit.StringCompare) bool {
	r := bsonkit.CompareWith(c, best, sc)
	if desc {
		return r > 0
	}
	return r < 0
}
