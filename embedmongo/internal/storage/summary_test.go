package storage

import (
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The summary may only settle comparisons the full key comparison agrees with: for random keys
// of many types, strings sharing prefixes, zero bytes and multibyte runes among them, arrays
// of them (array elements that are arrays), lessEntry
// with summaries orders every pair as the comparison of keys, then tags, does.
func TestSummaryKeepsTheOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []string{"a", "b", "\x00", "\xff", "é", "z", "0"}
	str := func() string {
		s := ""
		for n := rng.IntN(12); n > 0; n-- {
			s += alphabet[rng.IntN(len(alphabet))]
		}
		return s
	}
	var value func() any
	value = func() any {
		switch rng.IntN(13) {
		case 9, 10: // arrays order by their elements: empty first, then by the first
			a := bson.A{}
			for n := rng.IntN(3); n > 0; n-- {
				a = append(a, value())
			}
			return a
		case 0:
			return int32(rng.IntN(5))
		case 1:
			return int64(rng.IntN(5))
		case 2:
			return float64(rng.IntN(5)) / 2
		case 3:
			return bson.DateTime(rng.Int64N(5))
		case 4:
			return nil
		case 5:
			return bson.MinKey{}
		case 6:
			return bson.MaxKey{}
		case 7:
			return rng.IntN(2) == 0
		case 8:
			return bson.Symbol(str())
		default:
			return str()
		}
	}
	key := func() any {
		n := rng.IntN(4)
		if n == 1 {
			return value()
		}
		k := make(compoundKey, n)
		for i := range k {
			k[i] = value()
		}
		return k
	}
	entries := make([]entry, 600)
	for i := range entries {
		entries[i] = newEntry(key(), RecordID(rng.IntN(3)))
	}
	entries = append(entries, pivot(compoundKey{}), pivot("abcdefg"), pivot("abcdefgh"), pivot("abcdefg\x00"))
	fullLess := func(a, b entry) bool {
		if c := compareKeys(a.key, b.key); c != 0 {
			return c < 0
		}
		return a.id < b.id
	}
	for _, a := range entries {
		for _, b := range entries {
			if got, want := lessEntry(a, b), fullLess(a, b); got != want {
				t.Fatalf("less(%#v, %#v) = %v, want %v (summaries %x, %x)", a.key, b.key, got, want, a.sum, b.sum)
			}
		}
	}
}
