package load

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records latencies in microseconds in log-linear buckets: values
// below 2^subBits µs are exact, above that every power of two is split into
// 2^subBits buckets, so a percentile is off by at most 1/2^(subBits+1) of its
// value (≈1.6%) while memory stays fixed however long the run.
type Histogram struct {
	counts [numBuckets]int64
	total  int64
	max    int64 // µs
}

const (
	subBits    = 5
	subCount   = 1 << subBits
	maxShift   = 40 // values up to 2^45 µs (about a year) before clamping
	numBuckets = (maxShift + 2) * subCount
)

// bucketOf maps a value in µs to its bucket index.
func bucketOf(v int64) int {
	if v < subCount {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 1 - subBits
	if shift > maxShift {
		return numBuckets - 1
	}
	mantissa := int(v >> shift) // in [subCount, 2*subCount)
	return (shift+1)*subCount + mantissa - subCount
}

// bucketBounds returns the smallest and largest µs value of bucket i.
func bucketBounds(i int) (lo, hi int64) {
	if i < subCount {
		return int64(i), int64(i)
	}
	shift := i/subCount - 1
	mantissa := int64(i%subCount + subCount)
	return mantissa << shift, (mantissa+1)<<shift - 1
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	us := d.Microseconds()
	h.counts[bucketOf(us)]++
	h.total++
	if us > h.max {
		h.max = us
	}
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.total }

// Max is the largest recorded value.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) * time.Microsecond }

// Merge adds o's values to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// Reset empties h.
func (h *Histogram) Reset() { *h = Histogram{} }

// Percentile returns the value below or at which a fraction q (0 < q ≤ 1) of
// the recorded values lie (the nearest-rank definition), as the midpoint of
// its bucket, capped by the largest value seen. It is 0 when h is empty.
func (h *Histogram) Percentile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.total)))
	rank = min(max(rank, 1), h.total)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketBounds(i)
			mid := min(lo+(hi-lo)/2, h.max)
			return time.Duration(mid) * time.Microsecond
		}
	}
	return h.Max()
}
