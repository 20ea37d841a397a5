package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of the run to path, for finding where
// the client spends its time (MONGOBENCH_CPUPROFILE). It returns the function
// that stops profiling and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path) //nolint:gosec // the user names the file
	if err != nil {
		return nil, fmt.Errorf("CPU profile: %w", err)
	}

	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("CPU profile: %w", err)
	}

	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
