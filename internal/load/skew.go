package load

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Skew says how transfers pick their accounts. The zero value is uniform: any
// ordered pair of distinct accounts is equally likely. With Hot > 0, the
// first Hot accounts are hot and a fraction Percent/100 of transfers are
// between hot accounts (or, with a single hot account, between it and any
// other); the rest are between cold accounts only, so the hot accounts see
// exactly the share of traffic asked for.
type Skew struct {
	Hot     int
	Percent float64
}

// ParseSkew parses "uniform" or "hot:K:P" (K ≥ 1 hot accounts take P% of the
// transfers, 0 ≤ P ≤ 100; P may have a fraction).
func ParseSkew(s string) (Skew, error) {
	if s == "uniform" {
		return Skew{}, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[0] != "hot" {
		return Skew{}, fmt.Errorf("skew %q: want uniform or hot:K:P", s)
	}
	k, err := strconv.Atoi(parts[1])
	if err != nil || k < 1 {
		return Skew{}, fmt.Errorf("skew %q: K must be an integer ≥ 1", s)
	}
	p, err := strconv.ParseFloat(parts[2], 64)
	if err != nil || !(p >= 0 && p <= 100) { // also rejects NaN
		return Skew{}, fmt.Errorf("skew %q: P must be a percentage in [0, 100]", s)
	}
	return Skew{Hot: k, Percent: p}, nil
}

func (s Skew) String() string {
	if s.Hot == 0 {
		return "uniform"
	}
	return "hot:" + strconv.Itoa(s.Hot) + ":" + strconv.FormatFloat(s.Percent, 'f', -1, 64)
}

// Validate checks the skew against the number of accounts.
func (s Skew) Validate(accounts int) error {
	if accounts < 2 {
		return fmt.Errorf("need at least 2 accounts for transfers, have %d", accounts)
	}
	if s.Hot > accounts {
		return fmt.Errorf("skew %s: %d hot accounts but only %d accounts", s, s.Hot, accounts)
	}
	return nil
}

// Pick returns two distinct account indexes in [0, n) for one transfer.
// n must be ≥ 2 and ≥ s.Hot (see Validate).
func (s Skew) Pick(r *rand.Rand, n int) (from, to int) {
	if s.Hot == 0 || s.Hot == n {
		return pickPair(r, 0, n)
	}
	cold := n - s.Hot
	if r.Float64()*100 < s.Percent {
		if s.Hot >= 2 {
			return pickPair(r, 0, s.Hot)
		}
		return pickWith(r, 0, n) // the single hot account and any other
	}
	if cold >= 2 {
		return pickPair(r, s.Hot, n)
	}
	return pickWith(r, n-1, n) // the single cold account and any other
}

// pickPair picks an ordered pair of distinct indexes in [lo, hi).
func pickPair(r *rand.Rand, lo, hi int) (int, int) {
	size := hi - lo
	a := r.IntN(size)
	b := r.IntN(size - 1)
	if b >= a {
		b++
	}
	return lo + a, lo + b
}

// pickWith pairs account fixed with a random other account in [0, n), in a
// random direction.
func pickWith(r *rand.Rand, fixed, n int) (int, int) {
	other := r.IntN(n - 1)
	if other >= fixed {
		other++
	}
	if r.IntN(2) == 0 {
		return fixed, other
	}
	return other, fixed
}
