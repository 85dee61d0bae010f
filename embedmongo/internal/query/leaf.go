package query

import (
	"math"
	"regexp"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

type cmpOp int

const (
	opEQ cmpOp = iota
	opLT
	opLTE
	opGT
	opGTE
)

// cmpLeaf is $eq/$lt/$lte/$gt/$gte (and implicit equality): it only matches values in the
// operand's canonical type bracket, so {$gt: 5} never matches a string.
type cmpLeaf struct {
	op  cmpOp
	rhs any
}

func (l *cmpLeaf) matchValue(v any, c *matchCtx) bool { return compareMatch(l.op, v, l.rhs, c.sc) }

// compareMatch applies op to v and rhs; sc orders strings (nil = binary).
func compareMatch(op cmpOp, v, rhs any, sc bsonkit.StringCompare) bool {
	if rhs == nil {
		// null equality also matches missing fields ({a: null}, $lte/$gte null).
		if _, isNull := v.(bson.Null); v == nil || isNull || bsonkit.IsMissing(v) {
			return op == opEQ || op == opLTE || op == opGTE
		}
		return false
	}
	ct, cr := bsonkit.CanonicalType(v), bsonkit.CanonicalType(rhs)
	if ct != cr {
		if bsonkit.IsMissing(v) {
			return false
		}
		// MinKey and MaxKey bound every other value.
		switch rhs.(type) {
		case bson.MinKey:
			return op == opGT || op == opGTE
		case bson.MaxKey:
			return op == opLT || op == opLTE
		}
		return false
	}
	if ct == 10 && (isNaN(v) || isNaN(rhs)) {
		// NaN equals NaN but is neither less nor greater than anything.
		both := isNaN(v) && isNaN(rhs)
		return both && (op == opEQ || op == opLTE || op == opGTE)
	}
	c := bsonkit.CompareWith(v, rhs, sc)
	switch op {
	case opEQ:
		return c == 0
	case opLT:
		return c < 0
	case opLTE:
		return c <= 0
	case opGT:
		return c > 0
	default:
		return c >= 0
	}
}

func isNaN(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x)
	case bson.Decimal128:
		return x.IsNaN()
	}
	return false
}

// inLeaf is $in: equality with any listed value, or a match of any listed regex.
type inLeaf struct {
	vals    []any
	regexes []*regexLeaf
	// strs holds the listed strings and symbols by content, others the other values: under
	// the simple collation a string is looked up rather than compared with each value, as a
	// batch's {_id: {$in: [...]}} over its documents would otherwise be quadratic.
	strs   map[string]bool
	others []any
}

// minInSet is the list length from which $in looks strings up in a set.
const minInSet = 8

func newInLeaf(vals []any, regexes []*regexLeaf) *inLeaf {
	l := &inLeaf{vals: vals, regexes: regexes}
	if len(vals) >= minInSet {
		l.strs = map[string]bool{}
		for _, x := range vals {
			if s, ok := bsonkit.StringContent(x); ok {
				l.strs[s] = true
			} else {
				l.others = append(l.others, x)
			}
		}
	}
	return l
}

func (l *inLeaf) matchValue(v any, c *matchCtx) bool {
	vals := l.vals
	if l.strs != nil && c.sc == nil {
		// A string equals only a string or symbol of the same content.
		if s, ok := bsonkit.StringContent(v); ok && l.strs[s] {
			return true
		}
		vals = l.others
	}
	for _, x := range vals {
		if compareMatch(opEQ, v, x, c.sc) {
			return true
		}
	}
	for _, r := range l.regexes {
		if r.matchValue(v, c) {
			return true
		}
	}
	return false
}

type existsLeaf struct{}

func (existsLeaf) matchValue(v any, _ *matchCtx) bool { return !bsonkit.IsMissing(v) }

// typeLeaf is $type with one or more BSON type codes; number matches any numeric type.
type typeLeaf struct {
	codes  []int
	number bool
}

func (l *typeLeaf) matchValue(v any, _ *matchCtx) bool {
	if bsonkit.IsMissing(v) {
		return false
	}
	if l.number && bsonkit.IsNumber(v) {
		return true
	}
	code := bsonkit.TypeCode(v)
	if _, ok := v.(bson.Null); ok {
		code = bsonkit.TypeNull
	}
	for _, c := range l.codes {
		if c == code {
			return true
		}
	}
	return false
}

// sizeLeaf is $size: the field is an array of exactly n elements.
type sizeLeaf struct{ n int64 }

func (sizeLeaf) wholeArray() {}

func (l sizeLeaf) matchValue(v any, _ *matchCtx) bool {
	arr, ok := v.(bson.A)
	return ok && int64(len(arr)) == l.n
}

// modLeaf is $mod: numeric values whose truncated value has the given remainder.
type modLeaf struct{ divisor, remainder int64 }

func (l modLeaf) matchValue(v any, _ *matchCtx) bool {
	if !bsonkit.IsNumber(v) {
		return false
	}
	n, ok := truncToInt64(v)
	if !ok {
		return false
	}
	if l.divisor == -1 {
		return l.remainder == 0 // avoids MinInt64 % -1 overflow
	}
	return n%l.divisor == l.remainder
}

// truncToInt64 truncates a number toward zero; NaN and infinities fail.
func truncToInt64(v any) (int64, bool) {
	f, ok := bsonkit.ToFloat64(v)
	if !ok {
		return 0, false
	}
	switch v.(type) {
	case int32, int64, int:
		i, _ := bsonkit.ToInt64Exact(v)
		return i, true
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	f = math.Trunc(f)
	if f >= 9.223372036854775807e18 {
		return math.MaxInt64, true
	}
	if f <= -9.223372036854775808e18 {
		return math.MinInt64, true
	}
	return int64(f), true
}

// regexLeaf matches strings and symbols by the pattern, and regex values that are identical.
type regexLeaf struct {
	re      *regexp.Regexp
	pattern string
	options string
}

func (l *regexLeaf) matchValue(v any, _ *matchCtx) bool {
	switch x := v.(type) {
	case string:
		return l.re.MatchString(x)
	case bson.Symbol:
		return l.re.MatchString(string(x))
	case bson.Regex:
		return x.Pattern == l.pattern && x.Options == l.options
	}
	return false
}

// elemMatchObjLeaf is $elemMatch with a query document: some element is a document that
// matches the whole query.
type elemMatchObjLeaf struct{ sub node }

func (elemMatchObjLeaf) wholeArray() {}

func (l elemMatchObjLeaf) matchValue(v any, c *matchCtx) bool {
	arr, ok := v.(bson.A)
	if !ok {
		return false
	}
	saved := c.pos
	for j, e := range arr {
		d, ok := e.(bson.D)
		if !ok {
			continue
		}
		matched := l.sub.match(d, c)
		c.pos = saved
		if c.err != nil {
			return false
		}
		if matched {
			c.elemIdx = j
			return true
		}
	}
	return false
}

// elemMatchValueLeaf is $elemMatch with operators: some element satisfies all of them
// (each applied to the element itself, without further array expansion).
type elemMatchValueLeaf struct{ preds []leaf }

func (elemMatchValueLeaf) wholeArray() {}

func (l elemMatchValueLeaf) matchValue(v any, c *matchCtx) bool {
	arr, ok := v.(bson.A)
	if !ok {
		return false
	}
	saved := c.pos
	for j, e := range arr {
		all := true
		for _, p := range l.preds {
			if !p.matchValue(e, c) {
				all = false
				break
			}
		}
		c.pos = saved
		if c.err != nil {
			return false
		}
		if all {
			c.elemIdx = j
			return true
		}
	}
	return false
}

// notLeaf negates a leaf inside $elemMatch's value form ({$elemMatch: {$not: {$gt: 5}}}).
type notLeaf struct{ l leaf }

func (n notLeaf) matchValue(v any, c *matchCtx) bool { return !n.l.matchValue(v, c) }

// andLeaf combines several operators on the same value (inside $elemMatch / $not).
type andLeaf []leaf

func (a andLeaf) matchValue(v any, c *matchCtx) bool {
	for _, l := range a {
		if !l.matchValue(v, c) {
			return false
		}
	}
	return true
}
