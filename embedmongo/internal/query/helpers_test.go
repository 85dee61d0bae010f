package query

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// doc parses relaxed extended JSON ({"a": 1} gives int32, 1.5 a double) into a bson.D.
func doc(t testing.TB, s string) bson.D {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	if d == nil {
		d = bson.D{}
	}
	return d
}

func errCode(err error) int32 {
	if err == nil {
		return 0
	}
	return mongoerr.As(err).Code
}
