// Package splitmix is SplitMix64, the one generator behind every seeded
// choice mcpdrill makes (fault rolls and their random choices, schema
// corruption, the testbed's generated data). Streams are fixed by their
// seed: changing anything here changes every recorded fault and golden.
package splitmix

// Gamma is the increment between two states of a stream (2^64 over the
// golden ratio).
const Gamma = 0x9e3779b97f4a7c15

// Mix is the SplitMix64 finaliser: a bijection of 64-bit values that
// spreads every input bit over the output.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Next advances the stream state *s by Gamma and returns its next value.
func Next(s *uint64) uint64 {
	*s += Gamma
	return Mix(*s)
}
