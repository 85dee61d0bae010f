// Package expr evaluates MongoDB aggregation expressions.
package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// Vars maps variable names (without the "$$" prefix) to values: "NOW" (bson.DateTime) and
// user variables from `let`. ROOT and CURRENT are supplied by Eval from its doc argument
// unless set here (CURRENT may be rebound).
type Vars map[string]any

// Eval evaluates expression e against doc ($$ROOT and $$CURRENT) with vars. Field paths that
// do not exist evaluate to bsonkit.Missing.
func Eval(e any, doc bson.D, vars Vars) (any, error) {
	return nil, mongoerr.New(mongoerr.NotImplemented, "expr: not implemented yet")
}

// Truthy reports MongoDB's truthiness: false, null, Missing, undefined and numeric zero are
// false; everything else (including empty strings and arrays) is true.
func Truthy(v any) bool { return false }
