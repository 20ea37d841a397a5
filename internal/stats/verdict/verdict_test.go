package verdict

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// gen builds samples: for each round r in [0, rounds), variant name gets
// f(r).
func gen(rounds int, fs map[string]func(r int) float64, order ...string) []Sample {
	var out []Sample

	for r := range rounds {
		for _, name := range order {
			out = append(out, Sample{Variant: name, Round: r, Value: fs[name](r)})
		}
	}

	return out
}

// noisy returns a function giving base × e^N(0, sigma), from its own
// seeded generator.
func noisy(seed uint64, base, sigma float64) func(int) float64 {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(int) float64 { return base * math.Exp(sigma*rng.NormFloat64()) }
}

func byName(t *testing.T, vs []Verdict, name string) Verdict {
	t.Helper()

	for _, v := range vs {
		if v.Variant == name {
			return v
		}
	}

	t.Fatalf("no verdict for %q in %+v", name, vs)

	return Verdict{}
}

var (
	paired   = Options{MinEffect: -1}
	unpaired = Options{Design: Unpaired, Unit: "interval", MinEffect: -1}
)

// covers reports whether v's ratio interval contains r.
func covers(v Verdict, r float64) bool {
	return v.RatioLo <= r && r <= v.RatioHi
}

func TestFiveTimesSlowerIsADifference(t *testing.T) {
	// Latency: b takes five times as long as a, with 10% noise. The noise
	// is arranged so that the true ratio is exactly 5 for the estimator:
	// paired, b's extra noise in a round is cancelled by its opposite in
	// another; unpaired, b's values are a's, rotated, times 5.
	for _, opts := range []Options{paired, unpaired} {
		for _, rounds := range []int{6, 8, 12, 30} {
			a := make([]float64, rounds)
			eps := make([]float64, rounds)
			rng := rand.New(rand.NewPCG(uint64(rounds), 1))

			for r := range a {
				a[r] = 1000 * math.Exp(0.1*rng.NormFloat64())
				eps[r] = 0.1 * rng.NormFloat64()

				if r%2 == 1 {
					eps[r] = -eps[r-1]
				}
			}

			fb := func(r int) float64 { return 5 * a[r] * math.Exp(eps[r]) }
			if opts.Design == Unpaired {
				fb = func(r int) float64 { return 5 * a[(r+1)%rounds] }
			}

			s := gen(rounds, map[string]func(int) float64{
				"a": func(r int) float64 { return a[r] },
				"b": fb,
			}, "a", "b")

			vs := Compare(s, LowerIsBetter, opts)
			ref, b := byName(t, vs, "a"), byName(t, vs, "b")

			if ref.Kind != Reference || !ref.Best || ref.Text != "reference" {
				t.Errorf("%v, %d rounds: reference %+v", opts.Design, rounds, ref)
			}

			if b.Kind != Difference || !covers(b, 5) || covers(b, 1) || b.RatioLo <= 1 {
				t.Errorf("%v, %d rounds: want a difference with a CI containing 5 and excluding 1: %+v", opts.Design, rounds, b)
			}

			if !regexp.MustCompile(`^[45]\.\d\d× higher, 95% CI [345]\.\d\d×–[4-7]\.\d\d×$`).MatchString(b.Text) {
				t.Errorf("%v, %d rounds: text %q", opts.Design, rounds, b.Text)
			}

			if b.P > 0.05 || b.Used != rounds {
				t.Errorf("%v, %d rounds: p=%v used=%d", opts.Design, rounds, b.P, b.Used)
			}
		}
	}
}

func TestIdenticalDistributionsNoDifference(t *testing.T) {
	// The same values in another order.
	vals := []float64{101, 99, 100, 103, 98, 102, 97, 100.5, 99.5, 101.5}

	var s []Sample
	for r, v := range vals {
		s = append(s, Sample{"a", r, v}, Sample{"b", r, vals[len(vals)-1-r]})
	}

	for _, opts := range []Options{paired, unpaired} {
		b := byName(t, Compare(s, HigherIsBetter, opts), "b")
		if b.Best {
			b = byName(t, Compare(s, HigherIsBetter, opts), "a")
		}

		if b.Kind != NoDifference || !covers(b, 1) {
			t.Errorf("%v: permuted values: %+v", opts.Design, b)
		}

		if !regexp.MustCompile(`^no significant difference; 95% CI 0\.9\d×–1\.0\d×$`).MatchString(b.Text) {
			t.Errorf("%v: text %q", opts.Design, b.Text)
		}
	}

	// Independent draws from one distribution: no difference, except for
	// about alpha of the seeds.
	for _, opts := range []Options{paired, unpaired} {
		none := 0

		const seeds = 100

		for seed := range uint64(seeds) {
			s := gen(12, map[string]func(int) float64{
				"a": noisy(2*seed, 1000, 0.05),
				"b": noisy(2*seed+1, 1000, 0.05),
			}, "a", "b")

			vs := Compare(s, HigherIsBetter, opts)
			if len(vs) != 2 {
				t.Fatalf("got %d verdicts", len(vs))
			}

			if vs[1].Kind == NoDifference {
				none++

				if !covers(vs[1], 1) {
					t.Errorf("no difference, yet the CI excludes 1: %+v", vs[1])
				}
			}
		}

		if none < seeds*88/100 {
			t.Errorf("%v: identical distributions judged without difference in %d of %d cases; expected about 95%%", opts.Design, none, seeds)
		}
	}
}

func TestTooFewRoundsInconclusive(t *testing.T) {
	for rounds := 1; rounds <= 5; rounds++ {
		s := gen(rounds, map[string]func(int) float64{
			"a": func(r int) float64 { return 1000 + float64(r) },
			"b": func(r int) float64 { return 100 + float64(r) },
		}, "a", "b")

		b := byName(t, Compare(s, HigherIsBetter, paired), "b")

		want := "inconclusive: " + plural(rounds, "round") + ", at least 6 needed"
		if b.Kind != Inconclusive || b.Text != want || b.Needed != 6 || b.Used != rounds {
			t.Errorf("%d rounds: %+v, want %q", rounds, b, want)
		}

		if !math.IsInf(b.RatioLo, -1) || !math.IsInf(b.RatioHi, 1) || !math.IsInf(b.Hi, 1) {
			t.Errorf("%d rounds: interval should be unbounded: %+v", rounds, b)
		}

		// The estimate is still there, for those who want it.
		if b.Ratio < 9 || b.Ratio > 11 {
			t.Errorf("%d rounds: ratio %v", rounds, b.Ratio)
		}
	}

	// Unpaired, four values a side are enough at 0.05; three are not.
	s := gen(3, map[string]func(int) float64{
		"a": func(r int) float64 { return 1000 + float64(r) },
		"b": func(r int) float64 { return 100 + float64(r) },
	}, "a", "b")
	if b := byName(t, CompareTo(s, "a", HigherIsBetter, unpaired), "b"); b.Kind != Inconclusive ||
		b.Text != "inconclusive: 3 intervals a side, at least 4 a side needed" {
		t.Errorf("3 unpaired: %+v", b)
	}

	s = append(s, Sample{"a", 3, 1003}, Sample{"b", 3, 103})
	if b := byName(t, CompareTo(s, "a", HigherIsBetter, unpaired), "b"); b.Kind != Difference || !strings.HasSuffix(b.Text, "slower, 95% CI 9.71×–10.0×") {
		t.Errorf("4 unpaired: %+v", b)
	}

	// Unequal sizes name both.
	s = append(s[:6:6], Sample{"a", 3, 1003})
	if b := byName(t, CompareTo(s, "a", HigherIsBetter, unpaired), "b"); b.Kind != Inconclusive ||
		b.Text != "inconclusive: 4 and 3 intervals, at least 4 a side needed" {
		t.Errorf("4 and 3 unpaired: %+v", b)
	}

	// Six rounds are enough for 95% but not for 99%.
	s = gen(6, map[string]func(int) float64{
		"a": func(r int) float64 { return 1000 + float64(r) },
		"b": func(r int) float64 { return 100 + float64(r) },
	}, "a", "b")
	if b := byName(t, Compare(s, HigherIsBetter, paired), "b"); b.Kind != Difference {
		t.Errorf("6 rounds at 0.05: %+v", b)
	}

	if b := byName(t, Compare(s, HigherIsBetter, Options{Alpha: 0.01}), "b"); b.Text != "inconclusive: 6 rounds, at least 8 needed" {
		t.Errorf("6 rounds at 0.01: %+v", b)
	}
}

// TestCoverage simulates many experiments with a known ratio and checks
// that the 95% interval covers it in about 95% of them, that it is narrow
// enough to find a real difference most of the time, and that it finds one
// where there is none only about 5% of the time. A broken interval (too
// narrow, off-centre, or unbounded) fails one of the three.
func TestCoverage(t *testing.T) {
	const experiments = 300

	for _, opts := range []Options{paired, unpaired} {
		for _, tc := range []struct {
			ratio  float64
			rounds int
		}{{1, 12}, {1.3, 12}, {5, 6}, {1.1, 40}} {
			covered, found := 0, 0

			for seed := range uint64(experiments) {
				s := gen(tc.rounds, map[string]func(int) float64{
					"a": noisy(2*seed+1000*uint64(tc.rounds), 100, 0.1),
					"b": noisy(2*seed+1+1000*uint64(tc.rounds), 100*tc.ratio, 0.1),
				}, "a", "b")

				b := byName(t, CompareTo(s, "a", LowerIsBetter, opts), "b")
				if covers(b, tc.ratio) {
					covered++
				}

				if b.Kind == Difference {
					found++
				}
			}

			if covered < experiments*90/100 {
				t.Errorf("%v, ratio %v, %d rounds: CI covered the true ratio in %d of %d experiments", opts.Design, tc.ratio, tc.rounds, covered, experiments)
			}

			switch {
			case tc.ratio == 1 && found > experiments*10/100:
				t.Errorf("%v: a difference found in %d of %d experiments without one", opts.Design, found, experiments)
			case tc.ratio > 1 && found < experiments*80/100:
				t.Errorf("%v, ratio %v, %d rounds: the difference found in only %d of %d experiments", opts.Design, tc.ratio, tc.rounds, found, experiments)
			}
		}
	}
}

func TestPairingRemovesCommonDrift(t *testing.T) {
	// Round r multiplies everything by drift(r): the machine got busier
	// and busier. b is exactly 1.5× slower than a within every round.
	drift := func(r int) float64 { return 1 + 0.35*float64(r) }
	s := gen(12, map[string]func(int) float64{
		"a": func(r int) float64 { return 3000 / drift(r) },
		"b": func(r int) float64 { return 2000 / drift(r) },
	}, "a", "b")

	b := byName(t, Compare(s, HigherIsBetter, paired), "b")
	if b.Kind != Difference || math.Abs(b.Ratio-1.5) > 1e-9 || math.Abs(b.RatioLo-1.5) > 1e-9 || math.Abs(b.RatioHi-1.5) > 1e-9 {
		t.Errorf("paired: %+v, want exactly 1.5", b)
	}

	if b.Text != "1.50× slower, 95% CI 1.50×–1.50×" {
		t.Errorf("paired text %q", b.Text)
	}

	// Unpaired, the drift blurs everything: the same values cannot be told
	// apart.
	if b := byName(t, Compare(s, HigherIsBetter, unpaired), "b"); b.Kind != NoDifference || b.RatioHi-b.RatioLo < 1 {
		t.Errorf("unpaired: %+v", b)
	}
}

func TestUnpairedMatchesPairwiseDefinition(t *testing.T) {
	// The Hodges-Lehmann estimate is the median of all pairwise log
	// ratios, and the Moses interval their k-th smallest and largest:
	// computed here the slow way and compared.
	rng := rand.New(rand.NewPCG(7, 8))

	for trial := range 50 {
		m, n := 4+rng.IntN(10), 4+rng.IntN(10)

		var s []Sample

		xs, ys := make([]float64, m), make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(100 * math.Exp(0.3*rng.NormFloat64()))
			s = append(s, Sample{"x", i, xs[i]})
		}

		for j := range ys {
			ys[j] = math.Round(130 * math.Exp(0.3*rng.NormFloat64()))
			s = append(s, Sample{"y", j, ys[j]})
		}

		var d []float64

		for _, x := range xs {
			for _, y := range ys {
				d = append(d, math.Log(y/x))
			}
		}

		slices.Sort(d)

		k := uCritical(m, n, 0.05)
		v := byName(t, CompareTo(s, "x", LowerIsBetter, unpaired), "y")

		close := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
		if !close(math.Log(v.Ratio), Median(d)) || !close(math.Log(v.RatioLo), d[k-1]) || !close(math.Log(v.RatioHi), d[len(d)-k]) {
			t.Errorf("trial %d (%d×%d, k=%d): got %v [%v, %v], want %v [%v, %v]", trial, m, n, k,
				v.Ratio, v.RatioLo, v.RatioHi, math.Exp(Median(d)), math.Exp(d[k-1]), math.Exp(d[len(d)-k]))
		}
	}
}

// TestShiftBoundsBisection checks that the bisection used for large
// samples finds the same bounds as the exact reading of the pairwise
// differences, zeros included.
func TestShiftBoundsBisection(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))

	for trial := range 40 {
		m, n := 3+rng.IntN(15), 3+rng.IntN(15)
		x, y := make([]float64, m), make([]float64, n)

		for i := range x {
			x[i] = math.Round(10 * math.Exp(rng.NormFloat64()))
		}

		for j := range y {
			y[j] = math.Round(13 * math.Exp(rng.NormFloat64()))
		}

		if trial%4 == 0 {
			x[0], y[0] = 0, 0 // zeros on both sides: ties and infinite ratios
		}

		s := newShiftStat(logsSorted(x), logsSorted(y))
		mn := float64(m * n)

		for _, target := range []float64{1, 2.5, mn / 2, mn / 2.5, mn - 3, mn - 1} {
			exact, bisect := s.lowest(target), s.lowestBisect(target)
			if !(exact == bisect || math.Abs(exact-bisect) <= 1e-9*math.Max(1, math.Abs(exact))) {
				t.Errorf("trial %d, lowest(%v): exact %v, bisection %v", trial, target, exact, bisect)
			}

			exact, bisect = s.highest(target), s.highestBisect(target)
			if !(exact == bisect || math.Abs(exact-bisect) <= 1e-9*math.Max(1, math.Abs(exact))) {
				t.Errorf("trial %d, highest(%v): exact %v, bisection %v", trial, target, exact, bisect)
			}
		}
	}
}

func TestUNullCDFByEnumeration(t *testing.T) {
	// Every arrangement of m x's and n y's is equally likely under the
	// null hypothesis; count U over all of them.
	for _, mn := range [][2]int{{1, 1}, {2, 3}, {4, 4}, {5, 3}, {6, 7}} {
		m, n := mn[0], mn[1]
		counts := map[int]int{}
		total := 0

		for mask := 0; mask < 1<<(m+n); mask++ {
			if popcount(mask) != m {
				continue
			}

			total++

			u, ys := 0, 0

			for bit := range m + n {
				if mask&(1<<bit) != 0 {
					u += ys // an x above every y so far
				} else {
					ys++
				}
			}

			counts[u]++
		}

		cdf := uNullCDF(m, n, m*n/2)
		sum := 0

		for u := range cdf {
			sum += counts[u]
			if want := float64(sum) / float64(total); math.Abs(cdf[u]-want) > 1e-12 {
				t.Errorf("m=%d n=%d: P(U ≤ %d) = %v, want %v", m, n, u, cdf[u], want)
			}
		}
	}

	// U is symmetric about mn/2: at 50 a side, P(U ≤ 1250) = ½ + ½·P(U = 1250).
	cdf := uNullCDF(50, 50, 1250)
	if mid := 0.5 + (cdf[1250]-cdf[1249])/2; math.Abs(cdf[1250]-mid) > 1e-9 {
		t.Errorf("50×50: P(U ≤ 1250) = %v, want %v", cdf[1250], mid)
	}

	// A table cut short is the start of the whole one.
	full, part := uNullCDF(9, 7, 31), uNullCDF(9, 7, 5)
	if len(part) != 6 || !slices.Equal(part, full[:6]) {
		t.Errorf("truncated table %v, want the start of %v", part, full[:6])
	}

	// The normal approximation beyond exactU agrees with the exact count
	// at its border.
	if exact, approx := uCritical(50, 50, 0.05), (&uNull{m: 50, n: 50}).critical(0.05); exact-approx > 2 || approx-exact > 2 {
		t.Errorf("k at 50×50: exact %d, normal %d", exact, approx)
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}

	return n
}

func TestMinSamples(t *testing.T) {
	for _, tc := range []struct {
		d     Design
		alpha float64
		want  int
	}{{Paired, 0.05, 6}, {Paired, 0.01, 8}, {Paired, 0.1, 5}, {Unpaired, 0.05, 4}, {Unpaired, 0.01, 5}, {Paired, 0, 6}} {
		if got := MinSamples(tc.d, tc.alpha); got != tc.want {
			t.Errorf("MinSamples(%v, %v) = %d, want %d", tc.d, tc.alpha, got, tc.want)
		}
	}

	// Known sign-test critical values: [x(k), x(n+1-k)] for 95%.
	for n, want := range map[int]int{5: 0, 6: 1, 8: 1, 9: 2, 10: 2, 12: 3, 20: 6} {
		if got := signCritical(n, 0.05); got != want {
			t.Errorf("signCritical(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestLowerIsBetterWording(t *testing.T) {
	s := gen(10, map[string]func(int) float64{
		"fast": func(r int) float64 { return 100 + float64(r%3) },
		"slow": func(r int) float64 { return 2.1 * (100 + float64(r%3)) },
	}, "slow", "fast")

	vs := Compare(s, LowerIsBetter, Options{MinEffect: -1, Reference: "fast"})
	if vs[0].Variant != "fast" || vs[0].Text != "reference" || !vs[0].Best || vs[0].Kind != Reference {
		t.Errorf("best: %+v", vs[0])
	}

	if vs[1].Text != "2.10× higher, 95% CI 2.10×–2.10×" {
		t.Errorf("worse: %q", vs[1].Text)
	}

	// Against a baseline, better is "lower", worse "higher".
	vs = CompareTo(s, "slow", LowerIsBetter, paired)
	if vs[0].Variant != "slow" || vs[0].Text != "baseline" || vs[0].Best {
		t.Errorf("baseline: %+v", vs[0])
	}

	if f := vs[1]; f.Variant != "fast" || f.Text != "2.10× lower, 95% CI 2.10×–2.10×" || !f.Best || math.Abs(f.Ratio-1/2.1) > 1e-9 {
		t.Errorf("vs baseline: %+v", f)
	}
}

func TestCompareToThroughput(t *testing.T) {
	s := gen(10, map[string]func(int) float64{
		"old":  noisy(1, 1000, 0.02),
		"new":  noisy(2, 1300, 0.02),
		"slow": noisy(3, 550, 0.02),
		"same": noisy(4, 1000, 0.02),
	}, "new", "slow", "old", "same")

	vs := CompareTo(s, "old", HigherIsBetter, paired)

	var names []string
	for _, v := range vs {
		names = append(names, v.Variant)
	}

	if got := strings.Join(names, " "); got != "old new slow same" {
		t.Errorf("order %q: baseline first, then first appearance", got)
	}

	want := map[string]*regexp.Regexp{
		"old":  regexp.MustCompile(`^baseline$`),
		"new":  regexp.MustCompile(`^1\.[23]\d× faster, 95% CI 1\.[23]\d×–1\.[23]\d×$`),
		"slow": regexp.MustCompile(`^1\.[89]\d× slower, 95% CI 1\.[789]\d×–1\.[89]\d×$`),
		"same": regexp.MustCompile(`^no significant difference; 95% CI 0\.9\d×–1\.0\d×$`),
	}

	kinds := map[string]Kind{"old": Reference, "new": Difference, "slow": Difference, "same": NoDifference}

	for _, v := range vs {
		if !want[v.Variant].MatchString(v.Text) || v.Kind != kinds[v.Variant] {
			t.Errorf("%s: %v %q", v.Variant, v.Kind, v.Text)
		}

		if v.Best != (v.Variant == "new") {
			t.Errorf("%s: Best = %v", v.Variant, v.Best)
		}
	}

	// No baseline values: nothing to compare with, no crash.
	vs = CompareTo(s, "missing", HigherIsBetter, paired)
	if len(vs) != 4 {
		t.Fatalf("got %d verdicts", len(vs))
	}

	for _, v := range vs {
		if !math.IsNaN(v.Ratio) || v.Kind != Inconclusive || !strings.Contains(v.Text, "not compared") {
			t.Errorf("missing baseline: %+v", v)
		}
	}
}

func TestOrderingBestFirst(t *testing.T) {
	s := gen(8, map[string]func(int) float64{
		"c": func(r int) float64 { return 10 + float64(r) },
		"a": func(r int) float64 { return 1000 + float64(r) },
		"b": func(r int) float64 { return 100 + float64(r) },
		"d": func(r int) float64 { return 100 + float64(r) }, // ties b
	}, "c", "b", "d", "a")

	vs := Compare(s, HigherIsBetter, Options{MinEffect: -1, Reference: "a"})

	var got []string
	for _, v := range vs {
		got = append(got, v.Variant+":"+v.Text)
	}

	want := []string{"a:reference", "b:9.7", "d:9.7", "c:7"}
	for i := range want {
		if i >= len(got) || !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("got %q, want prefixes %q", got, want)
		}
	}

	vs = Compare(s, LowerIsBetter, paired)
	if vs[0].Variant != "c" || vs[1].Variant != "b" || vs[2].Variant != "d" || vs[3].Variant != "a" {
		t.Errorf("lower is better: %+v", vs)
	}
}

func TestZeroAndNaN(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)

	s := gen(8, map[string]func(int) float64{
		"ok":     func(r int) float64 { return 100 + float64(r) },
		"holes":  func(r int) float64 { return []float64{nan, 50, inf, 51, -1, 52, 53, 54}[r] },
		"stuck":  func(int) float64 { return 0 },
		"nan":    func(int) float64 { return nan },
		"zeroes": func(r int) float64 { return float64(r % 2) }, // 0 1 0 1…
	}, "ok", "holes", "stuck", "nan", "zeroes")

	for _, opts := range []Options{paired, unpaired} {
		for _, dir := range []Direction{HigherIsBetter, LowerIsBetter} {
			vs := Compare(s, dir, opts)
			if len(vs) != 4 {
				t.Fatalf("%v: %d verdicts, want 4 (the all-NaN variant omitted): %+v", dir, len(vs), vs)
			}

			if h := byName(t, vs, "holes"); h.N != 5 || h.Median != 52 {
				t.Errorf("%v: holes: %+v, want N=5 median 52", dir, h)
			}

			for _, v := range vs {
				if math.IsNaN(v.Median) || v.Text == "" || strings.Contains(v.Text, "NaN") || strings.Contains(v.Text, "?") {
					t.Errorf("%v: %+v", dir, v)
				}
			}
		}

		// Zero throughput in every round is infinitely slower.
		vs := Compare(s, HigherIsBetter, opts)
		if st := byName(t, vs, "stuck"); !math.IsInf(st.Ratio, 1) || st.Kind != Difference || st.Text != "∞× slower, 95% CI ∞×–∞×" {
			t.Errorf("%v: stuck: %+v", opts.Design, st)
		}
	}

	// Paired, zeroes against an all-zero best: the 0/0 rounds say nothing,
	// which leaves four rounds.
	vs := Compare(s, LowerIsBetter, Options{MinEffect: -1, Reference: "stuck"})
	if vs[0].Variant != "stuck" || !math.IsInf(byName(t, vs, "ok").Ratio, 1) {
		t.Errorf("latency: %+v", vs)
	}

	if z := byName(t, vs, "zeroes"); z.Kind != Inconclusive || z.Text != "inconclusive: 4 rounds, at least 6 needed" {
		t.Errorf("zeroes vs all-zero best: %+v", z)
	}

	if vs := Compare(nil, HigherIsBetter, paired); vs != nil {
		t.Errorf("no samples: %+v", vs)
	}

	if vs := Compare([]Sample{{"x", 0, nan}}, HigherIsBetter, paired); vs != nil {
		t.Errorf("only NaN: %+v", vs)
	}

	// All values equal: no difference, with a zero-width interval at 1.
	s = gen(6, map[string]func(int) float64{
		"a": func(int) float64 { return 5 },
		"b": func(int) float64 { return 5 },
	}, "a", "b")

	for _, opts := range []Options{paired, unpaired} {
		if b := byName(t, Compare(s, HigherIsBetter, opts), "b"); b.Kind != NoDifference || b.Text != "no significant difference; 95% CI 1.00×–1.00×" || b.Ratio != 1 {
			t.Errorf("%v: equal: %+v", opts.Design, b)
		}
	}
}

func TestNoSharedRounds(t *testing.T) {
	var s []Sample
	for r := range 6 {
		s = append(s, Sample{"a", r, 1000 + float64(r)}, Sample{"b", r + 100, 10 + float64(r)})
	}

	b := byName(t, Compare(s, HigherIsBetter, paired), "b")
	if !math.IsNaN(b.Ratio) || b.Kind != Inconclusive || b.Text != "inconclusive: no round with values of both" {
		t.Errorf("%+v", b)
	}

	// Unpaired, rounds do not matter.
	if b := byName(t, Compare(s, HigherIsBetter, unpaired), "b"); b.Kind != Difference {
		t.Errorf("unpaired: %+v", b)
	}
}

func TestSeveralSamplesPerRound(t *testing.T) {
	// Two values of b in each round are combined by their median (the
	// mean of two) before pairing.
	var s []Sample
	for r := range 8 {
		s = append(s, Sample{"a", r, 100}, Sample{"b", r, 190}, Sample{"b", r, 210})
	}

	b := byName(t, Compare(s, LowerIsBetter, paired), "b")
	if b.N != 16 || math.Abs(b.Ratio-2) > 1e-12 || b.Text != "2.00× higher, 95% CI 2.00×–2.00×" || b.Used != 8 {
		t.Errorf("%+v", b)
	}
}

func TestFormatRatio(t *testing.T) {
	for r, want := range map[float64]string{
		0:           "0×",
		0.0123:      "0.012×",
		0.097:       "0.097×",
		0.0996:      "0.10×",
		0.97:        "0.97×",
		0.9994:      "1.00×",
		1:           "1.00×",
		1.2149:      "1.21×",
		9.994:       "9.99×",
		9.996:       "10.0×",
		12.34:       "12.3×",
		99.96:       "100×",
		966.4:       "966×",
		123456:      "123456×",
		math.Inf(1): "∞×",
	} {
		if got := formatRatio(r); got != want {
			t.Errorf("formatRatio(%v) = %q, want %q", r, got, want)
		}
	}
}

func TestKindText(t *testing.T) {
	type cell struct {
		Kind Kind `json:"kind"`
	}

	for _, k := range []Kind{Inconclusive, NoDifference, Difference, Reference} {
		b, err := json.Marshal(cell{k})
		if err != nil {
			t.Fatal(err)
		}

		var back cell
		if err := json.Unmarshal(b, &back); err != nil || back.Kind != k {
			t.Errorf("%v: %s → %v, %v", k, b, back.Kind, err)
		}
	}

	if b, _ := json.Marshal(cell{NoDifference}); string(b) != `{"kind":"no-difference"}` {
		t.Errorf("%s", b)
	}

	var c cell
	if err := json.Unmarshal([]byte(`{"kind":"same-ish"}`), &c); err == nil {
		t.Error("unknown kind accepted")
	}

	if _, err := json.Marshal(cell{Kind(9)}); err == nil {
		t.Error("invalid kind encoded")
	}
}

func TestDefaultAlpha(t *testing.T) {
	s := gen(6, map[string]func(int) float64{
		"a": func(r int) float64 { return 1000 + float64(r) },
		"b": func(r int) float64 { return 100 + float64(r) },
	}, "a", "b")

	for _, alpha := range []float64{0, -1, 1, math.NaN()} {
		if b := byName(t, Compare(s, HigherIsBetter, Options{Alpha: alpha}), "b"); b.Kind != Difference || !strings.Contains(b.Text, "95% CI") {
			t.Errorf("alpha %v should mean 0.05: %+v", alpha, b)
		}
	}
}

// TestFormatInterval checks that an interval with an infinite upper bound
// (a round with zero throughput on one side) reads "2.01× or more", not
// "2.01×–∞×", and that finite ones keep the dash.
func TestFormatInterval(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{1.9, 2.3, "1.90×–2.30×"},
		{0, 0.5, "0×–0.50×"},
		{2.01, math.Inf(1), "2.01× or more"},
		{1 / math.Inf(1), 1 / 0.25, "0×–4.00×"},
	} {
		if got := FormatInterval(c.lo, c.hi); got != c.want {
			t.Errorf("FormatInterval(%v, %v) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// TestDifferenceTextInfiniteBound words a faster side whose interval's
// lower ratio is zero, so that the inverted interval has no upper bound.
func TestDifferenceTextInfiniteBound(t *testing.T) {
	got := differenceText(0.4, 0, 0.497, HigherIsBetter, "95%")
	if want := "2.50× faster, 95% CI 2.01× or more"; got != want {
		t.Errorf("differenceText = %q, want %q", got, want)
	}

	if strings.Contains(got, "∞") {
		t.Errorf("differenceText = %q prints an infinite bound", got)
	}
}
