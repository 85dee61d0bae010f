package update

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
	"github.com/bankd/bankd/embedmongo/internal/query"
)

// arrayFilter is one compiled arrayFilters entry. Its filter is written against the
// identifier as a top-level field ({"x.a": 1}, {x: {$gt: 1}}), so matching an array element
// means matching the one-field document {<id>: element} — scalar elements included.
type arrayFilter struct {
	id      string
	matcher *query.Matcher
}

func (f *arrayFilter) match(elem any) (bool, error) {
	return f.matcher.Match(bson.D{{Key: f.id, Value: elem}})
}

func compileArrayFilters(specs []bson.D, opts Options) ([]*arrayFilter, error) {
	var out []*arrayFilter
	for _, spec := range specs {
		id, err := filterIdentifier(spec)
		if err != nil {
			return nil, err
		}
		for _, f := range out {
			if f.id == id {
				return nil, mongoerr.New(mongoerr.FailedToParse,
					"Found multiple array filters with the same top-level field name %s", id)
			}
		}
		m, err := query.Compile(spec, query.Options{Vars: opts.Vars})
		if err != nil {
			return nil, err
		}
		out = append(out, &arrayFilter{id: id, matcher: m})
	}
	return out, nil
}

// filterIdentifier finds the single top-level name every path of the filter starts with,
// looking through $and/$or/$nor.
func filterIdentifier(spec bson.D) (string, error) {
	var id string
	var walk func(d bson.D) error
	walk = func(d bson.D) error {
		for _, e := range d {
			if strings.HasPrefix(e.Key, "$") {
				switch e.Key {
				case "$and", "$or", "$nor":
					arr, _ := e.Value.(bson.A)
					for _, sub := range arr {
						if sd, ok := sub.(bson.D); ok {
							if err := walk(sd); err != nil {
								return err
							}
						}
					}
				}
				continue
			}
			name, _, _ := strings.Cut(e.Key, ".")
			if id == "" {
				id = name
			} else if id != name {
				return mongoerr.New(mongoerr.FailedToParse,
					"Error parsing array filter :: caused by :: Expected a single top-level field name, found '%s' and '%s'", id, name)
			}
		}
		return nil
	}
	if err := walk(spec); err != nil {
		return "", err
	}
	if id == "" {
		return "", mongoerr.New(mongoerr.FailedToParse,
			"Cannot use an expression without a top-level field name in arrayFilters")
	}
	if !validIdentifier(id) {
		return "", mongoerr.New(mongoerr.BadValue,
			"Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '%s'", id)
	}
	return id, nil
}

func validIdentifier(id string) bool {
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
