package load

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestParseSkew(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Skew
		err  bool
	}{
		{"uniform", Skew{}, false},
		{"hot:2:90", Skew{Hot: 2, Percent: 90}, false},
		{"hot:1:99.5", Skew{Hot: 1, Percent: 99.5}, false},
		{"hot:10:0", Skew{Hot: 10, Percent: 0}, false},
		{"hot:3:100", Skew{Hot: 3, Percent: 100}, false},
		{"", Skew{}, true},
		{"Uniform", Skew{}, true},
		{"hot", Skew{}, true},
		{"hot:2", Skew{}, true},
		{"hot:0:50", Skew{}, true},
		{"hot:-1:50", Skew{}, true},
		{"hot:x:50", Skew{}, true},
		{"hot:2:101", Skew{}, true},
		{"hot:2:-1", Skew{}, true},
		{"hot:2:NaN", Skew{}, true},
		{"hot:2:50:1", Skew{}, true},
		{"cold:2:50", Skew{}, true},
	} {
		got, err := ParseSkew(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseSkew(%q) = %+v, %v; want %+v, err %v", c.in, got, err, c.want, c.err)
		}
		if err == nil {
			if back, _ := ParseSkew(got.String()); back != got {
				t.Errorf("%q does not round-trip through String: %q", c.in, got.String())
			}
		}
	}
}

func TestSkewValidate(t *testing.T) {
	for _, c := range []struct {
		skew     Skew
		accounts int
		ok       bool
	}{
		{Skew{}, 2, true},
		{Skew{}, 1, false},
		{Skew{Hot: 2, Percent: 50}, 2, true},
		{Skew{Hot: 3, Percent: 50}, 2, false},
		{Skew{Hot: 1, Percent: 50}, 2, true},
	} {
		if err := c.skew.Validate(c.accounts); (err == nil) != c.ok {
			t.Errorf("%s with %d accounts: %v", c.skew, c.accounts, err)
		}
	}
}

// within reports whether got is within tol (absolute) of want.
func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestPickUniform(t *testing.T) {
	const n, draws = 10, 200_000
	r := rand.New(rand.NewPCG(1, 2))
	var from, to [n]int
	for range draws {
		f, tt := Skew{}.Pick(r, n)
		if f == tt || f < 0 || f >= n || tt < 0 || tt >= n {
			t.Fatalf("bad pair %d→%d", f, tt)
		}
		from[f]++
		to[tt]++
	}
	for i := range n { // each side ≈ 1/n; 5σ ≈ 0.0034
		if !within(float64(from[i])/draws, 0.1, 0.004) || !within(float64(to[i])/draws, 0.1, 0.004) {
			t.Errorf("account %d: from %d, to %d of %d", i, from[i], to[i], draws)
		}
	}
}

func TestPickHot(t *testing.T) {
	const draws = 100_000
	for _, c := range []struct {
		skew Skew
		n    int
	}{
		{Skew{Hot: 2, Percent: 90}, 100},
		{Skew{Hot: 5, Percent: 30}, 50},
		{Skew{Hot: 1, Percent: 75}, 20},
		{Skew{Hot: 2, Percent: 0}, 10},
		{Skew{Hot: 2, Percent: 100}, 10},
		{Skew{Hot: 9, Percent: 50}, 10}, // one cold account
	} {
		r := rand.New(rand.NewPCG(3, 4))
		hot := func(i int) bool { return i < c.skew.Hot }
		touching := 0
		coldTouched := make(map[int]bool)
		for range draws {
			f, tt := c.skew.Pick(r, c.n)
			if f == tt || f < 0 || f >= c.n || tt < 0 || tt >= c.n {
				t.Fatalf("%s: bad pair %d→%d", c.skew, f, tt)
			}
			if hot(f) || hot(tt) {
				touching++
			}
			if c.skew.Hot >= 2 && hot(f) != hot(tt) && c.n-c.skew.Hot >= 2 {
				t.Fatalf("%s: transfer %d→%d mixes hot and cold", c.skew, f, tt)
			}
			if !hot(f) {
				coldTouched[f] = true
			}
		}
		want := c.skew.Percent / 100
		if c.n-c.skew.Hot < 2 {
			want = 1 // the lone cold account always pairs with a hot one
		}
		if got := float64(touching) / draws; !within(got, want, 0.01) {
			t.Errorf("%s over %d accounts: %.3f of transfers touch a hot account, want %.3f", c.skew, c.n, got, want)
		}
		if want < 1 && len(coldTouched) != c.n-c.skew.Hot {
			t.Errorf("%s: only %d of %d cold accounts ever sent", c.skew, len(coldTouched), c.n-c.skew.Hot)
		}
	}
}
