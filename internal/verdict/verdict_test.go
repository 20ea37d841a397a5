package verdict

import (
	"math"
	"math/rand/v2"
	"regexp"
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

func TestIdenticalDistributionsAreSameIsh(t *testing.T) {
	// The same values in a different order: the U test sees no difference
	// at all.
	vals := []float64{101, 99, 100, 103, 98, 102, 97, 100.5, 99.5, 101.5}
	var s []Sample

	for r, v := range vals {
		s = append(s, Sample{"a", r, v}, Sample{"b", r, vals[len(vals)-1-r]})
	}

	for _, v := range Compare(s, HigherIsBetter, 0.05) {
		if !v.Best && (!v.SameIsh || !strings.HasPrefix(v.Text, "same-ish (p=")) {
			t.Errorf("permuted values: %+v, want same-ish", v)
		}
	}

	// Independent draws from one distribution: same-ish except for about
	// alpha of the seeds.
	sameIsh := 0

	const seeds = 40

	for seed := range uint64(seeds) {
		s := gen(12, map[string]func(int) float64{
			"a": noisy(2*seed, 1000, 0.05),
			"b": noisy(2*seed+1, 1000, 0.05),
		}, "a", "b")

		vs := Compare(s, HigherIsBetter, 0.05)
		if len(vs) != 2 {
			t.Fatalf("got %d verdicts", len(vs))
		}

		if vs[1].SameIsh {
			sameIsh++

			if !regexp.MustCompile(`^same-ish \(p=[01]\.\d\d\)$`).MatchString(vs[1].Text) {
				t.Errorf("text %q", vs[1].Text)
			}
		}
	}

	if sameIsh < seeds*85/100 {
		t.Errorf("identical distributions judged same-ish in %d of %d cases; expected about 95%%", sameIsh, seeds)
	}
}

func TestTenTimesTheWork(t *testing.T) {
	// Throughput: "slow" does 10× the work per operation, so a tenth of the
	// operations per second, with 5% noise on both.
	s := gen(10, map[string]func(int) float64{
		"fast": noisy(1, 10000, 0.05),
		"slow": noisy(2, 1000, 0.05),
	}, "slow", "fast")

	vs := Compare(s, HigherIsBetter, 0.05)
	if len(vs) != 2 || vs[0].Variant != "fast" || !vs[0].Best || vs[0].Text != "fastest" {
		t.Fatalf("want fast first and best: %+v", vs)
	}

	if vs[0].Ratio != 1 || vs[0].RatioLo != 1 || vs[0].RatioHi != 1 || vs[0].P != 1 || vs[0].SameIsh {
		t.Errorf("best's own comparison: %+v", vs[0])
	}

	slow := vs[1]
	if slow.SameIsh || slow.P > 0.001 {
		t.Errorf("10× difference not significant: %+v", slow)
	}

	if slow.Ratio < 9 || slow.Ratio > 11 {
		t.Errorf("ratio %v, want about 10", slow.Ratio)
	}

	if !(slow.RatioLo <= slow.Ratio && slow.Ratio <= slow.RatioHi) {
		t.Errorf("ratio %v outside its CI [%v, %v]", slow.Ratio, slow.RatioLo, slow.RatioHi)
	}

	if !regexp.MustCompile(`^(9\.\d\d|1\d\.\d)× slower ±\d+%$`).MatchString(slow.Text) {
		t.Errorf("text %q", slow.Text)
	}

	if slow.N != 10 || vs[0].N != 10 {
		t.Errorf("N = %d, %d; want 10", slow.N, vs[0].N)
	}

	if !(slow.Lo <= slow.Median && slow.Median <= slow.Hi) || math.IsInf(slow.Lo, 0) {
		t.Errorf("median %v, CI [%v, %v]", slow.Median, slow.Lo, slow.Hi)
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

	vs := Compare(s, HigherIsBetter, 0.05)
	b := byName(t, vs, "b")
	a := byName(t, vs, "a")

	if math.Abs(b.Ratio-1.5) > 1e-12 || math.Abs(b.RatioLo-1.5) > 1e-12 || math.Abs(b.RatioHi-1.5) > 1e-12 {
		t.Errorf("paired ratio %v [%v, %v], want exactly 1.5", b.Ratio, b.RatioLo, b.RatioHi)
	}

	// Unpaired, the drift blurs everything: the medians' intervals
	// overlap, and the ratio they allow spans far more than 1.5 ± 0.
	if !(b.Hi > a.Lo) {
		t.Errorf("expected overlapping unpaired CIs: a [%v, %v], b [%v, %v]", a.Lo, a.Hi, b.Lo, b.Hi)
	}

	if lo, hi := a.Lo/b.Hi, a.Hi/b.Lo; hi-lo < 1 {
		t.Errorf("unpaired ratio range [%v, %v] unexpectedly narrow", lo, hi)
	}

	// Significance is judged by the U test on unpaired values (see the
	// package comment), which the drift defeats: the verdict stays
	// conservative, while the ratio fields keep the paired answer.
	if !b.SameIsh {
		t.Errorf("with this much drift the unpaired U test should not separate them: %+v", b)
	}

	// With milder drift the test separates them and the text carries the
	// exact paired ratio.
	mild := func(r int) float64 { return 1 + 0.02*float64(r) }
	s = gen(12, map[string]func(int) float64{
		"a": func(r int) float64 { return 3000 / mild(r) },
		"b": func(r int) float64 { return 2000 / mild(r) },
	}, "a", "b")

	if b := byName(t, Compare(s, HigherIsBetter, 0.05), "b"); b.Text != "1.50× slower ±0%" {
		t.Errorf("mild drift: %+v, want 1.50× slower ±0%%", b)
	}
}

func TestRatioCIContainsTrueRatio(t *testing.T) {
	// b's latency is 1.3× a's, both with lognormal noise, so the median of
	// the per-round ratios is 1.3. The 95% interval should cover it in
	// about 95% of experiments.
	const experiments = 200

	covered := 0

	for seed := range uint64(experiments) {
		s := gen(25, map[string]func(int) float64{
			"a": noisy(2*seed, 100, 0.1),
			"b": noisy(2*seed+1, 130, 0.1),
		}, "a", "b")

		b := byName(t, Compare(s, LowerIsBetter, 0.05), "b")
		if b.RatioLo <= 1.3 && 1.3 <= b.RatioHi {
			covered++
		}

		if seed == 0 && !regexp.MustCompile(`^1\.\d\d× higher ±\d+%$`).MatchString(b.Text) {
			t.Errorf("text %q", b.Text)
		}
	}

	if covered < experiments*90/100 {
		t.Errorf("CI covered the true ratio in %d of %d experiments", covered, experiments)
	}
}

func TestTooFewTrials(t *testing.T) {
	for _, rounds := range []int{1, 2, 3} {
		s := gen(rounds, map[string]func(int) float64{
			"a": func(int) float64 { return 1000 },
			"b": func(int) float64 { return 100 },
		}, "a", "b")

		vs := Compare(s, HigherIsBetter, 0.05)

		b := byName(t, vs, "b")
		if !b.SameIsh || b.Text != "same-ish (too few trials: need ≥4)" {
			t.Errorf("%d rounds: %+v", rounds, b)
		}

		// The ratio is still computed, for those who want it.
		if b.Ratio != 10 {
			t.Errorf("%d rounds: ratio %v, want 10", rounds, b.Ratio)
		}
	}

	// Four rounds are enough for a complete separation at 0.05, not at 0.01.
	s := gen(4, map[string]func(int) float64{
		"a": func(r int) float64 { return 1000 + float64(r) },
		"b": func(r int) float64 { return 100 + float64(r) },
	}, "a", "b")

	if b := byName(t, Compare(s, HigherIsBetter, 0.05), "b"); b.SameIsh || b.Text != "9.87× slower (no CI: need ≥6 rounds)" {
		t.Errorf("4 rounds at 0.05: %+v", b)
	}

	if b := byName(t, Compare(s, HigherIsBetter, 0.01), "b"); b.Text != "same-ish (too few trials: need ≥5)" {
		t.Errorf("4 rounds at 0.01: %+v", b)
	}

	// Four rounds have no 95% interval for a median: the text says so.
	if b := byName(t, Compare(s, HigherIsBetter, 0.05), "b"); !strings.HasSuffix(b.Text, "slower (no CI: need ≥6 rounds)") ||
		!math.IsInf(b.RatioHi, 1) || !math.IsInf(b.Hi, 1) {
		t.Errorf("4 rounds: %+v", b)
	}
}

func TestLowerIsBetterWording(t *testing.T) {
	s := gen(10, map[string]func(int) float64{
		"fast": func(r int) float64 { return 100 + float64(r%3) },
		"slow": func(r int) float64 { return 2.1 * (100 + float64(r%3)) },
	}, "slow", "fast")

	vs := Compare(s, LowerIsBetter, 0.05)
	if vs[0].Variant != "fast" || vs[0].Text != "lowest" || !vs[0].Best {
		t.Errorf("best: %+v", vs[0])
	}

	if vs[1].Text != "2.10× higher ±0%" {
		t.Errorf("worse: %q", vs[1].Text)
	}

	// Against a baseline, better is "lower", worse "higher".
	vs = CompareTo(s, "slow", LowerIsBetter, 0.05)
	if vs[0].Variant != "slow" || vs[0].Text != "baseline" || vs[0].Best {
		t.Errorf("baseline: %+v", vs[0])
	}

	if f := vs[1]; f.Variant != "fast" || f.Text != "2.10× lower ±0%" || !f.Best || math.Abs(f.Ratio-1/2.1) > 1e-9 {
		t.Errorf("vs baseline: %+v", f)
	}

	vs = CompareTo(s, "fast", LowerIsBetter, 0.05)
	if sl := vs[1]; sl.Text != "2.10× higher ±0%" || math.Abs(sl.Ratio-2.1) > 1e-9 {
		t.Errorf("vs baseline: %+v", sl)
	}
}

func TestCompareToThroughput(t *testing.T) {
	s := gen(10, map[string]func(int) float64{
		"old":  noisy(1, 1000, 0.02),
		"new":  noisy(2, 1300, 0.02),
		"slow": noisy(3, 550, 0.02),
		"same": noisy(4, 1000, 0.02),
	}, "new", "slow", "old", "same")

	vs := CompareTo(s, "old", HigherIsBetter, 0.05)

	var names []string
	for _, v := range vs {
		names = append(names, v.Variant)
	}

	if got := strings.Join(names, " "); got != "old new slow same" {
		t.Errorf("order %q: baseline first, then first appearance", got)
	}

	want := map[string]*regexp.Regexp{
		"old":  regexp.MustCompile(`^baseline$`),
		"new":  regexp.MustCompile(`^1\.[23]\d× faster ±\d%$`),
		"slow": regexp.MustCompile(`^1\.[89]\d× slower ±\d%$`),
		"same": regexp.MustCompile(`^same-ish \(p=0\.\d\d\)$`),
	}

	for _, v := range vs {
		if !want[v.Variant].MatchString(v.Text) {
			t.Errorf("%s: %q", v.Variant, v.Text)
		}

		if v.Best != (v.Variant == "new") {
			t.Errorf("%s: Best = %v", v.Variant, v.Best)
		}
	}

	// No baseline values: nothing to compare with, no crash.
	vs = CompareTo(s, "missing", HigherIsBetter, 0.05)
	if len(vs) != 4 {
		t.Fatalf("got %d verdicts", len(vs))
	}

	for _, v := range vs {
		if !math.IsNaN(v.Ratio) || !math.IsNaN(v.P) || v.SameIsh || !strings.Contains(v.Text, "not compared") {
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

	vs := Compare(s, HigherIsBetter, 0.05)

	var got []string
	for _, v := range vs {
		got = append(got, v.Variant+":"+v.Text)
	}

	want := []string{"a:fastest", "b:9.70× slower", "d:9.70× slower", "c:74.4× slower"}
	for i := range want {
		if i >= len(got) || !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("got %q, want prefixes %q", got, want)
		}
	}

	vs = Compare(s, LowerIsBetter, 0.05)
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

	for _, dir := range []Direction{HigherIsBetter, LowerIsBetter} {
		vs := Compare(s, dir, 0.05)
		if len(vs) != 4 {
			t.Fatalf("%v: %d verdicts, want 4 (the all-NaN variant omitted): %+v", dir, len(vs), vs)
		}

		if h := byName(t, vs, "holes"); h.N != 5 || h.Median != 52 {
			t.Errorf("%v: holes: %+v, want N=5 median 52", dir, h)
		}

		for _, v := range vs {
			if math.IsNaN(v.Median) || math.IsNaN(v.P) || v.Text == "" {
				t.Errorf("%v: %+v", dir, v)
			}
		}
	}

	// Zero throughput in every round is infinitely slower.
	vs := Compare(s, HigherIsBetter, 0.05)
	if st := byName(t, vs, "stuck"); !math.IsInf(st.Ratio, 1) || st.Text != "∞× slower" {
		t.Errorf("stuck: %+v", st)
	}

	// As the best for latency, zeroes make every other ratio infinite, and
	// 0/0 rounds are skipped.
	vs = Compare(s, LowerIsBetter, 0.05)
	if vs[0].Variant != "stuck" || !math.IsInf(byName(t, vs, "ok").Ratio, 1) {
		t.Errorf("latency: %+v", vs)
	}

	if z := byName(t, vs, "zeroes"); !z.SameIsh || !math.IsInf(z.Ratio, 1) {
		t.Errorf("zeroes vs all-zero best: %+v", z)
	}

	if vs := Compare(nil, HigherIsBetter, 0.05); vs != nil {
		t.Errorf("no samples: %+v", vs)
	}

	if vs := Compare([]Sample{{"x", 0, nan}}, HigherIsBetter, 0.05); vs != nil {
		t.Errorf("only NaN: %+v", vs)
	}

	// All values equal: the U test cannot run; same-ish with p=1.
	s = gen(6, map[string]func(int) float64{
		"a": func(int) float64 { return 5 },
		"b": func(int) float64 { return 5 },
	}, "a", "b")
	if b := byName(t, Compare(s, HigherIsBetter, 0.05), "b"); b.Text != "same-ish (p=1.00)" || b.Ratio != 1 {
		t.Errorf("equal: %+v", b)
	}
}

func TestNoSharedRounds(t *testing.T) {
	var s []Sample
	for r := range 6 {
		s = append(s, Sample{"a", r, 1000 + float64(r)}, Sample{"b", r + 100, 10 + float64(r)})
	}

	b := byName(t, Compare(s, HigherIsBetter, 0.05), "b")
	if !math.IsNaN(b.Ratio) || b.SameIsh || b.Text != "slower (no ratio: no round with values of both)" {
		t.Errorf("%+v", b)
	}
}

func TestSeveralSamplesPerRound(t *testing.T) {
	// Two values of b in each round are combined by their median (the
	// mean of two) before pairing.
	var s []Sample
	for r := range 8 {
		s = append(s, Sample{"a", r, 100}, Sample{"b", r, 190}, Sample{"b", r, 210})
	}

	b := byName(t, Compare(s, LowerIsBetter, 0.05), "b")
	if b.N != 16 || b.Ratio != 2 || b.Text != "2.00× higher ±0%" {
		t.Errorf("%+v", b)
	}
}

func TestFormatRatio(t *testing.T) {
	for r, want := range map[float64]string{
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

func TestNeededTrials(t *testing.T) {
	for alpha, want := range map[float64]int{0.05: 4, 0.01: 5, 0.1: 3, 0.001: 7} {
		if got := neededTrials(alpha); got != want {
			t.Errorf("neededTrials(%v) = %d, want %d", alpha, got, want)
		}
	}

	if got := medianCINeeded(); got != 6 {
		t.Errorf("medianCINeeded() = %d, want 6", got)
	}
}

func TestDefaultAlpha(t *testing.T) {
	s := gen(4, map[string]func(int) float64{
		"a": func(r int) float64 { return 1000 + float64(r) },
		"b": func(r int) float64 { return 100 + float64(r) },
	}, "a", "b")

	for _, alpha := range []float64{0, -1, 1, math.NaN()} {
		if b := byName(t, Compare(s, HigherIsBetter, alpha), "b"); b.SameIsh {
			t.Errorf("alpha %v should mean 0.05: %+v", alpha, b)
		}
	}
}
