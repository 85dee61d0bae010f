package agg

import (
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
)

// groupTable assigns values to groups by MongoDB equality (bsonkit.Compare == 0, so 1, 1.0
// and NumberLong(1) are one group). Values are hashed by a coarse key that equal values
// always share; the rare coarse collisions are told apart by Compare.
type groupTable struct {
	buckets map[string][]int
	keys    []any
	coll    *collation.Collation // string equality; nil = binary
}

// index returns the group of v, creating it (created=true) when v is new.
func (t *groupTable) index(v any) (i int, created bool) {
	if t.buckets == nil {
		t.buckets = map[string][]int{}
	}
	var sb strings.Builder
	coarseKey(&sb, v, t.coll)
	k := sb.String()
	for _, i := range t.buckets[k] {
		if t.coll.Compare(t.keys[i], v) == 0 {
			return i, false
		}
	}
	t.keys = append(t.keys, v)
	t.buckets[k] = append(t.buckets[k], len(t.keys)-1)
	return len(t.keys) - 1, true
}

// keyedSet is a set of values under MongoDB equality ($addToSet).
type keyedSet struct{ t groupTable }

// insert adds v and reports whether it was not already present.
func (s *keyedSet) insert(v any) bool {
	_, created := s.t.index(v)
	return created
}

// coarseKey writes a key such that Compare-equal values get equal keys.
func coarseKey(sb *strings.Builder, v any, coll *collation.Collation) {
	sb.WriteString(strconv.Itoa(bsonkit.CanonicalType(v)))
	sb.WriteByte(':')
	switch x := v.(type) {
	case bson.D:
		sb.WriteByte('{')
		for _, e := range x {
			sb.WriteString(strconv.Quote(e.Key))
			coarseKey(sb, e.Value, coll)
			sb.WriteByte(',')
		}
		sb.WriteByte('}')
	case bson.A:
		sb.WriteByte('[')
		for _, e := range x {
			coarseKey(sb, e, coll)
			sb.WriteByte(',')
		}
		sb.WriteByte(']')
	case string:
		sb.WriteString(strconv.Quote(coll.Key(x)))
	case nil, bson.Null, bson.Undefined:
	default:
		if f, ok := bsonkit.ToFloat64(v); ok {
			switch {
			case math.IsNaN(f):
				sb.WriteString("NaN")
			case f == 0:
				sb.WriteString("0")
			default:
				sb.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
			return
		}
		sb.WriteString(fmtValue(v))
	}
}
