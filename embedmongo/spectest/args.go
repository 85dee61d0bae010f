package spectest

import (
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// args reads an operation's arguments and remembers which ones were used, so that finish can
// reject any argument the runner does not map: a silently ignored option would make a test
// pass for the wrong reason.
type args struct {
	what string
	d    bson.D
	used map[string]bool
	errs []string
}

func newArgs(what string, d bson.D) *args {
	return &args{what: what, d: d, used: map[string]bool{}}
}

func (a *args) has(key string) bool {
	_, ok := lookup(a.d, key)
	return ok
}

func (a *args) take(key string) (any, bool) {
	v, ok := lookup(a.d, key)
	if ok {
		a.used[key] = true
	}
	return v, ok
}

func (a *args) fail(format string, v ...any) {
	a.errs = append(a.errs, fmt.Sprintf(format, v...))
}

func (a *args) str(key string) string {
	v, ok := a.take(key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		a.fail("%s must be a string, got %s", key, show(v))
	}
	return s
}

func (a *args) boolean(key string) bool {
	v, ok := a.take(key)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		a.fail("%s must be a boolean, got %s", key, show(v))
	}
	return b
}

func (a *args) int64(key string) (int64, bool) {
	v, ok := a.take(key)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	a.fail("%s must be an integer, got %s", key, show(v))
	return 0, false
}

func (a *args) doc(key string) (bson.D, bool) {
	v, ok := a.take(key)
	if !ok {
		return nil, false
	}
	d, ok := v.(bson.D)
	if !ok {
		a.fail("%s must be a document, got %s", key, show(v))
	}
	return d, ok
}

// docOrEmpty returns the document argument, or an empty filter when absent.
func (a *args) docOrEmpty(key string) bson.D {
	d, ok := a.doc(key)
	if !ok {
		return bson.D{}
	}
	return d
}

func (a *args) array(key string) bson.A {
	v, ok := a.take(key)
	if !ok {
		return nil
	}
	arr, ok := v.(bson.A)
	if !ok {
		a.fail("%s must be an array, got %s", key, show(v))
	}
	return arr
}

func (a *args) collation(key string) (*options.Collation, bool) {
	d, ok := a.doc(key)
	if !ok {
		return nil, false
	}
	c, err := toCollation(d)
	if err != nil {
		a.fail("%s: %v", key, err)
		return nil, false
	}
	return c, true
}

// finish reports type errors and every argument nobody took.
func (a *args) finish() error {
	var unknown []string
	for _, e := range a.d {
		if !a.used[e.Key] {
			unknown = append(unknown, e.Key)
		}
	}
	sort.Strings(unknown)
	msgs := append([]string(nil), a.errs...)
	if len(unknown) > 0 {
		msgs = append(msgs, "unsupported argument(s) "+strings.Join(unknown, ", "))
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s: %s", a.what, strings.Join(msgs, "; "))
	}
	return nil
}

// toCollation converts a collation document field by field (the driver's struct has no
// camelCase bson tags).
func toCollation(d bson.D) (*options.Collation, error) {
	c := &options.Collation{}
	a := newArgs("collation", d)
	c.Locale = a.str("locale")
	c.CaseLevel = a.boolean("caseLevel")
	c.CaseFirst = a.str("caseFirst")
	if n, ok := a.int64("strength"); ok {
		c.Strength = int(n)
	}
	c.NumericOrdering = a.boolean("numericOrdering")
	c.Alternate = a.str("alternate")
	c.MaxVariable = a.str("maxVariable")
	c.Normalization = a.boolean("normalization")
	c.Backwards = a.boolean("backwards")
	return c, a.finish()
}

// toAnySlice converts an array argument for driver APIs that take []any.
func toAnySlice(a bson.A) []any {
	return append([]any(nil), a...)
}
