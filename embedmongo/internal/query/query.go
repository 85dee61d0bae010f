// Package query implements MongoDB's query language: filters, projections and sort orders.
package query

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Options carries what a filter may need beyond itself: variables for $expr ($$NOW, let).
type Options struct {
	Vars expr.Vars
}

// Matcher is a compiled filter.
type Matcher struct{}

// Compile parses a filter document; invalid filters give mongod's errors (e.g. BadValue 2).
func Compile(filter bson.D, opts Options) (*Matcher, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "query: not implemented yet")
}

// Match reports whether doc satisfies the filter.
func (m *Matcher) Match(doc bson.D) (bool, error) {
	ok, _, err := m.MatchPositional(doc)
	return ok, err
}

// MatchPositional also returns the index of the array element that satisfied the filter on
// the array field, for the positional `$` update and projection operators (-1 when none).
func (m *Matcher) MatchPositional(doc bson.D) (bool, int, error) { return false, -1, nil }

// Projection is a compiled find projection.
type Projection struct{}

// CompileProjection parses a find/findAndModify projection.
func CompileProjection(spec bson.D, opts Options) (*Projection, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "projection: not implemented yet")
}

// Apply projects doc; matchPos is the positional index from MatchPositional (for `field.$`).
func (p *Projection) Apply(doc bson.D, matchPos int) (bson.D, error) { return doc, nil }

// Sort is a compiled sort specification.
type Sort struct{}

// CompileSort parses a sort document ({a: 1, b: -1}).
func CompileSort(spec bson.D) (*Sort, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "sort: not implemented yet")
}

// Compare orders two documents by the sort specification.
func (s *Sort) Compare(a, b bson.D) int { return 0 }

// UpsertSeed builds the document an upsert starts from: the filter's equality conditions on
// fields ({a: 1}, {a: {$eq: 1}}, inside $and, dotted paths as embedded documents).
func UpsertSeed(filter bson.D) (bson.D, error) { return bson.D{}, nil }
