// Package query implements MongoDB's query language: filters, projections and sort orders.
package query

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/collation"
	"github.com/bankd/bankd/embedmongo/internal/expr"
)

// Options carries what a filter may need beyond itself: variables for $expr ($$NOW, let) and
// the collation string comparisons use (nil = simple, binary).
type Options struct {
	Vars      expr.Vars
	Collation *collation.Collation
}

// Matcher is a compiled filter. It is immutable and safe for concurrent use.
type Matcher struct {
	root node
	vars expr.Vars
	sc   bsonkit.StringCompare // nil = binary
}

// Compile parses a filter document; invalid filters give mongod's errors (e.g. BadValue 2).
func Compile(filter bson.D, opts Options) (*Matcher, error) {
	root, err := parseFilter(filter)
	if err != nil {
		return nil, err
	}
	return &Matcher{root: root, vars: opts.Vars, sc: opts.Collation.StringCompare()}, nil
}

// Match reports whether doc satisfies the filter.
func (m *Matcher) Match(doc bson.D) (bool, error) {
	ok, _, err := m.MatchPositional(doc)
	return ok, err
}

// MatchPositional also returns the index of the array element that satisfied the filter on
// the array field, for the positional `$` update and projection operators (-1 when none).
func (m *Matcher) MatchPositional(doc bson.D) (bool, int, error) {
	c := matchCtx{vars: m.vars, pos: -1, sc: m.sc}
	ok := m.root.match(doc, &c)
	if c.err != nil {
		return false, -1, c.err
	}
	if !ok {
		return false, -1, nil
	}
	return true, c.pos, nil
}
