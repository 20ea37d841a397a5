package alarm

import (
	"testing"
	"time"
)

// TestPlatformAlarm is a real-clock sanity check of the platform
// alarm: it must not ring before the time it was set for (being late is
// the machine's business and not checked), a later Set must replace an
// earlier one, and Close must end a Wait in progress.
func TestPlatformAlarm(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}

	for _, d := range []time.Duration{50 * time.Microsecond, 400 * time.Microsecond, 1200 * time.Microsecond, 2 * time.Millisecond} {
		start := time.Now()
		a.Set(d)

		if !a.Wait() {
			t.Fatal("Wait reported the alarm closed")
		}

		if got := time.Since(start); got < d {
			t.Errorf("alarm set for %v rang after %v", d, got)
		}
	}

	// A Set replaces the earlier setting: an hour, replaced by a
	// millisecond, rings (the test would hang until its timeout
	// otherwise).
	a.Set(time.Hour)
	a.Set(time.Millisecond)

	if !a.Wait() {
		t.Fatal("Wait reported the alarm closed")
	}

	a.Set(time.Hour)

	waited := make(chan bool)

	go func() { waited <- a.Wait() }()

	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	if <-waited {
		t.Error("Wait interrupted by Close reported a ring")
	}

	a.Set(time.Millisecond) // on a closed alarm: does nothing, must not panic
}
