package update

import (
	"testing"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestSetUnset(t *testing.T) {
	runCases(t, []updateCase{
		{name: "set existing keeps position", doc: `{"_id":1,"a":1,"b":2}`, upd: `{"$set":{"a":5}}`, want: `{"_id":1,"a":5,"b":2}`},
		{name: "set new appended", doc: `{"_id":1,"b":2}`, upd: `{"$set":{"a":5}}`, want: `{"_id":1,"b":2,"a":5}`},
		{name: "new fields in lexicographic order", doc: `{"_id":1}`, upd: `{"$set":{"c":1,"a":1,"b":1}}`, want: `{"_id":1,"a":1,"b":1,"c":1}`},
		{name: "numeric names in numeric order", doc: `{"_id":1,"o":{}}`, upd: `{"$set":{"o.10":1,"o.9":1,"o.b":1}}`, want: `{"_id":1,"o":{"9":1,"10":1,"b":1}}`},
		{name: "dotted creates docs", doc: `{"_id":1}`, upd: `{"$set":{"a.b.c":1}}`, want: `{"_id":1,"a":{"b":{"c":1}}}`},
		{name: "numeric component on missing creates doc", doc: `{"_id":1}`, upd: `{"$set":{"a.0":1}}`, want: `{"_id":1,"a":{"0":1}}`},
		{name: "array index", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$set":{"a.1":9}}`, want: `{"_id":1,"a":[1,9,3]}`},
		{name: "array pad with nulls", doc: `{"_id":1,"a":[1]}`, upd: `{"$set":{"a.3":9}}`, want: `{"_id":1,"a":[1,null,null,9]}`},
		{name: "array element doc field", doc: `{"_id":1,"a":[{"x":1},{"x":2}]}`, upd: `{"$set":{"a.1.x":5}}`, want: `{"_id":1,"a":[{"x":1},{"x":5}]}`},
		{name: "nested into existing doc", doc: `{"_id":1,"a":{"b":1}}`, upd: `{"$set":{"a.c":2}}`, want: `{"_id":1,"a":{"b":1,"c":2}}`},
		{name: "noop same value", doc: `{"_id":1,"a":1}`, upd: `{"$set":{"a":1}}`, want: `{"_id":1,"a":1}`, noop: true},
		{name: "type change is not noop", doc: `{"_id":1,"a":1}`, upd: `{"$set":{"a":1.0}}`, want: `{"_id":1,"a":1.0}`},
		{name: "set doc value", doc: `{"_id":1,"a":1}`, upd: `{"$set":{"a":{"x":[1,2]}}}`, want: `{"_id":1,"a":{"x":[1,2]}}`},
		{name: "empty set allowed", doc: `{"_id":1}`, upd: `{"$set":{}}`, want: `{"_id":1}`, noop: true},
		{name: "nested dollar field in value allowed", doc: `{"_id":1}`, upd: `{"$set":{"a":{"$b":1}}}`, want: `{"_id":1,"a":{"$b":1}}`},
		{name: "set _id same value", doc: `{"_id":1,"a":1}`, upd: `{"$set":{"_id":1}}`, want: `{"_id":1,"a":1}`, noop: true},
		{name: "set _id on insert without _id", doc: `{"a":1}`, upd: `{"$set":{"_id":7}}`, insert: true, want: `{"a":1,"_id":7}`},

		{name: "unset", doc: `{"_id":1,"a":1,"b":2}`, upd: `{"$unset":{"a":""}}`, want: `{"_id":1,"b":2}`},
		{name: "unset missing noop", doc: `{"_id":1}`, upd: `{"$unset":{"a":1,"b.c":1}}`, want: `{"_id":1}`, noop: true},
		{name: "unset nested", doc: `{"_id":1,"a":{"b":1,"c":2}}`, upd: `{"$unset":{"a.b":1}}`, want: `{"_id":1,"a":{"c":2}}`},
		{name: "unset array element nulls", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$unset":{"a.1":1}}`, want: `{"_id":1,"a":[1,null,3]}`},
		{name: "unset through scalar noop", doc: `{"_id":1,"a":5}`, upd: `{"$unset":{"a.b":1}}`, want: `{"_id":1,"a":5}`, noop: true},
		{name: "unset several", doc: `{"_id":1,"a":1,"b":2,"c":3}`, upd: `{"$unset":{"a":1,"c":1}}`, want: `{"_id":1,"b":2}`},

		{name: "setOnInsert ignored on update", doc: `{"_id":1}`, upd: `{"$setOnInsert":{"a":1}}`, want: `{"_id":1}`, noop: true},
		{name: "setOnInsert on insert", doc: `{"_id":1}`, upd: `{"$setOnInsert":{"a":1},"$set":{"b":2}}`, insert: true, want: `{"_id":1,"a":1,"b":2}`},

		{name: "unknown modifier", doc: `{}`, upd: `{"$foo":{"a":1}}`, code: mongoerr.FailedToParse,
			msg: "Unknown modifier: $foo. Expected a valid update modifier or pipeline-style update specified as an array"},
		{name: "mixed operator and field", doc: `{}`, upd: `{"$set":{"a":1},"b":2}`, code: mongoerr.FailedToParse},
		{name: "operator arg not doc", doc: `{}`, upd: `{"$set":1}`, code: mongoerr.FailedToParse},
		{name: "conflict prefix", doc: `{}`, upd: `{"$set":{"a":1,"a.b":2}}`, code: mongoerr.ConflictingUpdateOperators,
			msg: "Updating the path 'a.b' would create a conflict at 'a'"},
		{name: "conflict reverse", doc: `{}`, upd: `{"$set":{"a.b":1},"$unset":{"a":1}}`, code: mongoerr.ConflictingUpdateOperators,
			msg: "Updating the path 'a' would create a conflict at 'a'"},
		{name: "conflict same path across ops", doc: `{}`, upd: `{"$set":{"a":1},"$inc":{"a":1}}`, code: mongoerr.ConflictingUpdateOperators},
		{name: "modify _id", doc: `{"_id":1}`, upd: `{"$set":{"_id":2}}`, code: mongoerr.ImmutableField,
			msg: "Performing an update on the path '_id' would modify the immutable field '_id'"},
		{name: "modify _id subfield", doc: `{"_id":{"a":1}}`, upd: `{"$set":{"_id.a":2}}`, code: mongoerr.ImmutableField},
		{name: "unset _id", doc: `{"_id":1}`, upd: `{"$unset":{"_id":1}}`, code: mongoerr.ImmutableField},
		{name: "array _id on insert", doc: `{}`, upd: `{"$set":{"_id":[1]}}`, insert: true, code: mongoerr.InvalidIdField},
		{name: "path not viable", doc: `{"_id":1,"a":1}`, upd: `{"$set":{"a.b":1}}`, code: mongoerr.PathNotViable,
			msg: "Cannot create field 'b' in element {a: 1}"},
		{name: "path not viable deep", doc: `{"_id":1,"a":{"b":"x"}}`, upd: `{"$set":{"a.b.c.d":1}}`, code: mongoerr.PathNotViable,
			msg: "Cannot create field 'c' in element {b: \"x\"}"},
		{name: "named field in array", doc: `{"_id":1,"a":[1,2]}`, upd: `{"$set":{"a.b":1}}`, code: mongoerr.PathNotViable,
			msg: "Cannot create field 'b' in element {a: [ 1, 2 ]}"},
		{name: "top-level dollar field", doc: `{"_id":1}`, upd: `{"$set":{"$a":1}}`, code: mongoerr.DollarPrefixedFieldName},
		{name: "empty path", doc: `{}`, upd: `{"$set":{"":1}}`, code: mongoerr.EmptyFieldName},
		{name: "empty path part", doc: `{}`, upd: `{"$set":{"a..b":1}}`, code: mongoerr.EmptyFieldName,
			msg: "The update path 'a..b' contains an empty field name, which is not allowed."},
	})
}

func TestPositional(t *testing.T) {
	runCases(t, []updateCase{
		{name: "positional set", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$set":{"a.$":9}}`, matchPos: 2, want: `{"_id":1,"a":[1,2,9]}`},
		{name: "positional index 0", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$inc":{"a.$":1}}`, matchPos: -100, want: `{"_id":1,"a":[2,2,3]}`},
		{name: "positional subfield", doc: `{"_id":1,"a":[{"x":1},{"x":2}]}`, upd: `{"$set":{"a.$.x":7}}`, matchPos: 1, want: `{"_id":1,"a":[{"x":1},{"x":7}]}`},
		{name: "positional no match", doc: `{"_id":1,"a":[1]}`, upd: `{"$set":{"a.$":9}}`, code: mongoerr.BadValue,
			msg: "The positional operator did not find the match needed from the query."},
		{name: "positional first", doc: `{}`, upd: `{"$set":{"$.a":9}}`, code: mongoerr.BadValue},
		{name: "two positionals", doc: `{}`, upd: `{"$set":{"a.$.b.$":9}}`, code: mongoerr.BadValue},
		{name: "positional merges with same index conflict", doc: `{"_id":1,"a":[1,2]}`, upd: `{"$set":{"a.$":9,"a.1":8}}`, matchPos: 1,
			code: mongoerr.ConflictingUpdateOperators},
		{name: "positional and other index", doc: `{"_id":1,"a":[1,2]}`, upd: `{"$set":{"a.$":9,"a.0":8}}`, matchPos: 1, want: `{"_id":1,"a":[8,9]}`},
	})
}

func TestArrayFilters(t *testing.T) {
	runCases(t, []updateCase{
		{name: "all elements", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$inc":{"a.$[]":10}}`, want: `{"_id":1,"a":[11,12,13]}`},
		{name: "all elements subfield", doc: `{"_id":1,"a":[{"x":1},{"x":2}]}`, upd: `{"$set":{"a.$[].x":0}}`, want: `{"_id":1,"a":[{"x":0},{"x":0}]}`},
		{name: "all on empty array", doc: `{"_id":1,"a":[]}`, upd: `{"$set":{"a.$[]":1}}`, want: `{"_id":1,"a":[]}`, noop: true},
		{name: "missing array", doc: `{"_id":1}`, upd: `{"$set":{"a.$[]":1}}`, code: mongoerr.BadValue,
			msg: "The path 'a' must exist in the document in order to apply array updates."},
		{name: "non-array", doc: `{"_id":1,"a":5}`, upd: `{"$set":{"a.$[]":1}}`, code: mongoerr.BadValue,
			msg: "Cannot apply array updates to non-array element a: 5"},
		{name: "scalar filter", doc: `{"_id":1,"a":[1,5,10]}`, upd: `{"$set":{"a.$[e]":0}}`, filters: []string{`{"e":{"$gte":5}}`},
			want: `{"_id":1,"a":[1,0,0]}`},
		{name: "doc filter", doc: `{"_id":1,"a":[{"x":1,"y":1},{"x":2,"y":1}]}`, upd: `{"$set":{"a.$[el].y":9}}`, filters: []string{`{"el.x":2}`},
			want: `{"_id":1,"a":[{"x":1,"y":1},{"x":2,"y":9}]}`},
		{name: "nested filters", doc: `{"_id":1,"a":[{"b":[1,2]},{"b":[3]}]}`, upd: `{"$inc":{"a.$[i].b.$[j]":100}}`,
			filters: []string{`{"i.b":{"$size":2}}`, `{"j":{"$gt":1}}`}, want: `{"_id":1,"a":[{"b":[1,102]},{"b":[3]}]}`},
		{name: "unused filter", doc: `{}`, upd: `{"$set":{"a":1}}`, filters: []string{`{"x":1}`}, code: mongoerr.FailedToParse,
			msg: "The array filter for identifier 'x' was not used in the update { $set: { a: 1 } }"},
		{name: "missing filter", doc: `{}`, upd: `{"$set":{"a.$[x]":1}}`, code: mongoerr.BadValue,
			msg: "No array filter found for identifier 'x' in path 'a.$[x]'"},
		{name: "duplicate filter", doc: `{}`, upd: `{"$set":{"a.$[x]":1}}`, filters: []string{`{"x":1}`, `{"x":2}`}, code: mongoerr.FailedToParse},
		{name: "two identifiers in one filter", doc: `{}`, upd: `{"$set":{"a.$[x]":1}}`, filters: []string{`{"x":1,"y":2}`}, code: mongoerr.FailedToParse},
		{name: "bad identifier", doc: `{}`, upd: `{"$set":{"a.$[X]":1}}`, filters: []string{`{"X":1}`}, code: mongoerr.BadValue},
		{name: "two filters same element conflict", doc: `{"_id":1,"a":[1]}`, upd: `{"$set":{"a.$[x]":1,"a.$[y]":2}}`,
			filters: []string{`{"x":1}`, `{"y":1}`}, code: mongoerr.ConflictingUpdateOperators},
		{name: "two filters disjoint subfields merge", doc: `{"_id":1,"a":[{"p":1}]}`, upd: `{"$set":{"a.$[x].q":1,"a.$[y].r":2}}`,
			filters: []string{`{"x.p":1}`, `{"y.p":1}`}, want: `{"_id":1,"a":[{"p":1,"q":1,"r":2}]}`},
		{name: "array node vs object node conflict", doc: `{}`, upd: `{"$set":{"a.$[].b":1,"a.0":1}}`, code: mongoerr.ConflictingUpdateOperators},
	})
}
