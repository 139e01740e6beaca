package studies

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Shard selects every Count-th server starting at Index (1-based) in name
// order.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// The environment "auto" shards read: the index Kubernetes gives each pod
// of an Indexed Job (0-based) and the shard count, which the job sets.
const (
	EnvShardIndex = "JOB_COMPLETION_INDEX"
	EnvShardCount = "MCPDRILL_SHARD_COUNT"
)

// ParseShard reads "K/N" (1 <= K <= N), or "auto" or "auto/N": shard
// JOB_COMPLETION_INDEX+1 of N, N from "auto/N" or else from
// MCPDRILL_SHARD_COUNT. lookupEnv reads the environment (nil:
// os.LookupEnv).
func ParseShard(s string, lookupEnv func(string) (string, bool)) (Shard, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if s == "auto" || strings.HasPrefix(s, "auto/") {
		return autoShard(s, lookupEnv)
	}
	var sh Shard
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return sh, fmt.Errorf("shard %q: want K/N, auto or auto/N", s)
	}
	var err error
	if sh.Index, err = shardNumber(k); err == nil {
		sh.Count, err = shardNumber(n)
	}
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: want K/N: %w", s, err)
	}
	if sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 1 <= K <= N", s)
	}
	return sh, nil
}

// autoShard reads "auto" and "auto/N" from the environment.
func autoShard(s string, lookupEnv func(string) (string, bool)) (Shard, error) {
	count := 0
	if n, ok := strings.CutPrefix(s, "auto/"); ok {
		c, err := shardNumber(n)
		if err != nil || c < 1 {
			return Shard{}, fmt.Errorf("shard %q: want auto/N with N >= 1", s)
		}
		count = c
	}
	if v, ok := lookupEnv(EnvShardCount); ok && v != "" {
		c, err := shardNumber(v)
		switch {
		case err != nil || c < 1:
			return Shard{}, fmt.Errorf("shard %s: %s=%q: want a count >= 1", s, EnvShardCount, v)
		case count != 0 && c != count:
			return Shard{}, fmt.Errorf("shard %s: %s=%d says otherwise", s, EnvShardCount, c)
		}
		count = c
	}
	if count == 0 {
		return Shard{}, fmt.Errorf("shard auto: %s is not set (or give auto/N)", EnvShardCount)
	}
	v, ok := lookupEnv(EnvShardIndex)
	if !ok || v == "" {
		return Shard{}, fmt.Errorf("shard %s: %s is not set (Kubernetes sets it in the pods of an Indexed Job)", s, EnvShardIndex)
	}
	i, err := shardNumber(v)
	if err != nil || i >= count {
		return Shard{}, fmt.Errorf("shard %s: %s=%q: want 0 to %d", s, EnvShardIndex, v, count-1)
	}
	return Shard{Index: i + 1, Count: count}, nil
}

// shardNumber reads a decimal number written without sign or leading
// zeros.
func shardNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("%q is not a plain decimal number", s)
	}
	return n, nil
}

// Select returns the entries of this shard; the zero Shard selects all.
// An entry goes to the shard of its index in name order (mod Count), and
// an entry marked previous_of to the shard of the entry it names, so that
// the shard that scans a release also scans the release before it and
// grades the pair.
func (sh Shard) Select(entries []Entry) []Entry {
	if sh.Count <= 1 {
		return entries
	}
	index := map[string]int{}
	for i, e := range entries {
		index[e.Name] = i
	}
	var out []Entry
	for i, e := range entries {
		if j, ok := index[e.PreviousOf]; ok {
			i = j
		}
		if i%sh.Count == sh.Index-1 {
			out = append(out, e)
		}
	}
	return out
}
