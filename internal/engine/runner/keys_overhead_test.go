package runner_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mongobench/mongobench/internal/engine/runner"
)

// BenchmarkKeyOverhead measures the engine's client CPU per findOne when
// its key is drawn uniformly and when it is drawn by YCSB's scrambled
// zipfian, back to back at each concurrency, against a null server in
// another process (as BenchmarkOverhead). Compare cpu-µs/op of the pairs:
//
//	go test -run '^$' -bench '^BenchmarkKeyOverhead$' -benchtime 20000x -count 5 ./internal/engine/runner/
func BenchmarkKeyOverhead(b *testing.B) {
	uri := startServerProcess(b)
	client := connect(b, uri, 64)
	coll := client.Database(overheadDB).Collection(overheadColl)

	for _, c := range []int{1, 8} {
		for _, d := range []struct{ name, key string }{
			{"uniform", "{^uniform: {min: 0, max: 999999}}"},
			{"scrambled_zipfian", "{^zipfian: {min: 0, max: 999999, scrambled: true}}"},
		} {
			b.Run(fmt.Sprintf("%s/c=%d", d.name, c), func(b *testing.B) {
				eng, plan := compileWorkload(b, client, fmt.Sprintf(overheadWorkload, c, b.N, d.key))

				if err := driverLoop(coll, c, max(1000, 50*c)); err != nil {
					b.Fatal(err)
				}

				var res *runner.PhaseResult

				measure(b, func() { res = eng.RunPhase(context.Background(), plan) })

				checkPhase(b, res, int64(b.N))
			})
		}
	}
}
