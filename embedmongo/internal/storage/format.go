package storage

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
)

// formatValue renders v the way mongod's error messages do ({ name: "x", n: 1 }).
func formatValue(v any) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

func writeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case bson.D:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{ ")
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.Key)
			b.WriteString(": ")
			writeValue(b, e.Value)
		}
		b.WriteString(" }")
	case bson.A:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, e)
		}
		b.WriteString(" ]")
	case string:
		b.WriteString(strconv.Quote(x))
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEIN") {
			s += ".0"
		}
		b.WriteString(s)
	case int32, int64, bson.Decimal128:
		b.WriteString(bsonkit.FormatNumber(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil, bson.Null:
		b.WriteString("null")
	case bson.Undefined:
		b.WriteString("undefined")
	case bson.ObjectID:
		b.WriteString("ObjectId('" + hex.EncodeToString(x[:]) + "')")
	case bson.DateTime:
		b.WriteString("new Date(" + strconv.FormatInt(int64(x), 10) + ")")
	case bson.Timestamp:
		b.WriteString("Timestamp(" + strconv.FormatUint(uint64(x.T), 10) + ", " + strconv.FormatUint(uint64(x.I), 10) + ")")
	case bson.Binary:
		b.WriteString("BinData(" + strconv.Itoa(int(x.Subtype)) + ", " + strings.ToUpper(hex.EncodeToString(x.Data)) + ")")
	case bson.Regex:
		b.WriteString("/" + x.Pattern + "/" + x.Options)
	case bson.MinKey:
		b.WriteString("MinKey")
	case bson.MaxKey:
		b.WriteString("MaxKey")
	default:
		fmt.Fprint(b, x)
	}
}
