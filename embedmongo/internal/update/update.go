// Package update applies MongoDB update documents: operators ($set, $inc, $push, ...) and
// replacement documents. Pipeline-style updates are run by the server through package agg.
package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Options carries arrayFilters (for `$[<id>]`) and variables ($$NOW for $currentDate is the
// server clock; let variables).
type Options struct {
	ArrayFilters []bson.D
	Vars         expr.Vars
}

// Update is a compiled update document.
type Update struct{}

// Compile parses an update document (operators, or a replacement when it has no $-keys).
func Compile(u bson.D, opts Options) (*Update, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "update: not implemented yet")
}

// IsReplacement reports whether the update is a replacement document.
func (u *Update) IsReplacement() bool { return false }

// Apply returns the updated copy of doc (doc itself is never modified). matchPos is the array
// index the query matched (for positional `$`), or -1. insert is true when the document is
// being created by an upsert ($setOnInsert applies then).
func (u *Update) Apply(doc bson.D, matchPos int, insert bool) (bson.D, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "update: not implemented yet")
}
