package spectest

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// absent stands for a field that is not present in the actual value (distinct from null).
type absentT struct{}

var absent = absentT{}

// entityLookup resolves the entities that $$matchesEntity and $$sessionLsid refer to.
type entityLookup interface {
	bsonEntity(name string) (any, error)
	sessionLsid(name string) (bson.D, error)
}

// matcher applies the unified test format's "Evaluating Matches" rules.
type matcher struct {
	entities entityLookup
}

// match compares expected with actual. root says whether actual is a root-level document, in
// which extra keys are permitted.
func (m matcher) match(expected, actual any, root bool) error {
	return m.matchAt("$", expected, actual, root)
}

func (m matcher) matchAt(path string, expected, actual any, root bool) error {
	if op, arg, ok := specialOperator(expected); ok {
		return m.operator(path, op, arg, actual, root)
	}
	if actual == absent {
		return fmt.Errorf("%s: expected %s, field is absent", path, show(expected))
	}
	switch exp := expected.(type) {
	case bson.D:
		act, ok := asDoc(actual)
		if !ok {
			return fmt.Errorf("%s: expected document %s, got %s", path, show(expected), show(actual))
		}
		for _, e := range exp {
			sub := path + "." + e.Key
			val, present := lookup(act, e.Key)
			if !present {
				val = absent
			}
			if err := m.matchAt(sub, e.Value, val, false); err != nil {
				return err
			}
		}
		if !root {
			for _, e := range act {
				if _, ok := lookup(exp, e.Key); !ok {
					return fmt.Errorf("%s: unexpected extra field %q in %s (expected %s)", path, e.Key, show(actual), show(expected))
				}
			}
		}
		return nil
	case bson.A:
		act, ok := asArray(actual)
		if !ok {
			return fmt.Errorf("%s: expected array %s, got %s", path, show(expected), show(actual))
		}
		if len(act) != len(exp) {
			return fmt.Errorf("%s: expected %d elements %s, got %d %s", path, len(exp), show(expected), len(act), show(actual))
		}
		for i := range exp {
			if err := m.matchAt(fmt.Sprintf("%s[%d]", path, i), exp[i], act[i], false); err != nil {
				return err
			}
		}
		return nil
	}
	if !scalarEqual(expected, actual) {
		return fmt.Errorf("%s: expected %s, got %s", path, show(expected), show(actual))
	}
	return nil
}

// specialOperator reports whether v is a document whose first and only key starts with "$$".
func specialOperator(v any) (string, any, bool) {
	d, ok := v.(bson.D)
	if !ok || len(d) != 1 || !strings.HasPrefix(d[0].Key, "$$") {
		return "", nil, false
	}
	return d[0].Key, d[0].Value, true
}

func (m matcher) operator(path, op string, arg, actual any, root bool) error {
	present := actual != absent
	switch op {
	case "$$exists":
		want, ok := arg.(bool)
		if !ok {
			return fmt.Errorf("%s: $$exists needs a boolean, got %s", path, show(arg))
		}
		if want != present {
			if want {
				return fmt.Errorf("%s: expected field to exist", path)
			}
			return fmt.Errorf("%s: expected field to be absent, got %s", path, show(actual))
		}
		return nil
	case "$$unsetOrMatches":
		if !present {
			return nil
		}
		return m.matchAt(path, arg, actual, root)
	case "$$type":
		if !present {
			return fmt.Errorf("%s: expected a value of type %s, field is absent", path, show(arg))
		}
		names, err := typeNames(arg)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		got := typeName(actual)
		for _, n := range names {
			if n == got || (n == "number" && isNumberType(got)) {
				return nil
			}
		}
		return fmt.Errorf("%s: expected type %s, got %s %s", path, strings.Join(names, "|"), got, show(actual))
	case "$$matchesEntity":
		name, ok := arg.(string)
		if !ok {
			return fmt.Errorf("%s: $$matchesEntity needs an entity name", path)
		}
		ent, err := m.entities.bsonEntity(name)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return m.matchAt(path, ent, actual, root)
	case "$$sessionLsid":
		name, ok := arg.(string)
		if !ok {
			return fmt.Errorf("%s: $$sessionLsid needs a session name", path)
		}
		lsid, err := m.entities.sessionLsid(name)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !present || !exactEqual(lsid, actual) {
			return fmt.Errorf("%s: expected lsid of %s %s, got %s", path, name, show(lsid), show(actual))
		}
		return nil
	case "$$lte":
		if !present {
			return fmt.Errorf("%s: expected a value <= %s, field is absent", path, show(arg))
		}
		a, okA := toFloat(actual)
		e, okE := toFloat(arg)
		if !okA || !okE {
			return fmt.Errorf("%s: $$lte needs numbers, expected %s, got %s", path, show(arg), show(actual))
		}
		if a > e {
			return fmt.Errorf("%s: expected a value <= %s, got %s", path, show(arg), show(actual))
		}
		return nil
	case "$$matchAsDocument":
		s, ok := actual.(string)
		if !ok {
			return fmt.Errorf("%s: $$matchAsDocument needs a string actual value, got %s", path, show(actual))
		}
		var doc bson.D
		if err := bson.UnmarshalExtJSON([]byte(s), false, &doc); err != nil {
			return fmt.Errorf("%s: actual value is not extended JSON: %w", path, err)
		}
		return m.matchAt(path, arg, doc, false)
	case "$$matchAsRoot":
		return m.matchAt(path, arg, actual, true)
	case "$$matchesHexBytes":
		s, ok := arg.(string)
		if !ok {
			return fmt.Errorf("%s: $$matchesHexBytes needs a hex string", path)
		}
		want, err := hex.DecodeString(s)
		if err != nil {
			return fmt.Errorf("%s: malformed $$matchesHexBytes %q: %w", path, s, err)
		}
		var got []byte
		switch a := actual.(type) {
		case string:
			got = []byte(a)
		case bson.Binary:
			got = a.Data
		case []byte:
			got = a
		default:
			return fmt.Errorf("%s: $$matchesHexBytes needs bytes, got %s", path, show(actual))
		}
		if !bytes.Equal(want, got) {
			return fmt.Errorf("%s: expected bytes %s, got %x", path, strings.ToLower(s), got)
		}
		return nil
	}
	return fmt.Errorf("%s: unsupported special operator %s", path, op)
}

func typeNames(arg any) ([]string, error) {
	switch a := arg.(type) {
	case string:
		return []string{a}, nil
	case bson.A:
		out := make([]string, 0, len(a))
		for _, v := range a {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("$$type: type names must be strings, got %s", show(v))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("$$type needs a string or an array of strings, got %s", show(arg))
}

func isNumberType(n string) bool {
	return n == "int" || n == "long" || n == "double" || n == "decimal"
}

// typeName returns the $type alias of a value.
func typeName(v any) string {
	switch v.(type) {
	case float64:
		return "double"
	case string:
		return "string"
	case bson.D, bson.M, bson.Raw:
		return "object"
	case bson.A, bson.RawArray:
		return "array"
	case bson.Binary:
		return "binData"
	case bson.Undefined:
		return "undefined"
	case bson.ObjectID:
		return "objectId"
	case bool:
		return "bool"
	case bson.DateTime:
		return "date"
	case nil, bson.Null:
		return "null"
	case bson.Regex:
		return "regex"
	case bson.DBPointer:
		return "dbPointer"
	case bson.JavaScript:
		return "javascript"
	case bson.Symbol:
		return "symbol"
	case bson.CodeWithScope:
		return "javascriptWithScope"
	case int32:
		return "int"
	case bson.Timestamp:
		return "timestamp"
	case int64:
		return "long"
	case bson.Decimal128:
		return "decimal"
	case bson.MinKey:
		return "minKey"
	case bson.MaxKey:
		return "maxKey"
	}
	return fmt.Sprintf("%T", v)
}

// scalarEqual compares non-container values; int32, int64 and double compare by numeric value.
func scalarEqual(expected, actual any) bool {
	if e, ok := toFloat(expected); ok {
		a, ok := toFloat(actual)
		if !ok {
			return false
		}
		if isInt(expected) && isInt(actual) {
			return toInt64(expected) == toInt64(actual)
		}
		return e == a || (math.IsNaN(e) && math.IsNaN(a))
	}
	return exactEqual(expected, actual)
}

func isInt(v any) bool {
	switch v.(type) {
	case int32, int64, int:
		return true
	}
	return false
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int32:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

// toFloat converts int32/int64/double (not Decimal128) to float64.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// exactEqual compares two values exactly (types included) while ignoring the key order of
// documents at any depth, as the spec requires for collection outcomes.
func exactEqual(a, b any) bool {
	return bytes.Equal(canonicalBytes(a), canonicalBytes(b))
}

// canonicalBytes encodes v as BSON with every document's keys sorted.
func canonicalBytes(v any) []byte {
	doc := bson.D{{Key: "v", Value: sortKeys(v)}}
	b, err := bson.Marshal(doc)
	if err != nil {
		return []byte(fmt.Sprintf("unencodable %T %v", v, v))
	}
	return b
}

func sortKeys(v any) any {
	switch x := v.(type) {
	case bson.D:
		out := make(bson.D, len(x))
		for i, e := range x {
			out[i] = bson.E{Key: e.Key, Value: sortKeys(e.Value)}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
		return out
	case bson.A:
		out := make(bson.A, len(x))
		for i, e := range x {
			out[i] = sortKeys(e)
		}
		return out
	case bson.Raw:
		var d bson.D
		if err := bson.Unmarshal(x, &d); err == nil {
			return sortKeys(d)
		}
	}
	return v
}

func asDoc(v any) (bson.D, bool) {
	switch d := v.(type) {
	case bson.D:
		return d, true
	case bson.Raw:
		var out bson.D
		if err := bson.Unmarshal(d, &out); err != nil {
			return nil, false
		}
		return out, true
	}
	return nil, false
}

func asArray(v any) (bson.A, bool) {
	a, ok := v.(bson.A)
	return a, ok
}

func lookup(d bson.D, key string) (any, bool) {
	for _, e := range d {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// show renders a value as relaxed extended JSON with its type, for failure messages.
func show(v any) string {
	if v == absent {
		return "<absent>"
	}
	switch v.(type) {
	case bson.D, bson.A:
		return shortJSON(v)
	}
	return fmt.Sprintf("%s (%s)", shortJSON(v), typeName(v))
}

func shortJSON(v any) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := string(b)
	s = strings.TrimSuffix(strings.TrimPrefix(s, `{"v":`), "}")
	const limit = 600
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}
