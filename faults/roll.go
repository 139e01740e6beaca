package faults

import (
	"math"

	"github.com/mcpdrill/mcpdrill/internal/splitmix"
)

// Roll is the decision function: a 64-bit value derived only from the seed,
// the session name, the direction, the rule index and the per-direction
// message index. A rule with probability p fires on a matching message when
// Unit(Roll(...)) < p; the same value seeds every random choice the fault
// then makes ([Apply]).
//
// It is FNV-1a over the inputs, finished with the SplitMix64 mixer so that
// neighbouring indices give unrelated values.
func Roll(seed uint64, session string, dir Direction, rule int, index uint64) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	word := func(v uint64) {
		for i := 0; i < 8; i++ {
			h ^= v & 0xff
			h *= prime
			v >>= 8
		}
	}
	word(seed)
	word(uint64(len(session)))
	for i := 0; i < len(session); i++ {
		h ^= uint64(session[i])
		h *= prime
	}
	word(uint64(dir))
	word(uint64(rule))
	word(index)
	return mix64(h)
}

// Unit maps a roll to [0, 1) using its top 53 bits.
func Unit(r uint64) float64 { return float64(r>>11) * 0x1p-53 }

// mix64 is the SplitMix64 finaliser.
func mix64(z uint64) uint64 { return splitmix.Mix(z) }

// stream is a SplitMix64 sequence seeded from a roll: the only source of
// randomness a fault may use.
type stream struct{ s uint64 }

func newStream(roll uint64) *stream { return &stream{s: roll ^ 0x6a09e667f3bcc909} }

func (r *stream) next() uint64 { return splitmix.Next(&r.s) }

// intn returns a value in [0, n); n <= 0 gives 0.
func (r *stream) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.next() % uint64(n))
}

// between returns a value in [lo, hi] (inclusive); hi < lo gives lo.
func (r *stream) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	span := uint64(hi - lo)
	if span == math.MaxUint64 {
		return int64(r.next())
	}
	return lo + int64(r.next()%(span+1))
}
