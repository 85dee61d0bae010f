// Package update applies MongoDB update documents: operators ($set, $inc, $push, ...) and
// replacement documents. Pipeline-style updates are run by the server through package agg.
//
// Results share unchanged subtrees with the input document (and values with the update
// document): callers must treat both as read-only, or DeepCopy before mutating.
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

// Update is a compiled update document. It is immutable after Compile and safe for
// concurrent use.
type Update struct {
	replacement bson.D // replacement document (when isReplacement)
	isReplace   bool

	root    *node          // operator tree, children in mongod's application order
	filters []*arrayFilter // arrayFilters by identifier
	renames []*renameOp    // $rename operations, validated against the document first
	vars    expr.Vars
}

// Compile parses an update document (operators, or a replacement when it has no $-keys).
// Like mongod, an empty document is a replacement.
func Compile(u bson.D, opts Options) (*Update, error) {
	if len(u) == 0 || u[0].Key == "" || u[0].Key[0] != '$' {
		if len(opts.ArrayFilters) > 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"arrayFilters may not be specified for replacement-style updates")
		}
		return &Update{replacement: u, isReplace: true, vars: opts.Vars}, nil
	}
	return compileOperators(u, opts)
}

// IsReplacement reports whether the update is a replacement document.
func (u *Update) IsReplacement() bool { return u.isReplace }

// Apply returns the updated copy of doc (doc itself is never modified). matchPos is the array
// index the query matched (for positional `$`), or -1. insert is true when the document is
// being created by an upsert ($setOnInsert applies then). When nothing changes, doc itself is
// returned.
func (u *Update) Apply(doc bson.D, matchPos int, insert bool) (bson.D, error) {
	out, _, err := u.ApplyChanged(doc, matchPos, insert)
	return out, err
}

// ApplyChanged is Apply that also reports whether the update changed anything. A true result
// may still encode to the same bytes (e.g. $unset of a null array element); a false one never
// differs from doc.
func (u *Update) ApplyChanged(doc bson.D, matchPos int, insert bool) (bson.D, bool, error) {
	if u.isReplace {
		return u.applyReplacement(doc)
	}
	return u.applyOperators(doc, matchPos, insert)
}

// TopFields lists the top-level fields an operator update may change, so that callers can skip
// work on the others (index maintenance). ok is false when any field may change (a replacement).
func (u *Update) TopFields() (fields []string, ok bool) {
	if u.isReplace || u.root == nil || u.root.positional != nil || len(u.root.elems) > 0 {
		return nil, false
	}
	for _, c := range u.root.fields {
		fields = append(fields, c.name)
	}
	for _, r := range u.renames {
		fields = append(fields, r.from[0], r.to[0])
	}
	return fields, true
}
