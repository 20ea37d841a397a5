package datagen

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/spec/datagen/ycsbref"
)

// The goodness-of-fit tests draw a fixed number of keys with a fixed seed
// and compare their counts with the distribution's exact probabilities by
// Pearson's chi-square test. The bound is the 99.9% quantile of the
// chi-square distribution, so a correct generator fails with probability
// 0.001 for a random seed, and, with the seed fixed, never; a generator
// whose probabilities are off by a few percent on a few keys fails (see
// TestGOFRejectsWrongDistributions).

const (
	gofKeys    = 100     // keys in the range
	gofSamples = 200_000 // draws per test
)

// gofCounts draws gofSamples keys of template src (one worker) and counts
// them by key - lo.
func gofCounts(tb testing.TB, src string, lo int64, n int) []float64 {
	tb.Helper()

	e := newEnv(tb, 7, "")
	tmpl := compileYAML(tb, e, src)
	s := e.NewScope(0)
	c := make([]float64, n)

	for range gofSamples {
		v, ok := tmpl.Value(s).(int64)
		if !ok || v < lo || v >= lo+int64(n) {
			tb.Fatalf("%s yielded %v, outside [%d, %d]", src, tmpl.Value(s), lo, lo+int64(n)-1)
		}

		c[v-lo]++
	}

	return c
}

// chiSquare returns Pearson's statistic of counts against probabilities p,
// pooling the keys whose expected count is below 5 into one cell (the
// approximation by the chi-square distribution needs that), and the
// degrees of freedom.
func chiSquare(counts, p []float64) (stat float64, df int) {
	total := 0.0
	for _, c := range counts {
		total += c
	}

	var poolObs, poolExp float64

	cells := 0

	for i, c := range counts {
		exp := p[i] * total
		if exp < 5 {
			poolObs += c
			poolExp += exp

			continue
		}

		stat += (c - exp) * (c - exp) / exp
		cells++
	}

	if poolExp > 0 {
		stat += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
		cells++
	}

	return stat, cells - 1
}

// chiSquareBound is the 99.9% quantile of the chi-square distribution with
// df degrees of freedom, by the Wilson-Hilferty approximation (accurate to
// well under 1% for df >= 10).
func chiSquareBound(df int) float64 {
	const z = 3.090232 // 99.9% quantile of the standard normal
	k := float64(df)
	a := 2 / (9 * k)

	return k * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// zipfProbs returns the Zipfian probabilities of ranks 0..n-1.
func zipfProbs(n int, theta float64) []float64 {
	p := make([]float64, n)
	sum := 0.0

	for i := range p {
		p[i] = math.Pow(float64(i+1), -theta)
		sum += p[i]
	}

	for i := range p {
		p[i] /= sum
	}

	return p
}

// grayProbs returns the exact probabilities of ranks 0..n-1 that the
// method of Gray et al. yields, derived from its inverse transform rather
// than by running it: rank 0 for u < 1/zeta(n), rank 1 up to
// (1+0.5^theta)/zeta(n), and rank r >= 2 while n*(eta*u-eta+1)^(1/(1-theta))
// is in [r, r+1), i.e. u in [b(r), b(r+1)) with
// b(r) = 1 + ((r/n)^(1-theta) - 1)/eta. The method is an approximation of
// the Zipfian probabilities of zipfProbs for ranks 2 and above (it treats
// the tail as continuous); TestGrayDeparture measures by how much.
func grayProbs(n int, theta float64) []float64 {
	zeta := 0.0
	for i := 1; i <= n; i++ {
		zeta += math.Pow(float64(i), -theta)
	}

	zeta2 := 1 + math.Pow(0.5, theta)
	u0 := zeta2 / zeta
	eta := (1 - math.Pow(2/float64(n), 1-theta)) / (1 - u0)
	b := func(r int) float64 {
		if r >= n {
			return 1
		}

		return min(max(1+(math.Pow(float64(r)/float64(n), 1-theta)-1)/eta, u0), 1)
	}

	p := make([]float64, n)
	p[0] = 1 / zeta
	p[1] = (zeta2 - 1) / zeta

	for r := 2; r < n; r++ {
		p[r] = b(r+1) - b(r)
	}

	return p
}

// theory are the exact key probabilities of the distributions, over keys
// 0..gofKeys-1 (min 0, max gofKeys-1).
var theory = map[string]func() []float64{
	"uniform":       uniformProbs,
	"zipfian 0.99":  func() []float64 { return grayProbs(gofKeys, 0.99) },
	"zipfian 0.5":   func() []float64 { return grayProbs(gofKeys, 0.5) },
	"zipfian 1.5":   func() []float64 { return grayProbs(gofKeys, 1.5) },
	"scrambled":     func() []float64 { return scrambledProbs(gofKeys) },
	"latest":        func() []float64 { return reversed(grayProbs(gofKeys, 0.99)) },
	"hotspot":       func() []float64 { return hotspotProbs(gofKeys, 0.2, 0.8) },
	"exponential":   func() []float64 { return reversed(exponentialProbs(gofKeys, 95, 0.8571428571428571)) },
	"live zipfian":  func() []float64 { return grayProbs(gofKeys, 0.99) },
	"live latest":   func() []float64 { return reversed(grayProbs(gofKeys, 0.99)) },
	"live uniform":  uniformProbs,
	"live hotspot":  func() []float64 { return hotspotProbs(gofKeys, 0.2, 0.8) },
	"live scramble": func() []float64 { return scrambledProbs(gofKeys) },
	"live scramble, keys": func() []float64 {
		return ycsbref.Within(ycsbref.ScrambledPMF(gofKeys*3/2, refRanks), gofKeys)
	},
}

// gofCases are the templates under test, by the name of their theory. The
// live ones draw over a named counter that a ^seq has advanced to 100
// keys.
var gofCases = []struct{ name, src string }{
	{"uniform", "{^uniform: {min: 0, max: 99}}"},
	{"zipfian 0.99", "{^zipfian: {min: 0, max: 99}}"},
	{"zipfian 0.5", "{^zipfian: {min: 0, max: 99, theta: 0.5}}"},
	{"zipfian 1.5", "{^zipfian: {min: 0, max: 99, theta: 1.5}}"},
	{"scrambled", "{^zipfian: {min: 0, max: 99, scrambled: true}}"},
	{"latest", "{^latest: {min: 0, max: 99}}"},
	{"hotspot", "{^hotspot: {min: 0, max: 99, hot_fraction: 0.2, hot_probability: 0.8}}"},
	{"exponential", "{^exponential: {min: 0, max: 99}}"},
	{"live zipfian", "{^zipfian: {counter: k}}"},
	{"live latest", "{^latest: {counter: k}}"},
	{"live uniform", "{^uniform: {counter: k}}"},
	{"live hotspot", "{^hotspot: {counter: k, hot_fraction: 0.2, hot_probability: 0.8}}"},
	{"live scramble", "{^zipfian: {counter: k, scrambled: true}}"},
	// Folded onto 150 keys, of which the 100 inserted are drawn.
	{"live scramble, keys", "{^zipfian: {counter: k, scrambled: true, keys: 150}}"},
}

func uniformProbs() []float64 {
	p := make([]float64, gofKeys)
	for i := range p {
		p[i] = 1.0 / gofKeys
	}

	return p
}

func reversed(p []float64) []float64 {
	out := make([]float64, len(p))
	for i, v := range p {
		out[len(p)-1-i] = v
	}

	return out
}

// refRanks is how many ranks of YCSB's scrambled zipfian ycsbref folds one
// by one (the rest it spreads evenly).
const refRanks = 1 << 20

// scrambledProbs is YCSB's scrambled zipfian (theta 0.99) over n keys,
// from the independent reference.
func scrambledProbs(n int) []float64 {
	return ycsbref.ScrambledPMF(n, refRanks)
}

func hotspotProbs(n int, frac, prob float64) []float64 {
	hot := int(math.Floor(frac * float64(n)))
	p := make([]float64, n)

	for i := range p {
		if i < hot {
			p[i] = prob / float64(hot)
		} else {
			p[i] = (1 - prob) / float64(n-hot)
		}
	}

	return p
}

// exponentialProbs returns the probabilities of distances 0..n-1 from the
// newest key: an exponential distribution discretized by flooring and
// truncated to the range (draws beyond it are drawn again).
func exponentialProbs(n int, percentile, frac float64) []float64 {
	rate := -math.Log(1-percentile/100) / (frac * float64(n))
	p := make([]float64, n)
	inside := 1 - math.Exp(-rate*float64(n))

	for d := range p {
		p[d] = (math.Exp(-rate*float64(d)) - math.Exp(-rate*float64(d+1))) / inside
	}

	return p
}

// liveSource prepends a ^seq that declares counter k and advances it to
// gofKeys, so the live range is [0, 99] as for the fixed cases.
func liveCounts(tb testing.TB, src string) []float64 {
	tb.Helper()

	e := newEnv(tb, 7, "")
	ins := compileYAML(tb, e, "{^seq: {counter: k}}")
	tmpl := compileYAML(tb, e, src)
	s := e.NewScope(0)

	// Grow the range one key at a time while drawing, as inserts during a
	// run do, then draw the sample over the full range: the incremental
	// normalizing sum must end up where a fresh one would be.
	for range gofKeys {
		ins.Value(s)
		_ = tmpl.Value(s)
	}

	c := make([]float64, gofKeys)

	for range gofSamples {
		v := tmpl.Value(s).(int64)
		if v < 0 || v >= gofKeys {
			tb.Fatalf("%s yielded %d, outside [0, %d]", src, v, gofKeys-1)
		}

		c[v]++
	}

	return c
}

// TestKeyDistributionsFit is the goodness-of-fit test of every key
// distribution against its exact probabilities.
func TestKeyDistributionsFit(t *testing.T) {
	t.Parallel()

	for _, tc := range gofCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			var c []float64
			if len(tc.name) > 5 && tc.name[:5] == "live " {
				c = liveCounts(t, tc.src)
			} else {
				c = gofCounts(t, tc.src, 0, gofKeys)
			}

			stat, df := chiSquare(c, theory[tc.name]())
			bound := chiSquareBound(df)

			t.Logf("%s: chi-square %.1f, %d degrees of freedom, bound %.1f", tc.src, stat, df, bound)

			if stat > bound {
				t.Errorf("%s does not fit its distribution: chi-square %.1f > %.1f (%d degrees of freedom)", tc.src, stat, bound, df)
			}
		})
	}
}

// TestGrayDeparture measures how far the method of Gray et al. (what YCSB
// runs) is from the Zipfian law it approximates, as the share of the ten
// most frequent keys, and bounds it: the approximation must keep the head
// of the distribution, which is what a benchmark's hot keys are.
func TestGrayDeparture(t *testing.T) {
	t.Parallel()

	for _, n := range []int{100, 1000, 100_000} {
		g, z := grayProbs(n, 0.99), zipfProbs(n, 0.99)
		gTop, zTop := 0.0, 0.0

		for r := range 10 {
			gTop += g[r]
			zTop += z[r]
		}

		t.Logf("n = %d, theta 0.99: top-10 share %.4f by Gray's method, %.4f by the Zipfian law", n, gTop, zTop)

		if math.Abs(gTop-zTop) > 0.02 {
			t.Errorf("n = %d: top-10 share %.4f departs from the Zipfian %.4f by more than 0.02", n, gTop, zTop)
		}

		sum := 0.0
		for _, v := range g {
			sum += v
		}

		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("n = %d: Gray probabilities sum to %v", n, sum)
		}
	}
}

// TestGOFRejectsWrongDistributions shows that the bound of
// TestKeyDistributionsFit has power: samples of a slightly different
// distribution fail it.
func TestGOFRejectsWrongDistributions(t *testing.T) {
	t.Parallel()

	wrong := []struct {
		name, src, theory string
	}{
		{"theta 0.9 for 0.99", "{^zipfian: {min: 0, max: 99, theta: 0.9}}", "zipfian 0.99"},
		{"unscrambled for scrambled", "{^zipfian: {min: 0, max: 99}}", "scrambled"},
		{"hot probability 0.78 for 0.8", "{^hotspot: {min: 0, max: 99, hot_fraction: 0.2, hot_probability: 0.78}}", "hotspot"},
		{"percentile 94 for 95", "{^exponential: {min: 0, max: 99, percentile: 94}}", "exponential"},
		{"zipfian over 99 keys for 100", "{^zipfian: {min: 0, max: 98}}", "zipfian 0.99"},
	}

	for _, tc := range wrong {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			stat, df := chiSquare(gofCounts(t, tc.src, 0, gofKeys), theory[tc.theory]())
			t.Logf("%s against %s: chi-square %.1f, bound %.1f", tc.src, tc.theory, stat, chiSquareBound(df))

			if bound := chiSquareBound(df); stat <= bound {
				t.Errorf("%s passed as %s: chi-square %.1f <= %.1f", tc.src, tc.theory, stat, bound)
			}
		})
	}
}

// TestLiveKeySpace checks that inserts through a named counter from many
// workers hand out every key once, and that draws over the counter reach
// the newest keys.
func TestLiveKeySpace(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	// The run's insert is compiled before the load that sets the start,
	// as the engine compiles operations before load steps.
	insert := compileYAML(t, e, "{^seq: {counter: users}}")
	load := compileYAML(t, e, "{_id: {^seq: {counter: users, start: 1000}}}")
	latest := compileYAML(t, e, "{^latest: {min: 1000, counter: users}}")

	if errs := e.UndeclaredCounters(); errs != nil {
		t.Fatalf("UndeclaredCounters: %v", errs)
	}

	const workers, each = 4, 500

	var (
		mu   sync.Mutex
		seen = make(map[int64]int)
		wg   sync.WaitGroup
	)

	for w := range workers {
		wg.Go(func() {
			s := e.NewScope(w)
			for i := range each {
				var k int64
				if i%2 == 0 {
					k = load.Value(s).(bson.D)[0].Value.(int64)
				} else {
					k = insert.Value(s).(int64)
				}

				mu.Lock()
				seen[k]++
				mu.Unlock()
			}
		})
	}

	wg.Wait()

	for k := int64(1000); k < 1000+workers*each; k++ {
		if seen[k] != 1 {
			t.Fatalf("key %d handed out %d times, want once", k, seen[k])
		}
	}

	// The newest key is the most frequent draw of ^latest.
	s := e.NewScope(9)
	newest := int64(1000 + workers*each - 1)
	hits := 0

	for range 1000 {
		if latest.Value(s).(int64) == newest {
			hits++
		}
	}

	if p := grayProbs(workers*each, 0.99)[0]; hits < int(0.5*p*1000) {
		t.Errorf("newest key %d drawn %d times in 1000, want about %.0f", newest, hits, p*1000)
	}
}

// TestLiveRangeStartsAtCounterStart checks that a live range without min
// starts at its counter's start, even when the ^seq giving the start is
// compiled after the distribution.
func TestLiveRangeStartsAtCounterStart(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	draw := compileYAML(t, e, "{^uniform: {counter: k}}")
	seq := compileYAML(t, e, "{^seq: {counter: k, start: 500}}")
	s := e.NewScope(0)

	for range 10 {
		seq.Value(s)
	}

	for range 1000 {
		if v := draw.Value(s).(int64); v < 500 || v > 509 {
			t.Fatalf("drew %d, want a key in [500, 509]", v)
		}
	}
}

func TestResetKeySpaces(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	seq := compileYAML(t, e, "{^seq: {counter: k, start: 10}}")
	s := e.NewScope(0)

	seq.Value(s)
	seq.Value(s)
	e.ResetKeySpaces()

	if got := seq.Value(s); got != int64(10) {
		t.Errorf("after ResetKeySpaces the counter yields %v, want its start 10", got)
	}
}

func TestUndeclaredCounter(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	compileYAML(t, e, "{^uniform: {counter: nobody}}")

	errs := e.UndeclaredCounters()
	if len(errs) != 1 {
		t.Fatalf("UndeclaredCounters = %v, want one error", errs)
	}

	if want := `1:22: t: counter "nobody" is not declared`; !strings.HasPrefix(errs[0].Error(), want) {
		t.Errorf("error %q does not start with %q", errs[0], want)
	}
}

func TestSequentialWraps(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	tmpl := compileYAML(t, e, "{^sequential: {min: 5, max: 7}}")
	s := e.NewScope(0)

	var got []int64
	for range 7 {
		got = append(got, tmpl.Value(s).(int64))
	}

	if want := []int64{5, 6, 7, 5, 6, 7, 5}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("^sequential yielded %v, want %v", got, want)
	}
}

func TestKeyDistributionErrors(t *testing.T) {
	t.Parallel()

	cases := []struct{ src, want string }{
		{"{^zipfian: {max: 9, theta: 0}}", "theta must be > 0"},
		{"{^zipfian: {max: 9, theta: 1}}", "theta must not be exactly 1"},
		{"{^zipfian: {max: 9, counter: k}}", "not both"},
		{"{^zipfian: {min: 3}}", "missing argument max (or counter"},
		{"{^latest: {min: 9, max: 3}}", "min must be <= max"},
		{"{^exponential: {max: 9, percentile: 100}}", "percentile must be > 0 and < 100"},
		{"{^zipfian: {max: 9, scrambled: yes please}}", "scrambled must be true or false"},
		{"{^zipfian: {max: 9, keys: 20}}", "keys applies to a scrambled zipfian"},
		{"{^zipfian: {max: 9, scrambled: true, keys: 0}}", "keys must be between 1 and"},
		{"{^seq: {counter: k, step: 2}}", "step must be 1"},
		{"[{^seq: {counter: k, start: 5}}, {^seq: {counter: k, start: 6}}]", `counter "k" starts at 5 (line 1)`},
	}

	for _, tc := range cases {
		e := newEnv(t, 1, "")

		_, errs := e.Compile(parseYAML(t, tc.src), "t")
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: errors %v, want one containing %q", tc.src, errs, tc.want)
		}
	}
}

// BenchmarkKeyDraw measures one draw of each key distribution over a
// million keys (the figure the YCSB workloads pay per operation).
func BenchmarkKeyDraw(b *testing.B) {
	for _, src := range []string{
		"{^int: {min: 0, max: 999999}}",
		"{^uniform: {min: 0, max: 999999}}",
		"{^zipfian: {min: 0, max: 999999}}",
		"{^zipfian: {min: 0, max: 999999, scrambled: true}}",
		"{^latest: {min: 0, max: 999999}}",
		"{^hotspot: {min: 0, max: 999999}}",
		"{^exponential: {min: 0, max: 999999}}",
		"{^sequential: {min: 0, max: 999999}}",
		"{^zipfian: {counter: k, scrambled: true}}",
		"{^key: {distribution: zipfian, counter: k, recordcount: 1000000}}",
		"{^key: {distribution: latest, counter: k}}",
	} {
		b.Run(src, func(b *testing.B) {
			e := newEnv(b, 1, "")
			ins := compileYAML(b, e, "{^seq: {counter: k}}")
			tmpl := compileYAML(b, e, src)
			s := e.NewScope(0)

			for range 1_000_000 {
				ins.Value(s)
			}

			tmpl.Value(s) // the normalizing sum, once

			b.ReportAllocs()

			// The thread's own CPU time, beside the wall time per draw: on a
			// loaded machine the wall time includes the time other processes
			// had the core, and the CPU time does not.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()

			cpu0, ok := threadCPU()

			for b.Loop() {
				_ = tmpl.Value(s)
			}

			if cpu1, ok1 := threadCPU(); ok && ok1 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// TestZetaSumTail checks the Euler-Maclaurin tail of zetaSum against the
// sum term by term, past the point where it takes over.
func TestZetaSumTail(t *testing.T) {
	t.Parallel()

	for _, theta := range []float64{0.5, 0.99, 1.5} {
		const n = exactZeta + 3_000_000

		exact := 0.0
		for i := 1; i <= n; i++ {
			exact += math.Pow(float64(i), -theta)
		}

		got := zetaSum(0, 0, n, theta)
		if rel := math.Abs(got-exact) / exact; rel > 1e-12 {
			t.Errorf("theta %g: zeta(%d) = %.15g, term by term %.15g (relative error %.2g)", theta, n, got, exact, rel)
		}

		// Extending a sum computed in part gives the same.
		if part := zetaSum(zetaSum(0, 0, 1000, theta), 1000, n, theta); math.Abs(part-got)/got > 1e-12 {
			t.Errorf("theta %g: extended sum %.15g, whole %.15g", theta, part, got)
		}
	}
}

// threadCPU returns the calling thread's CPU time (user + system) in
// nanoseconds, where the system can tell (Linux's RUSAGE_THREAD).
func threadCPU() (int64, bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}

	const rusageThread = 1 // RUSAGE_THREAD on Linux

	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}

	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
