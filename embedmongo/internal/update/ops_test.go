package update

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/expr"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

func TestArithmetic(t *testing.T) {
	runCases(t, []updateCase{
		{name: "inc int", doc: `{"_id":1,"a":1}`, upd: `{"$inc":{"a":2}}`, want: `{"_id":1,"a":3}`},
		{name: "inc negative", doc: `{"_id":1,"balance":1000}`, upd: `{"$inc":{"balance":-500}}`, want: `{"_id":1,"balance":500}`},
		{name: "inc creates", doc: `{"_id":1}`, upd: `{"$inc":{"a.b":2}}`, want: `{"_id":1,"a":{"b":2}}`},
		{name: "inc int by double", doc: `{"_id":1,"a":1}`, upd: `{"$inc":{"a":0.5}}`, want: `{"_id":1,"a":1.5}`},
		{name: "inc int by long", doc: `{"_id":1,"a":1}`, upd: `{"$inc":{"a":{"$numberLong":"1"}}}`, want: `{"_id":1,"a":{"$numberLong":"2"}}`},
		{name: "inc int overflow widens", doc: `{"_id":1,"a":2147483647}`, upd: `{"$inc":{"a":1}}`, want: `{"_id":1,"a":{"$numberLong":"2147483648"}}`},
		{name: "inc long overflow fails", doc: `{"_id":1,"a":{"$numberLong":"9223372036854775807"}}`, upd: `{"$inc":{"a":1}}`, code: mongoerr.BadValue,
			msg: "Failed to apply $inc operations to current value ((NumberLong)9223372036854775807) for document {_id: 1}"},
		{name: "inc zero noop", doc: `{"_id":1,"a":5}`, upd: `{"$inc":{"a":0}}`, want: `{"_id":1,"a":5}`, noop: true},
		{name: "inc non-numeric arg", doc: `{"_id":1}`, upd: `{"$inc":{"a":"x"}}`, code: mongoerr.TypeMismatch,
			msg: `Cannot increment with non-numeric argument: {a: "x"}`},
		{name: "inc non-numeric field", doc: `{"_id":1,"a":"s"}`, upd: `{"$inc":{"a":1}}`, code: mongoerr.TypeMismatch,
			msg: "Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 'a' of non-numeric type string"},
		{name: "mul", doc: `{"_id":1,"a":3}`, upd: `{"$mul":{"a":4}}`, want: `{"_id":1,"a":12}`},
		{name: "mul creates zero of arg type", doc: `{"_id":1}`, upd: `{"$mul":{"a":2.5}}`, want: `{"_id":1,"a":0.0}`},
		{name: "mul non-numeric arg", doc: `{"_id":1}`, upd: `{"$mul":{"a":true}}`, code: mongoerr.TypeMismatch,
			msg: "Cannot multiply with non-numeric argument: {a: true}"},
		{name: "min lower", doc: `{"_id":1,"a":5}`, upd: `{"$min":{"a":3}}`, want: `{"_id":1,"a":3}`},
		{name: "min higher noop", doc: `{"_id":1,"a":5}`, upd: `{"$min":{"a":8}}`, want: `{"_id":1,"a":5}`, noop: true},
		{name: "min equal other type noop", doc: `{"_id":1,"a":5}`, upd: `{"$min":{"a":5.0}}`, want: `{"_id":1,"a":5}`, noop: true},
		{name: "max higher", doc: `{"_id":1,"a":5}`, upd: `{"$max":{"a":8}}`, want: `{"_id":1,"a":8}`},
		{name: "max creates", doc: `{"_id":1}`, upd: `{"$max":{"a":8}}`, want: `{"_id":1,"a":8}`},
		{name: "max cross type", doc: `{"_id":1,"a":5}`, upd: `{"$max":{"a":"x"}}`, want: `{"_id":1,"a":"x"}`},
		{name: "bit and", doc: `{"_id":1,"a":13}`, upd: `{"$bit":{"a":{"and":10}}}`, want: `{"_id":1,"a":8}`},
		{name: "bit or xor", doc: `{"_id":1,"a":5}`, upd: `{"$bit":{"a":{"or":2,"xor":1}}}`, want: `{"_id":1,"a":6}`},
		{name: "bit bad op", doc: `{"_id":1}`, upd: `{"$bit":{"a":{"nand":1}}}`, code: mongoerr.BadValue},
		{name: "bit double field", doc: `{"_id":1,"a":1.5}`, upd: `{"$bit":{"a":{"and":1}}}`, code: mongoerr.BadValue},
	})
}

func TestRename(t *testing.T) {
	runCases(t, []updateCase{
		{name: "rename", doc: `{"_id":1,"a":1,"b":2}`, upd: `{"$rename":{"a":"c"}}`, want: `{"_id":1,"b":2,"c":1}`},
		{name: "rename overwrites in place", doc: `{"_id":1,"a":1,"b":2}`, upd: `{"$rename":{"b":"a"}}`, want: `{"_id":1,"a":2}`},
		{name: "rename nested", doc: `{"_id":1,"a":{"b":1}}`, upd: `{"$rename":{"a.b":"c.d"}}`, want: `{"_id":1,"a":{},"c":{"d":1}}`},
		{name: "rename missing noop", doc: `{"_id":1}`, upd: `{"$rename":{"a":"b"}}`, want: `{"_id":1}`, noop: true},
		{name: "rename not string", doc: `{}`, upd: `{"$rename":{"a":1}}`, code: mongoerr.BadValue,
			msg: "The 'to' field for $rename must be a string: a: 1"},
		{name: "rename same", doc: `{}`, upd: `{"$rename":{"a":"a"}}`, code: mongoerr.BadValue},
		{name: "rename same path", doc: `{}`, upd: `{"$rename":{"a":"a.b"}}`, code: mongoerr.BadValue},
		{name: "rename dynamic", doc: `{}`, upd: `{"$rename":{"a.$":"b"}}`, code: mongoerr.BadValue},
		{name: "rename conflicts with set", doc: `{}`, upd: `{"$rename":{"a":"b"},"$set":{"b":1}}`, code: mongoerr.ConflictingUpdateOperators},
		{name: "rename from array", doc: `{"_id":1,"a":[{"b":1}]}`, upd: `{"$rename":{"a.0.b":"c"}}`, code: mongoerr.BadValue},
		{name: "rename through scalar", doc: `{"_id":1,"a":1}`, upd: `{"$rename":{"a.b":"c"}}`, code: mongoerr.PathNotViable},
		{name: "rename through array by name", doc: `{"_id":1,"a":[{"b":1}]}`, upd: `{"$rename":{"a.b":"c"}}`, code: mongoerr.PathNotViable},
		{name: "rename dest below scalar", doc: `{"_id":1,"a":1,"b":2}`, upd: `{"$rename":{"a":"b.c"}}`, code: mongoerr.PathNotViable},
		{name: "rename _id", doc: `{"_id":1}`, upd: `{"$rename":{"_id":"x"}}`, code: mongoerr.ImmutableField},
		{name: "rename into array", doc: `{"_id":1,"a":1,"b":[{"c":1}]}`, upd: `{"$rename":{"a":"b.0.c"}}`, code: mongoerr.BadValue},
	})
}

func TestCurrentDate(t *testing.T) {
	now := bson.DateTime(1700000000000)
	u, err := Compile(bson.D{{Key: "$currentDate", Value: bson.D{
		{Key: "d", Value: true},
		{Key: "t", Value: bson.D{{Key: "$type", Value: "timestamp"}}},
		{Key: "x", Value: bson.D{{Key: "$type", Value: "date"}}},
	}}}, Options{Vars: expr.Vars{"NOW": now}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := u.Apply(bson.D{{Key: "_id", Value: 1}}, -1, false)
	if err != nil {
		t.Fatal(err)
	}
	if v := got[1].Value; got[1].Key != "d" || v != now {
		t.Fatalf("d = %v", got[1])
	}
	if ts, ok := got[2].Value.(bson.Timestamp); !ok || ts.T != 1700000000 {
		t.Fatalf("t = %#v", got[2])
	}
	if got[3].Value != now {
		t.Fatalf("x = %v", got[3])
	}
	for _, bad := range []bson.D{
		{{Key: "$currentDate", Value: bson.D{{Key: "a", Value: 1}}}},
		{{Key: "$currentDate", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$type", Value: "x"}}}}}},
	} {
		if _, err := Compile(bad, Options{}); !mongoerr.Is(err, mongoerr.BadValue) {
			t.Errorf("%v: want BadValue, got %v", bad, err)
		}
	}
}

func TestReplacement(t *testing.T) {
	runCases(t, []updateCase{
		{name: "replace keeps _id first", doc: `{"_id":1,"a":1,"b":2}`, upd: `{"c":3}`, want: `{"_id":1,"c":3}`},
		{name: "replace with same _id elsewhere", doc: `{"_id":1,"a":1}`, upd: `{"x":1,"_id":1}`, want: `{"_id":1,"x":1}`},
		{name: "empty replacement", doc: `{"_id":1,"a":1}`, upd: `{}`, want: `{"_id":1}`},
		{name: "replace identical noop", doc: `{"_id":1,"a":1}`, upd: `{"a":1}`, want: `{"_id":1,"a":1}`, noop: true},
		{name: "replace insert takes _id", doc: `{}`, upd: `{"a":1,"_id":5}`, insert: true, want: `{"_id":5,"a":1}`},
		{name: "nested dollar allowed", doc: `{"_id":1}`, upd: `{"a":{"$b":1}}`, want: `{"_id":1,"a":{"$b":1}}`},
		{name: "change _id", doc: `{"_id":1,"a":1}`, upd: `{"_id":2}`, code: mongoerr.ImmutableField,
			msg: "After applying the update, the (immutable) field '_id' was found to have been altered to _id: 2"},
		{name: "top-level dollar", doc: `{"_id":1}`, upd: `{"a":1,"$set":{"b":1}}`, code: mongoerr.DollarPrefixedFieldName},
	})
}

func TestIsReplacement(t *testing.T) {
	for _, tc := range []struct {
		upd  bson.D
		want bool
	}{
		{bson.D{}, true},
		{bson.D{{Key: "a", Value: 1}}, true},
		{bson.D{{Key: "$set", Value: bson.D{}}}, false},
	} {
		u, err := Compile(tc.upd, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if u.IsReplacement() != tc.want {
			t.Errorf("%v: IsReplacement = %v", tc.upd, !tc.want)
		}
	}
}
