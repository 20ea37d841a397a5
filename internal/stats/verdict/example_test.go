package verdict_test

import (
	"fmt"

	"github.com/mongobench/mongobench/internal/stats/verdict"
)

func ExampleCompare() {
	// Operations per second of four variants in eight interleaved rounds;
	// the first, collscan, is the reference the others are compared with.
	// Round 5 ran on a busier machine: every variant lost a third of its
	// throughput, which the per-round ratios cancel out.
	ops := map[string][]float64{
		"indexed":   {9620, 9710, 9580, 9690, 9650, 6430, 9600, 9700},
		"covered":   {9800, 9650, 9700, 9620, 9590, 6470, 9710, 9660},
		"collscan":  {10.1, 9.9, 10.0, 10.2, 9.8, 6.6, 10.0, 10.1},
		"projected": {8010, 7990, 7950, 8030, 7960, 5330, 8000, 8020},
	}

	var samples []verdict.Sample

	for _, name := range []string{"collscan", "covered", "indexed", "projected"} {
		for round, v := range ops[name] {
			samples = append(samples, verdict.Sample{Variant: name, Round: round, Value: v})
		}
	}

	for _, v := range verdict.Compare(samples, verdict.HigherIsBetter, verdict.Options{}) {
		fmt.Printf("%-9s %7.1f ops/s  %s\n", v.Variant, v.Median, v.Text)
	}

	// Output:
	// collscan     10.0 ops/s  reference
	// covered    9655.0 ops/s  971× faster, 95% CI 943×–980×
	// indexed    9635.0 ops/s  960× faster, 95% CI 950×–985×
	// projected  7995.0 ops/s  797× faster, 95% CI 787×–812×
}

func ExampleCompareTo() {
	// p99 latency in µs of a baseline build and two candidates, six rounds.
	p99 := map[string][]float64{
		"main":     {812, 790, 835, 801, 826, 798},
		"cache":    {402, 415, 391, 420, 398, 405},
		"refactor": {820, 785, 829, 812, 818, 803},
	}

	var samples []verdict.Sample

	for _, name := range []string{"main", "cache", "refactor"} {
		for round, v := range p99[name] {
			samples = append(samples, verdict.Sample{Variant: name, Round: round, Value: v})
		}
	}

	for _, v := range verdict.CompareTo(samples, "main", verdict.LowerIsBetter, verdict.Options{}) {
		fmt.Printf("%-8s %5.0fµs  %s\n", v.Variant, v.Median, v.Text)
	}

	// Output:
	// main       806µs  baseline
	// cache      404µs  1.99× lower, 95% CI 1.90×–2.14×
	// refactor   815µs  no meaningful difference (within ±5%; 95% CI 0.99×–1.01×)
}
