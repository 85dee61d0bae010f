// Package collation implements MongoDB collations: parsing a collation document as mongod
// does and comparing strings by its locale's rules (Unicode Collation Algorithm, through
// golang.org/x/text/collate).
//
// A nil *Collation is the "simple" collation (binary comparison); every method accepts it,
// so callers never special-case the default.
package collation

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/bankd/bankd/embedmongo/internal/bsonkit"
	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// icuVersion is the ICU version mongod 7.0 reports in a normalized collation spec.
const icuVersion = "57.1"

// Collation is a parsed, non-simple collation. It is immutable and safe for concurrent use.
type Collation struct {
	spec            bson.D // normalized, as listCollections/listIndexes show it
	locale          string
	strength        int
	caseLevel       bool
	caseFirst       string
	numericOrdering bool
	alternate       string
	backwards       bool

	// x/text collators keep per-comparison state, so each goroutine borrows its own.
	pool sync.Pool
}

type worker struct {
	c   *collate.Collator
	buf collate.Buffer
}

// Parse parses a collation document. {locale: "simple"} (the binary collation) gives nil.
func Parse(v any) (*Collation, error) {
	d, ok := v.(bson.D)
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collation' is the wrong type '%s', expected type 'object'", bsonkit.TypeName(v))
	}
	c := &Collation{strength: 3, caseFirst: "off", alternate: "non-ignorable"}
	var maxVariable string
	seen := map[string]bool{}
	var hasLocale, hasBackwards bool
	for _, e := range d {
		if seen[e.Key] {
			return nil, mongoerr.New(40413, "BSON field 'collation.%s' is a duplicate field", e.Key)
		}
		seen[e.Key] = true
		var err error
		switch e.Key {
		case "locale":
			c.locale, err = stringField(e)
			hasLocale = true
		case "caseLevel":
			c.caseLevel, err = boolField(e)
		case "caseFirst":
			if c.caseFirst, err = stringField(e); err == nil {
				err = oneOf(e.Key, c.caseFirst, "upper", "lower", "off")
			}
		case "strength":
			var n int64
			if n, err = intField(e); err == nil && (n < 1 || n > 5) {
				err = mongoerr.New(mongoerr.FailedToParse, "Field 'strength' must be an integer 1 through 5. Got: %d", n)
			}
			c.strength = int(n)
		case "numericOrdering":
			c.numericOrdering, err = boolField(e)
		case "alternate":
			if c.alternate, err = stringField(e); err == nil {
				err = oneOf(e.Key, c.alternate, "non-ignorable", "shifted")
			}
		case "maxVariable":
			if maxVariable, err = stringField(e); err == nil {
				err = oneOf(e.Key, maxVariable, "punct", "space")
			}
		case "normalization":
			_, err = boolField(e) // x/text always normalizes: results are the same
		case "backwards":
			c.backwards, err = boolField(e)
			hasBackwards = true
		case "version":
			var ver string
			if ver, err = stringField(e); err == nil && ver != icuVersion {
				err = &mongoerr.Error{Code: 254, Name: "IncompatibleCollationVersion", Msg: fmt.Sprintf(
					"Requested collation version %s but the only available collator version was %s. Requested collation spec: %s", ver, icuVersion, fmtDoc(d))}
			}
		default:
			err = mongoerr.New(40415, "BSON field 'collation.%s' is an unknown field.", e.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasLocale {
		return nil, mongoerr.New(40414, "BSON field 'collation.locale' is missing but a required field")
	}
	if c.locale == "simple" {
		if len(d) > 1 {
			return nil, mongoerr.New(mongoerr.BadValue, "If locale=simple, no other fields should be specified in: %s", fmtDoc(d))
		}
		return nil, nil
	}
	tag, err := localeTag(c.locale)
	if err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' is invalid in: %s", fmtDoc(d))
	}
	if !hasBackwards && c.locale == "fr_CA" {
		c.backwards = true // Canadian French sorts accents from the end of the word
	}
	if maxVariable == "" {
		maxVariable = "punct"
	}
	c.spec = bson.D{
		{Key: "locale", Value: c.locale},
		{Key: "caseLevel", Value: c.caseLevel},
		{Key: "caseFirst", Value: c.caseFirst},
		{Key: "strength", Value: int32(c.strength)},
		{Key: "numericOrdering", Value: c.numericOrdering},
		{Key: "alternate", Value: c.alternate},
		{Key: "maxVariable", Value: maxVariable},
		{Key: "normalization", Value: false},
		{Key: "backwards", Value: c.backwards},
		{Key: "version", Value: icuVersion},
	}
	ltag := c.ldmlTag(tag)
	c.pool.New = func() any { return &worker{c: collate.New(ltag)} }
	return cached(c), nil
}

// cache shares collations across commands: building a collator costs far more than a
// comparison, and applications reuse a handful of collations.
var cache = struct {
	sync.Mutex
	m map[string]*Collation
}{m: map[string]*Collation{}}

func cached(c *Collation) *Collation {
	key := fmt.Sprint(c.spec)
	cache.Lock()
	defer cache.Unlock()
	if old, ok := cache.m[key]; ok {
		return old
	}
	if len(cache.m) >= 256 {
		clear(cache.m)
	}
	cache.m[key] = c
	return c
}

// collationKeywords maps ICU's "@collation=" keyword values to their BCP 47 forms.
var collationKeywords = map[string]string{
	"phonebook": "phonebk", "traditional": "trad", "dictionary": "dict", "gb2312han": "gb2312",
}

// localeTag turns an ICU locale ID ("en_US", "de@collation=phonebook") into a language tag
// x/text knows a collation for.
func localeTag(locale string) (language.Tag, error) {
	id, keyword, _ := strings.Cut(locale, "@")
	s := strings.ReplaceAll(id, "_", "-")
	if keyword != "" {
		k, v, ok := strings.Cut(keyword, "=")
		if !ok || k != "collation" {
			return language.Und, fmt.Errorf("unsupported keyword %q", keyword)
		}
		if alias, ok := collationKeywords[v]; ok {
			v = alias
		}
		s += "-u-co-" + v
	}
	tag, err := language.Parse(s)
	if err != nil || id == "" {
		return language.Und, fmt.Errorf("invalid locale %q", locale)
	}
	base, conf := tag.Base()
	if conf != language.Exact {
		return language.Und, fmt.Errorf("unknown language in %q", locale)
	}
	for _, t := range collate.Supported() {
		if b, _ := t.Base(); b == base {
			return tag, nil
		}
	}
	return language.Und, fmt.Errorf("no collation for %q", locale)
}

// ldmlTag adds the collation options as BCP 47 -u- keywords, x/text's way to set them.
func (c *Collation) ldmlTag(tag language.Tag) language.Tag {
	kw := []string{"ks", [...]string{"", "level1", "level2", "level3", "level4", "identic"}[c.strength]}
	if c.caseLevel {
		kw = append(kw, "kc", "true")
	}
	if c.numericOrdering {
		kw = append(kw, "kn", "true")
	}
	if c.backwards {
		kw = append(kw, "kb", "true")
	}
	if c.alternate == "shifted" {
		kw = append(kw, "ka", "shifted")
	}
	for i := 0; i < len(kw); i += 2 {
		t, err := tag.SetTypeForKey(kw[i], kw[i+1])
		if err == nil {
			tag = t
		}
	}
	return tag
}

// Spec returns the normalized collation document (nil for simple).
func (c *Collation) Spec() bson.D {
	if c == nil {
		return nil
	}
	return bsonkit.CopyDoc(c.spec)
}

// IsSimple reports whether c is the binary collation.
func (c *Collation) IsSimple() bool { return c == nil }

// CompareStrings orders two strings by the collation.
func (c *Collation) CompareStrings(a, b string) int {
	if c == nil {
		return strings.Compare(a, b)
	}
	if a == b {
		return 0
	}
	w := c.pool.Get().(*worker)
	defer c.pool.Put(w)
	w.buf.Reset()
	// Sort keys rather than CompareString: x/text's direct comparison skips the primary
	// level under alternate=shifted.
	ka := w.c.KeyFromString(&w.buf, c.prepare(a))
	kb := w.c.KeyFromString(&w.buf, c.prepare(b))
	if r := bytes.Compare(ka, kb); r != 0 || c.strength < 5 {
		return r
	}
	return strings.Compare(norm.NFD.String(a), norm.NFD.String(b)) // identical level
}

// Key returns a binary string that orders (and is equal) as s does under the collation:
// for hashing strings by collation equality.
func (c *Collation) Key(s string) string {
	if c == nil {
		return s
	}
	w := c.pool.Get().(*worker)
	defer c.pool.Put(w)
	w.buf.Reset()
	k := string(w.c.KeyFromString(&w.buf, c.prepare(s)))
	if c.strength == 5 {
		k += "\x00" + norm.NFD.String(s)
	}
	return k
}

// StringCompare returns the string order for bsonkit.CompareWith (nil for simple, so the
// binary fast path stays in use).
func (c *Collation) StringCompare() bsonkit.StringCompare {
	if c == nil {
		return nil
	}
	return c.CompareStrings
}

// Compare orders two BSON values, strings (also nested) by the collation.
func (c *Collation) Compare(a, b any) int {
	if c == nil {
		return bsonkit.Compare(a, b)
	}
	return bsonkit.CompareWith(a, b, c.CompareStrings)
}

// prepare applies the options x/text lacks. caseFirst=upper is lower-first with the cases
// swapped (case only weighs at the tertiary/case level, so swapping flips exactly that);
// caseLevel at strength 1 must still ignore accents, which x/text's case level does not.
func (c *Collation) prepare(s string) string {
	if c.caseLevel && c.strength == 1 {
		s = stripMarks(s)
	}
	if c.caseFirst == "upper" && (c.strength >= 3 || c.caseLevel) {
		s = strings.Map(swapCase, s)
	}
	return s
}

func swapCase(r rune) rune {
	switch {
	case unicode.IsUpper(r):
		return unicode.ToLower(r)
	case unicode.IsLower(r):
		return unicode.ToUpper(r)
	}
	return r
}

func stripMarks(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return s
	}
	return out
}

func stringField(e bson.E) (string, error) {
	s, ok := e.Value.(string)
	if !ok {
		return "", wrongType(e, "string")
	}
	return s, nil
}

func boolField(e bson.E) (bool, error) {
	b, ok := e.Value.(bool)
	if !ok {
		return false, wrongType(e, "bool")
	}
	return b, nil
}

func intField(e bson.E) (int64, error) {
	n, ok := bsonkit.ToInt64Exact(e.Value)
	if !ok || !bsonkit.IsNumber(e.Value) {
		return 0, wrongType(e, "int")
	}
	return n, nil
}

func wrongType(e bson.E, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collation.%s' is the wrong type '%s', expected type '%s'", e.Key, bsonkit.TypeName(e.Value), want)
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return mongoerr.New(mongoerr.FailedToParse, "Field '%s' must be '%s'. Got: %s", field, strings.Join(allowed, "', '"), v)
}

func fmtDoc(d bson.D) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return fmt.Sprint(d)
	}
	return string(b)
}
