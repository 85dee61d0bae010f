package spectest

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestParseVersion(t *testing.T) {
	tests := map[string][3]int{
		"7.0":                       {7, 0, 0},
		"4.4.13":                    {4, 4, 13},
		"8":                         {8, 0, 0},
		"4.9.0-alpha4-271-g7d5cf02": {4, 9, 0},
		"4.1.11":                    {4, 1, 11},
	}
	for in, want := range tests {
		if got := parseVersion(in); got != want {
			t.Errorf("parseVersion(%q) = %v, want %v", in, got, want)
		}
	}
	if compareVersions(parseVersion("4.0.10"), parseVersion("4.0.9")) <= 0 {
		t.Error("4.0.10 must be greater than 4.0.9")
	}
	if compareVersions(parseVersion("3.6"), parseVersion("4.2.0")) >= 0 {
		t.Error("3.6 must be less than 4.2.0")
	}
}

func TestRequirements(t *testing.T) {
	no := false
	server := ServerInfo{Version: [3]int{7, 0, 2}, Topology: "single"}
	tests := []struct {
		name string
		reqs []requirement
		ok   bool
	}{
		{"none", nil, true},
		{"min met", []requirement{{MinServerVersion: "4.2"}}, true},
		{"min inclusive", []requirement{{MinServerVersion: "7.0.2"}}, true},
		{"min unmet", []requirement{{MinServerVersion: "8.0"}}, false},
		{"max inclusive patch", []requirement{{MaxServerVersion: "7.0.2"}}, true},
		{"max unmet", []requirement{{MaxServerVersion: "4.99"}}, false},
		{"topology", []requirement{{Topologies: []string{"replicaset", "sharded"}}}, false},
		{"topology single", []requirement{{Topologies: []string{"single", "replicaset"}}}, true},
		{"any of several", []requirement{{MinServerVersion: "8.0"}, {MaxServerVersion: "7.99"}}, true},
		{"serverless forbid", []requirement{{Serverless: "forbid"}}, true},
		{"serverless require", []requirement{{Serverless: "require"}}, false},
		{"auth false", []requirement{{Auth: &no}}, true},
		{"csfle false", []requirement{{CSFLE: false}}, true},
		{"csfle required", []requirement{{CSFLE: true}}, false},
		{"server parameters unknown", []requirement{{ServerParameters: bson.D{{Key: "x", Value: 1}}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why := server.satisfied(tc.reqs)
			if (why == "") != tc.ok {
				t.Errorf("satisfied = %q, want ok=%v", why, tc.ok)
			}
		})
	}
}

func TestWithURIOptions(t *testing.T) {
	got, err := withURIOptions("mongodb://127.0.0.1:27017/?w=majority&directConnection=true",
		bson.D{{Key: "w", Value: int32(1)}, {Key: "retryWrites", Value: false}, {Key: "readConcernLevel", Value: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"w=1", "retryWrites=false", "readConcernLevel=local", "directConnection=true"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	if strings.Contains(got, "majority") {
		t.Errorf("%s still has the overridden w", got)
	}
}

func TestArgsRejectsUnknown(t *testing.T) {
	a := newArgs("find", bson.D{{Key: "filter", Value: bson.D{}}, {Key: "frobnicate", Value: true}})
	a.docOrEmpty("filter")
	err := a.finish()
	if err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Errorf("finish() = %v, want an unsupported-argument error naming frobnicate", err)
	}
	b := newArgs("find", bson.D{{Key: "limit", Value: "ten"}})
	b.int64("limit")
	if b.finish() == nil {
		t.Error("a mistyped argument must fail")
	}
}

func TestCollation(t *testing.T) {
	c, err := toCollation(bson.D{{Key: "locale", Value: "en_US"}, {Key: "strength", Value: int32(2)}})
	if err != nil || c.Locale != "en_US" || c.Strength != 2 {
		t.Errorf("toCollation = %+v, %v", c, err)
	}
	if _, err := toCollation(bson.D{{Key: "bogus", Value: 1}}); err == nil {
		t.Error("unknown collation field must fail")
	}
}
