// Package ycsbref computes, for tests, what YCSB's core workload does with
// keys: the exact probabilities of the keys its scrambled zipfian request
// distribution draws, the key names it writes, and the hash it names them
// by. It is derived from YCSB's published algorithm (ZipfianGenerator,
// ScrambledZipfianGenerator, Utils.fnvhash64, CoreWorkload.buildKeyName)
// analytically and independently of the generators in package datagen, so
// that the tests of those generators compare them with a second,
// differently built account of the same distribution rather than with
// themselves.
package ycsbref

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The constants of YCSB's ScrambledZipfianGenerator: a ZipfianGenerator
// over the ranks 0 .. ItemCount (ItemCount+1 items) with the normalizing
// sum precomputed for ItemCount terms at theta 0.99.
const (
	ItemCount = 10_000_000_000
	Zetan     = 26.46902820178302
	Theta     = 0.99
)

// FNVHash64 is YCSB's Utils.fnvhash64: 64-bit FNV-1a of the eight bytes of
// v, lowest first, read as a signed number, and its absolute value (Java's
// Math.abs, which leaves the most negative number as it is). It uses the
// standard library's FNV-1a, not a hand-written loop.
func FNVHash64(v int64) int64 {
	var b [8]byte

	binary.LittleEndian.PutUint64(b[:], uint64(v))

	h := fnv.New64a()
	_, _ = h.Write(b[:])

	s := int64(h.Sum64())
	if s < 0 {
		s = -s
	}

	return s
}

// KeyName is CoreWorkload.buildKeyName: "user", then zeros up to
// zeropadding characters, then the key number, hashed by FNVHash64 unless
// ordered.
func KeyName(keynum int64, zeropadding int, ordered bool) string {
	if !ordered {
		keynum = FNVHash64(keynum)
	}

	v := strconv.FormatInt(keynum, 10)

	return "user" + strings.Repeat("0", max(zeropadding-len(v), 0)) + v
}

// rankProb returns the probability that YCSB's ZipfianGenerator over
// items ranks (constant theta, normalizing sum zetan) returns rank r.
//
// The generator draws u uniform in [0, 1): rank 0 when u*zetan < 1, rank 1
// when u*zetan < 1 + 0.5^theta, else floor(items * (eta*u - eta + 1)^alpha)
// with alpha = 1/(1-theta). Inverting the last: the result is at least r
// exactly when u >= 1 - (1 - (r/items)^(1-theta))/eta, so rank r >= 2 has
// probability ((r+1)/items)^(1-theta) - (r/items)^(1-theta), over eta.
func rankProb(r, items uint64, zetan, theta, eta float64) float64 {
	switch r {
	case 0:
		return 1 / zetan
	case 1:
		return math.Pow(0.5, theta) / zetan
	}

	c := 1 - theta
	x := float64(r) / float64(items)

	// (x + 1/items)^c - x^c, without the cancellation of the direct form.
	return math.Pow(x, c) * math.Expm1(c*math.Log1p(1/float64(r))) / eta
}

// tailMass is the probability of the ranks r >= from (from >= 2).
func tailMass(from, items uint64, theta, eta float64) float64 {
	return (1 - math.Pow(float64(from)/float64(items), 1-theta)) / eta
}

// ScrambledPMF returns the probability of each key 0 .. keys-1 in one
// draw of YCSB's ScrambledZipfianGenerator(0, keys-1): a rank from the
// zipfian over ItemCount+1 items, folded onto the keys as
// FNVHash64(rank) mod keys. The first exactRanks ranks are folded one by
// one; the rest (less than half the mass for exactRanks of a million,
// spread over billions of ranks, each tiny) is spread evenly over the
// keys, which the hash makes exact to well under a millionth of a key's
// probability.
func ScrambledPMF(keys int, exactRanks uint64) []float64 {
	const items = ItemCount + 1

	zeta2 := 1 + math.Pow(0.5, Theta)
	eta := (1 - math.Pow(2/float64(items), 1-Theta)) / (1 - zeta2/Zetan)

	p := make([]float64, keys)

	for r := range exactRanks {
		p[uint64(FNVHash64(int64(r)))%uint64(keys)] += rankProb(r, items, Zetan, Theta, eta)
	}

	tail := tailMass(exactRanks, items, Theta, eta) / float64(keys)
	for k := range p {
		p[k] += tail
	}

	return p
}

// Within returns the distribution of the keys CoreWorkload uses when it
// draws from a generator with probabilities p and draws again while the
// key is n or beyond (not inserted yet): p restricted to [0, n) and
// renormalized.
func Within(p []float64, n int) []float64 {
	n = min(n, len(p))
	out := slices.Clone(p[:n])

	total := 0.0
	for _, v := range out {
		total += v
	}

	for i := range out {
		out[i] /= total
	}

	return out
}

// ExpectedNewKeys is CoreWorkload's allowance for the keys inserted during
// the run: operationcount * insertproportion * 2, truncated.
func ExpectedNewKeys(operationcount int64, insertproportion float64) int64 {
	return int64(float64(operationcount) * insertproportion * 2.0)
}

// Keys is the number of keys CoreWorkload's zipfian request distribution
// folds ranks onto: ScrambledZipfianGenerator(insertstart, insertstart +
// insertcount + expectednewkeys) has that many plus one (its max is
// inclusive), with insertstart 0 and insertcount recordcount.
func Keys(recordcount, operationcount int64, insertproportion float64) int {
	return int(recordcount + ExpectedNewKeys(operationcount, insertproportion) + 1)
}

// HeadShare is the share of the total held by the k largest entries of v.
func HeadShare(v []float64, k int) float64 {
	s := slices.Clone(v)
	slices.SortFunc(s, func(a, b float64) int { return -cmpFloat(a, b) })

	top, total := 0.0, 0.0
	for i, x := range s {
		if i < k {
			top += x
		}

		total += x
	}

	return top / total
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}

	return 0
}

// SkewedLatestPMF returns the probability of each key 0 .. newest when
// YCSB's SkewedLatestGenerator draws with its basis (the last acknowledged
// insert) at newest, its ZipfianGenerator having been built when the basis
// was first (CoreWorkload builds it at recordcount - 1), theta 0.99.
//
// The generator returns newest - r, r drawn by ZipfianGenerator.nextLong(
// newest): over newest items, zetan extended to them, but the constant
// eta = (1 - (2/first)^(1-theta)) / (1 - zeta(2)/zetan) computed from the
// item count it was built with. So key 0 is never drawn, and with eta
// stale the formula branch (u >= u2 = zeta(2)/zetan) yields rank >= r
// exactly when u >= b(r) = 1 - (1 - (r/newest)^(1-theta))/eta, which no
// longer meets u2 at rank 2: rank r gets the part of [u2, 1) in
// [b(r), b(r+1)), ranks 0 and 1 their own branches besides.
func SkewedLatestPMF(newest, first int) []float64 {
	m := newest
	p := make([]float64, newest+1)

	if m < 2 {
		p[newest] = 1

		return p
	}

	zetan := 0.0
	for i := 1; i <= m; i++ {
		zetan += math.Pow(float64(i), -Theta)
	}

	c := 1 - Theta
	zeta2 := 1 + math.Pow(0.5, Theta)
	u2 := zeta2 / zetan
	eta := (1 - math.Pow(2/float64(first), c)) / (1 - zeta2/zetan)

	b := func(r int) float64 {
		if r >= m {
			return 1
		}

		return min(max(1-(1-math.Pow(float64(r)/float64(m), c))/eta, u2), 1)
	}

	rank := make([]float64, m)
	rank[0] = 1 / zetan
	rank[1] = (zeta2 - 1) / zetan

	lower := u2
	for r := range m {
		upper := b(r + 1)
		rank[r] += max(upper-lower, 0)
		lower = max(lower, upper)
	}

	for r, v := range rank {
		p[newest-r] = v
	}

	return p
}
