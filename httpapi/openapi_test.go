package httpapi

import (
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The OpenAPI document and the router must describe the same API: every route documented,
// every documented operation routed.
func TestOpenAPIMatchesRouter(t *testing.T) {
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	h := New(Config{}, Deps{})
	var routed []string
	for _, r := range h.Routes() {
		// gin writes :id where OpenAPI writes {id}.
		routed = append(routed, r[0]+" "+strings.ReplaceAll(r[1], ":id", "{id}"))
	}
	sort.Strings(documented)
	sort.Strings(routed)
	if strings.Join(documented, "\n") != strings.Join(routed, "\n") {
		t.Errorf("router and OpenAPI differ:\nrouted:\n%s\ndocumented:\n%s", strings.Join(routed, "\n"), strings.Join(documented, "\n"))
	}
}
