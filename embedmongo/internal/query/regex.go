package query

import (
	"regexp"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/bankd/bankd/embedmongo/internal/mongoerr"
)

// regexCache memoizes compiled patterns: filters are compiled per operation and the same
// few patterns recur.
var regexCache sync.Map // "options/pattern" -> *regexp.Regexp

const maxCachedRegexes = 1024

var regexCacheSize int64
var regexCacheMu sync.Mutex

func newRegexLeaf(pattern, options string) (*regexLeaf, error) {
	re, err := compileRegex(pattern, options)
	if err != nil {
		return nil, err
	}
	return &regexLeaf{re: re, pattern: pattern, options: options}, nil
}

// compileRegex translates a PCRE pattern with MongoDB options (i, m, s, x) to Go's RE2.
func compileRegex(pattern, options string) (*regexp.Regexp, error) {
	key := options + "/" + pattern
	if re, ok := regexCache.Load(key); ok {
		return re.(*regexp.Regexp), nil
	}
	flags := ""
	extended := false
	for _, f := range options {
		switch f {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags, f) {
				flags += string(f)
			}
		case 'x':
			extended = true
		case 'u', 'l':
			// UTF-8 is always on in Go; locale-dependent matching is not meaningful here.
		default:
			return nil, mongoerr.New(51108, "invalid flag in regex options: %c", f)
		}
	}
	src := pattern
	if extended {
		src = stripExtended(src)
	}
	if flags != "" {
		src = "(?" + flags + ")" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, mongoerr.New(51091, "Regular expression is invalid: %s", err.Error())
	}
	regexCacheMu.Lock()
	if regexCacheSize < maxCachedRegexes {
		regexCacheSize++
		regexCache.Store(key, re)
	}
	regexCacheMu.Unlock()
	return re, nil
}

// stripExtended implements PCRE's extended mode: unescaped whitespace outside character
// classes is ignored, and # starts a comment to the end of the line.
func stripExtended(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// parseRegexOp compiles {$regex: pattern, $options: flags} (the pattern may be a regex value).
func parseRegexOp(v any, siblings bson.D) (fieldPred, error) {
	var pattern, options string
	switch x := v.(type) {
	case string:
		pattern = x
	case bson.Regex:
		pattern, options = x.Pattern, x.Options
	default:
		return nil, badValue("$regex has to be a string")
	}
	for _, e := range siblings {
		if e.Key != "$options" {
			continue
		}
		s, ok := e.Value.(string)
		if !ok {
			return nil, badValue("$options has to be a string")
		}
		if options != "" && s != "" {
			return nil, badValue("options set in both $regex and $options")
		}
		if s != "" {
			options = s
		}
	}
	l, err := newRegexLeaf(pattern, options)
	if err != nil {
		return nil, err
	}
	return simplePred{l}, nil
}
