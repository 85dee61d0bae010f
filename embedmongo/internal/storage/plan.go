package storage

import (
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

// pred is what the top level of a filter requires of one field. Every condition of a filter's
// top level (and of a top-level $and) must hold, so any one of them narrows the candidates.
type pred struct {
	eq     []any // equality / $in values: the field equals (or has an element equal to) one
	hasEq  bool
	lo, hi *bound
}

type bound struct {
	v    any
	incl bool
}

// Type brackets (bsonkit.CanonicalType) where a range scan over index keys is exact.
var rangeBrackets = map[int]any{
	10: math.NaN(),                   // numbers: NaN sorts first
	15: "",                           // strings
	30: bson.Binary{},                // binData: shortest first
	35: bson.ObjectID{},              // ObjectId
	40: false,                        // bool
	45: bson.DateTime(math.MinInt64), // date
	47: bson.Timestamp{},             // timestamp
}

// analyse collects per-field predicates from filter's top level.
func analyse(filter bson.D, preds map[string]*pred) {
	for _, e := range filter {
		if strings.HasPrefix(e.Key, "$") {
			if e.Key == "$and" {
				if arr, ok := e.Value.(bson.A); ok {
					for _, sub := range arr {
						if d, ok := sub.(bson.D); ok {
							analyse(d, preds)
						}
					}
				}
			}
			continue // $or, $nor, $expr...: ignoring an ANDed condition only widens the candidates
		}
		p := preds[e.Key]
		if p == nil {
			p = &pred{}
			preds[e.Key] = p
		}
		ops, isOps := e.Value.(bson.D)
		if !isOps || len(ops) == 0 || !strings.HasPrefix(ops[0].Key, "$") {
			p.addEq([]any{e.Value})
			continue
		}
		for _, op := range ops {
			switch op.Key {
			case "$eq":
				p.addEq([]any{op.Value})
			case "$in":
				if arr, ok := op.Value.(bson.A); ok {
					p.addEq(arr)
				}
			case "$gt", "$gte":
				if _, ok := rangeBrackets[bsonkit.CanonicalType(op.Value)]; ok && p.lo == nil {
					p.lo = &bound{v: op.Value, incl: op.Key == "$gte"}
				}
			case "$lt", "$lte":
				if _, ok := rangeBrackets[bsonkit.CanonicalType(op.Value)]; ok && p.hi == nil {
					p.hi = &bound{v: op.Value, incl: op.Key == "$lte"}
				}
			}
		}
	}
}

// addEq records an equality set when every value can be looked up exactly: null matches
// missing fields and regexes match patterns, so they are left to a scan.
func (p *pred) addEq(vals []any) {
	if p.hasEq {
		return
	}
	for _, v := range vals {
		switch v.(type) {
		case nil, bson.Null, bson.Undefined, bson.Regex, bson.MinKey, bson.MaxKey, bsonkit.MissingType:
			return
		case bson.D:
			if d := v.(bson.D); len(d) > 0 && strings.HasPrefix(d[0].Key, "$") {
				return // an operator document inside $in is invalid anyway
			}
		}
	}
	p.eq, p.hasEq = vals, true
}

// candidates returns the record ids, in natural order, that an index says may match filter,
// or false when no index applies and every document must be scanned. The set is a superset
// of the matches: the caller confirms each one.
func (c *Collection) candidates(filter bson.D) ([]RecordID, bool) {
	if len(filter) == 0 || len(c.indexes) == 0 {
		return nil, false
	}
	preds := map[string]*pred{}
	analyse(filter, preds)
	if len(preds) == 0 {
		return nil, false
	}
	var best *index
	var bestPred *pred
	bestRank := 0
	for i, ix := range c.indexes {
		if ix.partial != nil {
			continue // holds only the documents its filter selects
		}
		p := preds[ix.field(0)]
		if p == nil || (!p.hasEq && p.lo == nil && p.hi == nil) {
			continue
		}
		rank := 1
		if p.hasEq {
			rank = 4
		}
		switch {
		case i == 0:
			rank += 2
		case ix.spec.Unique:
			rank++
		}
		if rank > bestRank {
			best, bestPred, bestRank = ix, p, rank
		}
	}
	if best == nil {
		return nil, false
	}
	var ids []RecordID
	if bestPred.hasEq {
		for _, v := range bestPred.eq {
			ids = best.lookupEq(v, ids)
		}
	} else {
		lo, hi := bestPred.lo, bestPred.hi
		// On a multikey index different elements may satisfy different bounds ({$gt: 5,
		// $lt: 3} matches [1, 9]), and bounds of different brackets never meet: use one.
		if lo != nil && hi != nil &&
			(best.multikey || bsonkit.CanonicalType(lo.v) != bsonkit.CanonicalType(hi.v)) {
			hi = nil
		}
		ids = best.lookupRange(lo, hi, ids)
	}
	slices.Sort(ids)
	return slices.Compact(ids), true
}

// lookupEq appends the ids of entries whose first key value equals v and, for a non-empty
// array, of those whose first key value is its first element: a document whose field is the
// array v is indexed by its elements, as in mongod (and one whose field holds v as an element
// by v itself).
func (ix *index) lookupEq(v any, ids []RecordID) []RecordID {
	if a, ok := v.(bson.A); ok && len(a) > 0 {
		ids = ix.lookupEqTree(a[0], ids)
	}
	if ix.byString != nil {
		if s, ok := bsonkit.StringContent(v); ok {
			if id, found := ix.byString[s]; found {
				ids = append(ids, id)
			}
			return ids
		}
	}
	return ix.lookupEqTree(v, ids)
}

// lookupEqTree is lookupEq by a search of the tree.
func (ix *index) lookupEqTree(v any, ids []RecordID) []RecordID {
	ix.tree.AscendGreaterOrEqual(pivot(v), func(e entry) bool {
		if bsonkit.Compare(keyAt(e.key, 0), v) != 0 {
			return false
		}
		ids = append(ids, e.id)
		return true
	})
	return ids
}

// lookupRange appends the ids of entries whose first key value lies within the bounds (both
// of the same type bracket when both are given).
func (ix *index) lookupRange(lo, hi *bound, ids []RecordID) []RecordID {
	var bracket int
	var start any
	if lo != nil {
		bracket, start = bsonkit.CanonicalType(lo.v), lo.v
	} else {
		bracket = bsonkit.CanonicalType(hi.v)
		start = rangeBrackets[bracket]
	}
	ix.tree.AscendGreaterOrEqual(pivot(start), func(e entry) bool {
		v := keyAt(e.key, 0)
		if bsonkit.CanonicalType(v) != bracket {
			return false
		}
		if hi != nil {
			if c := bsonkit.Compare(v, hi.v); c > 0 || (c == 0 && !hi.incl) {
				return false
			}
		}
		if lo != nil && !lo.incl && bsonkit.Compare(v, lo.v) == 0 {
			return true
		}
		ids = append(ids, e.id)
		return true
	})
	return ids
}
