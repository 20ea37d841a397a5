package datagen

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// What the YCSB core workload does with keys and values, written from its
// published algorithm (site.ycsb.generator.ScrambledZipfianGenerator,
// ZipfianGenerator, site.ycsb.Utils, site.ycsb.RandomByteIterator).

// The constants of YCSB's ScrambledZipfianGenerator. It draws ranks from a
// ZipfianGenerator over a fixed, very large number of items, not over the
// keys, and folds the rank onto the keys with a hash: the popular ranks are
// the same whatever the number of keys, so the hot keys stay where they are
// as inserts grow the key space, and the share of the hottest keys is what
// a zipfian over ten billion items gives (ranks 0 to 9 take 11.8% of the
// draws), not what one over the keys would (over 1,000 keys, 40%).
const (
	// ycsbItemCount is ITEM_COUNT; the generator draws ranks 0 ..
	// ycsbItemCount (its max is inclusive, so it has one item more).
	ycsbItemCount = 10_000_000_000
	// ycsbZetan is ZETAN, YCSB's precomputed sum of i^-0.99 for i in 1 ..
	// ycsbItemCount.
	ycsbZetan = 26.46902820178302
)

// ycsbHash is YCSB's Utils.fnvhash64: the 64-bit FNV-1a hash of the eight
// bytes of v, lowest first, read as a signed number, made non-negative by
// Java's Math.abs (which leaves -2^63 negative; no key below 2^63 hashes
// to it in practice, and the callers reduce it as an unsigned number).
func ycsbHash(v uint64) int64 {
	h := int64(fnv64(v))
	if h < 0 {
		h = -h
	}

	return h
}

// scrambler draws the ranks of YCSB's scrambled zipfian: Gray's method
// over ycsbItemCount+1 items with the normalizing sum fixed (ZETAN at theta
// 0.99, computed once for another theta), so one uniform number and one
// power per draw and nothing that depends on the number of keys.
type scrambler struct {
	zetan, eta, alpha, zeta2 float64
}

func newScrambler(theta float64) *scrambler {
	zetan := ycsbZetan
	if theta != DefaultTheta {
		zetan = zetaSum(0, 0, ycsbItemCount, theta)
	}

	const items = ycsbItemCount + 1

	zeta2 := 1 + math.Pow(0.5, theta)

	return &scrambler{
		zetan: zetan,
		eta:   (1 - math.Pow(2.0/items, 1-theta)) / (1 - zeta2/zetan),
		alpha: 1 / (1 - theta),
		zeta2: zeta2,
	}
}

// rank draws a rank in [0, ycsbItemCount+1].
func (z *scrambler) rank(s *Scope) uint64 {
	return zipfRank(s.rng.Float64(), z.zetan, z.zeta2, z.eta, z.alpha, float64(ycsbItemCount+1))
}

// key draws a key in [0, keys): the rank's hash modulo keys.
func (z *scrambler) key(s *Scope, keys uint64) uint64 {
	return uint64(ycsbHash(z.rank(s))) % keys
}

// maxScrambleRedraws bounds the redraws of a scrambled zipfian whose keys
// reach beyond the keys inserted so far. YCSB redraws without a bound; the
// chance of a redraw is the share of the not yet inserted keys, which the
// YCSB sizing keeps near half at most, so the bound is never reached
// unless keys is far larger than the key space.
const maxScrambleRedraws = 1000

// compileYCSBBytes compiles ^ycsbBytes: {length: n}: what YCSB's core
// workload stores in a field, n bytes of its RandomByteIterator, as the
// MongoDB clients of YCSB and go-ycsb store a byte array: BSON binary,
// subtype 0.
func compileYCSBBytes(k *call) *compiled {
	n := k.intIn("length", 100, 0, maxStringLen)
	if !k.ok {
		return nil
	}

	return &compiled{gen: ycsbBytesGen(n), elems: 1 + float64(n/16)}
}

// ycsbBytesGen yields RandomByteIterator's bytes. Each 32-bit random
// number gives six bytes, each a space (0x20) plus a few of its bits: bits
// 0-4, 5-10, 10-16 (only the values 0-31 and 64-95), 15-19, 20-25 and 25-31
// (likewise), so the six positions range over ' '..'?', ' '..'_', ' '..'?'
// or '`'..DEL, and again. A shorter last group takes the first positions.
type ycsbBytesGen int

func (g ycsbBytesGen) value(s *Scope) any {
	b := make([]byte, int(g))

	for i := 0; i < len(b); i += 6 {
		r := int32(s.rng.Uint32())
		group := b[i:min(i+6, len(b))]
		shifts := [6]uint{0, 5, 10, 15, 20, 25}
		masks := [6]int32{31, 63, 95, 31, 63, 95}

		for j := range group {
			group[j] = byte((r>>shifts[j])&masks[j]) + ' '
		}
	}

	return bson.Binary{Subtype: bson.TypeBinaryGeneric, Data: b}
}
