package datagen

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/spec/datagen/ycsbref"
)

// TestYCSBHash checks ycsbHash, YCSB's Utils.fnvhash64, against values
// worked out from the FNV-1a specification (offset basis
// 0xcbf29ce484222325, prime 2^40 + 0x1b3, the eight bytes lowest first,
// then the absolute value of the signed result), computed apart from this
// code:
//
//	python3 -c 'h=0xcbf29ce484222325
//	for i in range(8): h=((h^((v>>8*i)&255))*1099511628211)%2**64
//	print(abs(h-2**64 if h>=2**63 else h))'
//
// and against the standard library's FNV-1a (ycsbref) for many keys.
func TestYCSBHash(t *testing.T) {
	t.Parallel()

	known := map[uint64]int64{
		0:         6284781860667377211,
		1:         8517097267634966620,
		2:         1820151046732198393,
		42:        55488592825689361,
		999:       2071219101098386137,
		1000:      5952875239596136740,
		123456789: 2350796791908741607,
	}

	for v, want := range known {
		if got := ycsbHash(v); got != want {
			t.Errorf("ycsbHash(%d) = %d, want %d", v, got, want)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 100_000 {
		v := uint64(i)
		if i%2 == 1 {
			v = rng.Uint64N(1 << 62)
		}

		if got, want := ycsbHash(v), ycsbref.FNVHash64(int64(v)); got != want {
			t.Fatalf("ycsbHash(%d) = %d, standard FNV-1a gives %d", v, got, want)
		}
	}
}

// TestYCSBZetan checks YCSB's precomputed ZETAN, the sum of i^-0.99 for i
// up to ten billion, against zetaSum, which computes the same sum another
// way (a million terms, then the Euler-Maclaurin tail), and checks that
// the scrambler's first two ranks have YCSB's probabilities 1/zetan and
// 0.5^0.99/zetan.
func TestYCSBZetan(t *testing.T) {
	t.Parallel()

	z := zetaSum(0, 0, ycsbItemCount, 0.99)
	if rel := math.Abs(z-ycsbZetan) / ycsbZetan; rel > 1e-9 {
		t.Errorf("zeta(1e10, 0.99) = %.15g, YCSB's ZETAN %.15g (relative difference %.2g)", z, ycsbZetan, rel)
	}

	s := newScrambler(0.99)
	if want := (1 + math.Pow(0.5, 0.99)) / ycsbZetan; math.Abs(s.zeta2/s.zetan-want) > 1e-15 {
		t.Errorf("ranks 0 and 1 take %v of the draws, want %v", s.zeta2/s.zetan, want)
	}

	// Another theta gets its own sum over the same items.
	if s := newScrambler(0.5); math.Abs(s.zetan-zetaSum(0, 0, ycsbItemCount, 0.5)) > 1e-6 {
		t.Errorf("theta 0.5: zetan %v", s.zetan)
	}
}

// drawCounts draws samples keys from src after advancing counter k to n
// keys and counts them.
func drawCounts(tb testing.TB, src string, n, samples int) []float64 {
	tb.Helper()

	e := newEnv(tb, 11, "")
	ins := compileYAML(tb, e, "{^seq: {counter: k}}")
	tmpl := compileYAML(tb, e, src)
	s := e.NewScope(0)

	for range n {
		ins.Value(s)
	}

	c := make([]float64, n)

	for range samples {
		v := tmpl.Value(s).(int64)
		if v < 0 || v >= int64(n) {
			tb.Fatalf("%s yielded %d, outside the %d keys inserted", src, v, n)
		}

		c[v]++
	}

	return c
}

// TestYCSBHeadShare checks the share of the hottest keys of workload C's
// key draw (^key zipfian sized by recordcount, as the bundled workload
// writes it) against the reference computation of YCSB's distribution,
// and the distribution as a whole by chi-square.
func TestYCSBHeadShare(t *testing.T) {
	t.Parallel()

	const records, samples = 1000, 200_000

	c := drawCounts(t, "{^key: {distribution: zipfian, counter: k, recordcount: 1000}}", records, samples)
	ref := ycsbref.Within(ycsbref.ScrambledPMF(ycsbref.Keys(records, 0, 0), refRanks), records)

	got, want := ycsbref.HeadShare(c, 10), ycsbref.HeadShare(ref, 10)
	t.Logf("top-10 of %d keys: %.4f drawn, %.4f by the reference", records, got, want)

	// The 10 keys of the hottest ranks hold at least ranks 0-9, 11.8%.
	if want < 0.118 || want > 0.14 {
		t.Errorf("reference top-10 share %.4f, outside [0.118, 0.14]", want)
	}

	// Sampling error of a share near 0.126 over 200,000 draws: 0.0007.
	if math.Abs(got-want) > 0.004 {
		t.Errorf("top-10 share %.4f, reference %.4f", got, want)
	}

	stat, df := chiSquare(c, ref)
	if bound := chiSquareBound(df); stat > bound {
		t.Errorf("keys do not fit YCSB's distribution: chi-square %.1f > %.1f", stat, bound)
	}
}

// TestYCSBHotSetStable checks that the hot keys stay where they are while
// inserts grow the key space: drawn over a counter at 1,000 keys, then at
// 2,000, folded onto a fixed 2,001 (YCSB's sizing for 1,000 records and
// 10,000 operations with 5% inserts), the hottest keys at 1,000 keep their
// draws at 2,000, and both samples fit the reference.
func TestYCSBHotSetStable(t *testing.T) {
	t.Parallel()

	const src = "{^key: {distribution: zipfian, counter: k, recordcount: 1000, operationcount: 10000, insertproportion: 0.05}}"

	keys := ycsbref.Keys(1000, 10000, 0.05)
	if keys != 2001 {
		t.Fatalf("ycsbref.Keys = %d, want 1000 + 10000*0.05*2 + 1", keys)
	}

	pmf := ycsbref.ScrambledPMF(keys, refRanks)
	counts := map[int][]float64{}

	for _, n := range []int{1000, 2000} {
		c := drawCounts(t, src, n, 200_000)
		ref := ycsbref.Within(pmf, n)

		stat, df := chiSquare(c, ref)
		t.Logf("%d keys inserted: top-10 share %.4f drawn, %.4f by the reference; chi-square %.1f (%d df)",
			n, ycsbref.HeadShare(c, 10), ycsbref.HeadShare(ref, 10), stat, df)

		if bound := chiSquareBound(df); stat > bound {
			t.Errorf("%d keys: chi-square %.1f > %.1f", n, stat, bound)
		}

		counts[n] = c
	}

	// The five hottest keys at 1,000 keys are among the ten hottest at
	// 2,000 (folded modulo the key count, as before, they would move).
	hot2000 := topKeys(counts[2000], 10)

	for _, k := range topKeys(counts[1000], 5) {
		if !slices.Contains(hot2000, k) {
			t.Errorf("key %d, among the 5 hottest at 1,000 keys, is not among the 10 hottest at 2,000 (%v)", k, hot2000)
		}
	}
}

// topKeys returns the indexes of the n largest counts.
func topKeys(c []float64, n int) []int {
	idx := make([]int, len(c))
	for i := range idx {
		idx[i] = i
	}

	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(c[b], c[a]) })

	return idx[:n]
}

// TestYCSBKeySizingErrors checks the arguments that size ^key's zipfian.
func TestYCSBKeySizingErrors(t *testing.T) {
	t.Parallel()

	cases := map[string]string{
		"{^key: {distribution: zipfian, max: 9, operationcount: 10}}":                     "recordcount, which is missing",
		"{^key: {distribution: zipfian, max: 9, recordcount: -1}}":                        "recordcount must be between 0 and",
		"{^key: {distribution: zipfian, max: 9, recordcount: 10, insertproportion: 1.5}}": "insertproportion must be between 0 and 1",
		"{^keyname: {key: 1, zeropadding: 65}}":                                           "zeropadding must be between 0 and 64",
		"{^ycsbBytes: -1}":                                                                "length must be between 0 and",
	}

	for src, want := range cases {
		e := newEnv(t, 1, "")
		if _, errs := e.Compile(parseYAML(t, src), "t"); len(errs) == 0 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s: errors %v, want one containing %q", src, errs, want)
		}
	}

	// The sizing applies to every distribution (a workload passes it
	// whatever requestdistribution is); the others ignore it.
	for _, d := range []string{"uniform", "latest", "hotspot", "exponential", "sequential"} {
		e := newEnv(t, 1, "")
		src := "{^key: {distribution: " + d + ", min: 0, max: 9, recordcount: 10, operationcount: 5, insertproportion: 0.5}}"

		if _, errs := e.Compile(parseYAML(t, src), "t"); errs != nil {
			t.Errorf("%s: %v", src, errs)
		}
	}
}

// TestYCSBKeyNames checks ^keyname against YCSB's buildKeyName as the
// reference writes it: hashed and ordered, with zero padding.
func TestYCSBKeyNames(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	s := e.NewScope(0)

	cases := []struct {
		src     string
		key     int64
		pad     int
		ordered bool
	}{
		{"{^keyname: {key: 42}}", 42, 1, false},
		{"{^keyname: {key: 0}}", 0, 1, false},
		{"{^keyname: {key: 42, order: ordered}}", 42, 1, true},
		{"{^keyname: {key: 42, order: ordered, zeropadding: 6}}", 42, 6, true},
		{"{^keyname: {key: 7, zeropadding: 25}}", 7, 25, false},
	}

	for _, tc := range cases {
		got := compileYAML(t, e, tc.src).Value(s)
		if want := ycsbref.KeyName(tc.key, tc.pad, tc.ordered); got != want {
			t.Errorf("%s = %v, want %s", tc.src, got, want)
		}
	}

	// Worked out by hand: "user" + 55488592825689361 (TestYCSBHash), and
	// the same padded to 20 digits.
	if got := KeyName("user", 42, true, 20); got != "user00055488592825689361" {
		t.Errorf("KeyName(42, hashed, 20) = %s", got)
	}
}

// TestYCSBBytes checks ^ycsbBytes against what YCSB's RandomByteIterator
// writes: in each group of six bytes, positions 0 and 3 in ' '..'?'
// (0x20-0x3f), 1 and 4 in ' '..'_' (0x20-0x5f), 2 and 5 in ' '..'?' or
// '`'..DEL (0x20-0x3f, 0x60-0x7f); every one of those values occurs; the
// value is BSON binary of the asked length.
func TestYCSBBytes(t *testing.T) {
	t.Parallel()

	allowed := func(pos int, b byte) bool {
		switch pos % 3 {
		case 0:
			return b >= 0x20 && b <= 0x3f
		case 1:
			return b >= 0x20 && b <= 0x5f
		default:
			return (b >= 0x20 && b <= 0x3f) || (b >= 0x60 && b <= 0x7f)
		}
	}

	e := newEnv(t, 3, "")
	s := e.NewScope(0)
	tmpl := compileYAML(t, e, "{^ycsbBytes: 100}")

	var seen [6][256]bool

	for range 2000 {
		bin, ok := tmpl.Value(s).(bson.Binary)
		if !ok || bin.Subtype != 0 || len(bin.Data) != 100 {
			t.Fatalf("^ycsbBytes: 100 yielded %#v, want 100 bytes of BSON binary subtype 0", tmpl.Value(s))
		}

		for i, b := range bin.Data {
			pos := i % 6
			if !allowed(pos, b) {
				t.Fatalf("byte %d (position %d of its group) is %#x, outside YCSB's range", i, pos, b)
			}

			seen[pos][b] = true
		}
	}

	for pos := range 6 {
		for b := range 256 {
			if allowed(pos, byte(b)) && !seen[pos][b] {
				t.Errorf("position %d never had %#x", pos, b)
			}
		}
	}

	// A length that is not a multiple of six ends with the first positions.
	bin := compileYAML(t, e, "{^ycsbBytes: {length: 8}}").Value(s).(bson.Binary)
	if len(bin.Data) != 8 || !allowed(0, bin.Data[6]) || !allowed(1, bin.Data[7]) {
		t.Errorf("^ycsbBytes: 8 = %q", bin.Data)
	}
}

// TestYCSBLatest checks ^key's latest, YCSB's SkewedLatestGenerator, by
// chi-square against the reference: drawn first when 1,000 keys are
// inserted (the generator takes eta's item count, 999, then), then over
// 2,000 keys, where YCSB's stale eta has moved draws away from the newest
// keys, and the oldest key is never drawn.
func TestYCSBLatest(t *testing.T) {
	t.Parallel()

	// Without growth the reference is Gray's zipfian over the keys but
	// the oldest, newest first (grayProbs, built apart from it).
	ref := ycsbref.SkewedLatestPMF(999, 999)
	for r, v := range grayProbs(999, 0.99) {
		if math.Abs(ref[999-r]-v) > 1e-12 {
			t.Fatalf("SkewedLatestPMF(999, 999) of key %d = %v, Gray's method %v", 999-r, ref[999-r], v)
		}
	}

	e := newEnv(t, 5, "")
	ins := compileYAML(t, e, "{^seq: {counter: k}}")
	tmpl := compileYAML(t, e, "{^key: {distribution: latest, counter: k}}")
	s := e.NewScope(0)

	for range 1000 {
		ins.Value(s)
	}

	tmpl.Value(s)

	for range 1000 {
		ins.Value(s)
	}

	const samples = 200_000

	c := make([]float64, 2000)

	for range samples {
		v := tmpl.Value(s).(int64)
		if v < 1 || v > 1999 {
			t.Fatalf("latest drew %d, want a key in [1, 1999]", v)
		}

		c[v]++
	}

	want := ycsbref.SkewedLatestPMF(1999, 999)
	math10 := 0.0

	for _, v := range grayProbs(2000, 0.99)[:10] {
		math10 += v
	}

	got10, want10 := 0.0, 0.0
	for k := 1990; k < 2000; k++ {
		got10 += c[k] / samples
		want10 += want[k]
	}

	stat, df := chiSquare(c, want)
	t.Logf("2,000 keys, first drawn at 1,000: the 10 newest take %.4f of the draws, %.4f by YCSB's generator, %.4f by Gray's zipfian over the keys; chi-square %.1f (%d df)",
		got10, want10, math10, stat, df)

	if bound := chiSquareBound(df); stat > bound {
		t.Errorf("keys do not fit YCSB's SkewedLatestGenerator: chi-square %.1f > %.1f", stat, bound)
	}
}

// TestScrambleRedrawBound checks that a scrambled zipfian whose keys reach
// far beyond the inserted ones still yields an inserted key: after
// maxScrambleRedraws draws beyond them it folds onto the inserted keys.
func TestScrambleRedrawBound(t *testing.T) {
	t.Parallel()

	c := drawCounts(t, "{^zipfian: {counter: k, scrambled: true, keys: 1000000000000}}", 10, 200)

	total := 0.0
	for _, v := range c {
		total += v
	}

	if total != 200 {
		t.Errorf("drew %v keys, want 200 (each of the 10 inserted)", total)
	}
}
