package update

import (
	"testing"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestPush(t *testing.T) {
	runCases(t, []updateCase{
		{name: "push", doc: `{"_id":1,"a":[1]}`, upd: `{"$push":{"a":2}}`, want: `{"_id":1,"a":[1,2]}`},
		{name: "push creates", doc: `{"_id":1}`, upd: `{"$push":{"a":{"x":1}}}`, want: `{"_id":1,"a":[{"x":1}]}`},
		{name: "push array as one element", doc: `{"_id":1,"a":[]}`, upd: `{"$push":{"a":[1,2]}}`, want: `{"_id":1,"a":[[1,2]]}`},
		{name: "push each", doc: `{"_id":1,"a":[1]}`, upd: `{"$push":{"a":{"$each":[2,3]}}}`, want: `{"_id":1,"a":[1,2,3]}`},
		{name: "push position", doc: `{"_id":1,"a":[1,4]}`, upd: `{"$push":{"a":{"$each":[2,3],"$position":1}}}`, want: `{"_id":1,"a":[1,2,3,4]}`},
		{name: "push negative position", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$push":{"a":{"$each":[9],"$position":-1}}}`, want: `{"_id":1,"a":[1,2,9,3]}`},
		{name: "push slice last", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$push":{"a":{"$each":[4],"$slice":-2}}}`, want: `{"_id":1,"a":[3,4]}`},
		{name: "push slice first", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$push":{"a":{"$each":[4],"$slice":2}}}`, want: `{"_id":1,"a":[1,2]}`},
		{name: "push slice zero", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$push":{"a":{"$each":[],"$slice":0}}}`, want: `{"_id":1,"a":[]}`},
		{name: "push sort whole", doc: `{"_id":1,"a":[3,1]}`, upd: `{"$push":{"a":{"$each":[2],"$sort":-1}}}`, want: `{"_id":1,"a":[3,2,1]}`},
		{name: "push sort fields", doc: `{"_id":1,"a":[{"s":3},{"s":1}]}`, upd: `{"$push":{"a":{"$each":[{"s":2}],"$sort":{"s":1},"$slice":2}}}`,
			want: `{"_id":1,"a":[{"s":1},{"s":2}]}`},
		{name: "push each empty noop", doc: `{"_id":1,"a":[1]}`, upd: `{"$push":{"a":{"$each":[]}}}`, want: `{"_id":1,"a":[1]}`, noop: true},
		{name: "push to non-array", doc: `{"_id":1,"a":1}`, upd: `{"$push":{"a":2}}`, code: mongoerr.BadValue,
			msg: "The field 'a' must be an array but is of type int in document {_id: 1}"},
		{name: "push to nested non-array names full path", doc: `{"_id":1,"a":{"b":1}}`, upd: `{"$push":{"a.b":2}}`, code: mongoerr.BadValue,
			msg: "The field 'a.b' must be an array but is of type int in document {_id: 1}"},
		{name: "push duplicate clause", doc: `{}`, upd: `{"$push":{"a":{"$each":[1],"$slice":1,"$slice":2}}}`, code: mongoerr.BadValue},
		{name: "push position past end appends", doc: `{"_id":1,"a":[1]}`, upd: `{"$push":{"a":{"$each":[2],"$position":5}}}`, want: `{"_id":1,"a":[1,2]}`},
		{name: "push negative position past start prepends", doc: `{"_id":1,"a":[1]}`, upd: `{"$push":{"a":{"$each":[2],"$position":-5}}}`, want: `{"_id":1,"a":[2,1]}`},
		{name: "push each not array", doc: `{}`, upd: `{"$push":{"a":{"$each":1}}}`, code: mongoerr.BadValue},
		{name: "push bad clause", doc: `{}`, upd: `{"$push":{"a":{"$each":[1],"$foo":1}}}`, code: mongoerr.BadValue},
		{name: "push bad sort", doc: `{}`, upd: `{"$push":{"a":{"$each":[1],"$sort":2}}}`, code: mongoerr.BadValue},
		{name: "push bad slice", doc: `{}`, upd: `{"$push":{"a":{"$each":[1],"$slice":"x"}}}`, code: mongoerr.BadValue},

		{name: "addToSet new", doc: `{"_id":1,"a":[1]}`, upd: `{"$addToSet":{"a":2}}`, want: `{"_id":1,"a":[1,2]}`},
		{name: "addToSet present noop", doc: `{"_id":1,"a":[1,2]}`, upd: `{"$addToSet":{"a":2}}`, want: `{"_id":1,"a":[1,2]}`, noop: true},
		{name: "addToSet numeric equality", doc: `{"_id":1,"a":[1]}`, upd: `{"$addToSet":{"a":1.0}}`, want: `{"_id":1,"a":[1]}`, noop: true},
		{name: "addToSet doc field order matters", doc: `{"_id":1,"a":[{"x":1,"y":2}]}`, upd: `{"$addToSet":{"a":{"y":2,"x":1}}}`,
			want: `{"_id":1,"a":[{"x":1,"y":2},{"y":2,"x":1}]}`},
		{name: "addToSet each dedupes", doc: `{"_id":1,"a":[1]}`, upd: `{"$addToSet":{"a":{"$each":[1,2,2,3]}}}`, want: `{"_id":1,"a":[1,2,3]}`},
		{name: "addToSet creates", doc: `{"_id":1}`, upd: `{"$addToSet":{"a":{"$each":[1,1]}}}`, want: `{"_id":1,"a":[1]}`},
		{name: "addToSet non-array", doc: `{"_id":1,"a":1}`, upd: `{"$addToSet":{"a":1}}`, code: mongoerr.BadValue,
			msg: "Cannot apply $addToSet to non-array field. Field named 'a' has non-array type int"},

		{name: "pop last", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$pop":{"a":1}}`, want: `{"_id":1,"a":[1,2]}`},
		{name: "pop first", doc: `{"_id":1,"a":[1,2,3]}`, upd: `{"$pop":{"a":-1}}`, want: `{"_id":1,"a":[2,3]}`},
		{name: "pop empty noop", doc: `{"_id":1,"a":[]}`, upd: `{"$pop":{"a":1}}`, want: `{"_id":1,"a":[]}`, noop: true},
		{name: "pop missing noop", doc: `{"_id":1}`, upd: `{"$pop":{"a":1}}`, want: `{"_id":1}`, noop: true},
		{name: "pop bad arg", doc: `{}`, upd: `{"$pop":{"a":2}}`, code: mongoerr.FailedToParse, msg: "$pop expects 1 or -1, found: 2"},
		{name: "pop non-array", doc: `{"_id":1,"a":{"b":1}}`, upd: `{"$pop":{"a.b":1}}`, code: mongoerr.TypeMismatch,
			msg: "Path 'a.b' contains an element of non-array type 'int'"},

		{name: "pull value", doc: `{"_id":1,"a":[1,2,1,3]}`, upd: `{"$pull":{"a":1}}`, want: `{"_id":1,"a":[2,3]}`},
		{name: "pull value none noop", doc: `{"_id":1,"a":[2]}`, upd: `{"$pull":{"a":1}}`, want: `{"_id":1,"a":[2]}`, noop: true},
		{name: "pull missing noop", doc: `{"_id":1}`, upd: `{"$pull":{"a":1}}`, want: `{"_id":1}`, noop: true},
		{name: "pull non-array", doc: `{"_id":1,"a":1}`, upd: `{"$pull":{"a":1}}`, code: mongoerr.BadValue,
			msg: "Cannot apply $pull to a non-array value"},
		{name: "pullAll", doc: `{"_id":1,"a":[1,2,3,2]}`, upd: `{"$pullAll":{"a":[2,3]}}`, want: `{"_id":1,"a":[1]}`},
		{name: "pullAll non-array field", doc: `{"_id":1,"a":1}`, upd: `{"$pullAll":{"a":[1]}}`, code: mongoerr.BadValue,
			msg: "Cannot apply $pull to a non-array value"},
		{name: "pull via all positional", doc: `{"_id":1,"a":[{"t":[1,2]},{"t":[2]}]}`, upd: `{"$pull":{"a.$[].t":2}}`, want: `{"_id":1,"a":[{"t":[1]},{"t":[]}]}`},
		{name: "pullAll not array", doc: `{}`, upd: `{"$pullAll":{"a":1}}`, code: mongoerr.BadValue},
	})
}

func TestPullConditions(t *testing.T) {
	runCases(t, []updateCase{
		{name: "pull scalar condition", doc: `{"_id":1,"a":[1,6,7,2]}`, upd: `{"$pull":{"a":{"$gte":6}}}`, want: `{"_id":1,"a":[1,2]}`},
		{name: "pull in", doc: `{"_id":1,"a":["x","y","z"]}`, upd: `{"$pull":{"a":{"$in":["x","z"]}}}`, want: `{"_id":1,"a":["y"]}`},
		{name: "pull doc query", doc: `{"_id":1,"a":[{"s":8,"i":"B"},{"s":8,"i":"C"},5]}`, upd: `{"$pull":{"a":{"s":8,"i":"B"}}}`,
			want: `{"_id":1,"a":[{"s":8,"i":"C"},5]}`},
		{name: "pull doc query with operator", doc: `{"_id":1,"a":[{"s":1},{"s":9}]}`, upd: `{"$pull":{"a":{"s":{"$gt":5}}}}`,
			want: `{"_id":1,"a":[{"s":1}]}`},
		{name: "pull regex", doc: `{"_id":1,"a":["apple","berry"]}`, upd: `{"$pull":{"a":{"$regularExpression":{"pattern":"^a","options":""}}}}`,
			want: `{"_id":1,"a":["berry"]}`},
	})
}
