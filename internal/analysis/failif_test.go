package analysis

import "testing"

func TestParseGate(t *testing.T) {
	g, err := ParseGate("p99 +12.5% find_by_id")
	if err != nil || g.Metric.Name != "p99" || !g.Up || g.Pct != 12.5 || g.Operation != "find_by_id" {
		t.Errorf("%+v %v", g, err)
	}

	g, err = ParseGate("throughput -5%")
	if err != nil || g.Metric.Name != "throughput" || g.Up || g.Pct != 5 || g.Operation != "" {
		t.Errorf("%+v %v", g, err)
	}
}
