package spectest

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ej parses relaxed extended JSON into the value model ({"v": <json>} unwrapped).
func ej(t *testing.T, s string) any {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(`{"v":`+s+`}`), false, &d); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return d[0].Value
}

type fakeEntities struct{}

func (fakeEntities) bsonEntity(name string) (any, error) {
	if name == "id0" {
		return int32(42), nil
	}
	return nil, errors.New("no entity " + name)
}

func (fakeEntities) sessionLsid(name string) (bson.D, error) {
	if name == "session0" {
		return bson.D{{Key: "id", Value: "abc"}}, nil
	}
	return nil, errors.New("no session " + name)
}

func TestMatch(t *testing.T) {
	tests := []struct {
		name             string
		expected, actual string
		root             bool
		ok               bool
	}{
		{"equal scalars", `1`, `1`, false, true},
		{"int matches long", `1`, `{"$numberLong":"1"}`, false, true},
		{"int matches double", `1`, `1.0`, false, true},
		{"int does not match 1.5", `1`, `1.5`, false, false},
		{"decimal is not flexible", `{"$numberDecimal":"1"}`, `1`, false, false},
		{"string vs number", `"1"`, `1`, false, false},
		{"null vs absent-free null", `null`, `null`, false, true},
		{"key order ignored", `{"a":1,"b":2}`, `{"b":2,"a":1}`, false, true},
		{"root allows extra keys", `{"a":1}`, `{"a":1,"b":2}`, true, true},
		{"nested forbids extra keys", `{"x":{"a":1}}`, `{"x":{"a":1,"b":2}}`, true, false},
		{"missing key", `{"a":1,"b":2}`, `{"a":1}`, true, false},
		{"array length must match", `[1,2,3]`, `[1,2,3,4]`, false, false},
		{"array elements are not root", `[{"a":1}]`, `[{"a":1,"b":1}]`, false, false},
		{"exists true", `{"a":{"$$exists":true}}`, `{"a":null}`, true, true},
		{"exists true missing", `{"a":{"$$exists":true}}`, `{}`, true, false},
		{"exists false", `{"a":{"$$exists":false}}`, `{}`, true, true},
		{"exists false present", `{"a":{"$$exists":false}}`, `{"a":1}`, true, false},
		{"type string", `{"$$type":"string"}`, `"x"`, false, true},
		{"type list", `{"$$type":["int","long"]}`, `{"$numberLong":"5"}`, false, true},
		{"type mismatch", `{"$$type":"int"}`, `{"$numberLong":"5"}`, false, false},
		{"type object and array", `{"a":{"$$type":"object"},"b":{"$$type":"array"}}`, `{"a":{},"b":[1]}`, true, true},
		{"type number alias", `{"$$type":"number"}`, `1.5`, false, true},
		{"type on absent field", `{"a":{"$$type":"int"}}`, `{}`, true, false},
		{"unsetOrMatches unset", `{"a":{"$$unsetOrMatches":1}}`, `{}`, true, true},
		{"unsetOrMatches matches", `{"a":{"$$unsetOrMatches":1}}`, `{"a":{"$numberLong":"1"}}`, true, true},
		{"unsetOrMatches mismatch", `{"a":{"$$unsetOrMatches":1}}`, `{"a":2}`, true, false},
		{"unsetOrMatches keeps root", `{"$$unsetOrMatches":{"a":1}}`, `{"a":1,"b":2}`, true, true},
		{"unsetOrMatches nested operator", `{"a":{"$$unsetOrMatches":{"$$type":"int"}}}`, `{"a":"x"}`, true, false},
		{"matchesEntity", `{"$$matchesEntity":"id0"}`, `42`, false, true},
		{"matchesEntity mismatch", `{"$$matchesEntity":"id0"}`, `41`, false, false},
		{"matchesEntity unknown", `{"$$matchesEntity":"nope"}`, `42`, false, false},
		{"sessionLsid", `{"lsid":{"$$sessionLsid":"session0"}}`, `{"lsid":{"id":"abc"}}`, true, true},
		{"sessionLsid mismatch", `{"lsid":{"$$sessionLsid":"session0"}}`, `{"lsid":{"id":"abd"}}`, true, false},
		{"lte", `{"$$lte":5}`, `5.0`, false, true},
		{"lte lower", `{"$$lte":5}`, `{"$numberLong":"0"}`, false, true},
		{"lte greater", `{"$$lte":1}`, `1.1`, false, false},
		{"matchAsDocument", `{"$$matchAsDocument":{"a":1}}`, `"{\"a\": {\"$numberInt\": \"1\"}}"`, false, true},
		{"matchAsDocument not root", `{"$$matchAsDocument":{"a":1}}`, `"{\"a\": 1, \"b\": 2}"`, false, false},
		{"matchAsDocument with matchAsRoot", `{"$$matchAsDocument":{"$$matchAsRoot":{"a":1}}}`, `"{\"a\": 1, \"b\": 2}"`, false, true},
		{"matchAsRoot nested", `{"x":{"$$matchAsRoot":{"a":1}}}`, `{"x":{"a":1,"b":2}}`, false, true},
		{"matchesHexBytes", `{"$$matchesHexBytes":"0aFF"}`, `{"$binary":{"base64":"Cv8=","subType":"00"}}`, false, true},
		{"unknown operator", `{"$$nope":1}`, `1`, false, false},
	}
	m := matcher{entities: fakeEntities{}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.match(ej(t, tc.expected), ej(t, tc.actual), tc.root)
			if tc.ok && err != nil {
				t.Errorf("expected match, got %v", err)
			}
			if !tc.ok && err == nil {
				t.Errorf("expected mismatch of %s and %s", tc.expected, tc.actual)
			}
		})
	}
}

func TestMatchAbsentTopLevel(t *testing.T) {
	m := matcher{entities: fakeEntities{}}
	if err := m.match(ej(t, `{"$$unsetOrMatches":{"insertedId":1}}`), absent, true); err != nil {
		t.Errorf("absent result must satisfy $$unsetOrMatches: %v", err)
	}
	if err := m.match(ej(t, `{"a":1}`), absent, true); err == nil {
		t.Error("absent result must not match a document")
	}
}

func TestExactEqual(t *testing.T) {
	tests := []struct {
		a, b string
		ok   bool
	}{
		{`{"_id":1,"x":{"a":1,"b":2}}`, `{"x":{"b":2,"a":1},"_id":1}`, true},
		{`{"_id":1}`, `{"_id":{"$numberLong":"1"}}`, false}, // outcome comparison is type-exact
		{`{"_id":1,"x":[1,2]}`, `{"_id":1,"x":[2,1]}`, false},
		{`{"_id":1}`, `{"_id":1,"x":null}`, false},
	}
	for _, tc := range tests {
		if got := exactEqual(ej(t, tc.a), ej(t, tc.b)); got != tc.ok {
			t.Errorf("exactEqual(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.ok)
		}
	}
}
