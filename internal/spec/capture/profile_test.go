package capture

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// readProfile feeds a file of profiler documents, one relaxed extended
// JSON document a line, to ProfileDoc, as the profiler reader does.
func readProfile(t *testing.T, c *Capture, path string) {
	t.Helper()

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)

	n := 0
	for sc.Scan() {
		n++
		if bad := c.ProfileDoc(sc.Bytes(), n); bad != "" {
			c.ProfileBad(path, n, bad)
		}
	}

	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestProfileSameShapes: testdata/shop.profile.jsonl holds the fixture
// log's operations on the shop database as the profiler documents them
// (op, ns, command, millis, ts, ninserted, client, appName; the update and
// delete commands as their statements only, since the profiler records a
// write's statements). Read as a profile, it gives the log's shapes with
// the same counts and server times, except the log's update command whose
// statements it does not show, which has no profiler document.
func TestProfileSameShapes(t *testing.T) {
	fromLog := captureFile(t, Options{}, fixture)

	fromProfile := New(Options{})
	readProfile(t, fromProfile, "testdata/shop.profile.jsonl")

	got := map[string]*Shape{}
	for _, s := range fromProfile.Shapes() {
		got[s.ID] = s
	}

	want := 0

	for _, s := range fromLog.Shapes() {
		if strings.Contains(s.Text, "statements not in the log") {
			continue
		}

		want++

		p, ok := got[s.ID]
		switch {
		case !ok:
			t.Errorf("shape %s %s is not in the profile's table", s.ID, s.Text)
		case p.Count != s.Count || p.Percentile(50) != s.Percentile(50) || p.Percentile(99) != s.Percentile(99):
			t.Errorf("%s: profile count %d p50 %d p99 %d, log %d %d %d", s.Text, p.Count, p.Percentile(50), p.Percentile(99),
				s.Count, s.Percentile(50), s.Percentile(99))
		}
	}

	if len(got) != want {
		t.Errorf("%d shapes from the profile, want the log's %d", len(got), want)
	}

	st := fromProfile.Stats()
	if st.Profile != 37 || st.GetMore != 1 || st.Bad != 0 || st.Conns != 3 {
		t.Errorf("profile %d getMore %d bad %d clients %d, want 37 1 0 3", st.Profile, st.GetMore, st.Bad, st.Conns)
	}

	// A workload from the profile validates and holds the same operations.
	if _, _, _, err := fromProfile.WorkloadAndShapes(meta()); err != nil {
		t.Fatal(err)
	}
}

// TestProfileBadDocuments: a document that is not a profiler entry is
// counted and quoted, not a failure.
func TestProfileBadDocuments(t *testing.T) {
	c := New(Options{})

	for i, doc := range []string{`{"x": 1}`, `{"op": "query", "ns": "a.b"}`, `not json`} {
		if bad := c.ProfileDoc([]byte(doc), i+1); bad == "" {
			t.Errorf("%s: accepted", doc)
		} else {
			c.ProfileBad("shop.system.profile", i+1, bad)
		}
	}

	st := c.Stats()
	if st.Bad != 3 || !strings.HasPrefix(st.BadLines[0], "shop.system.profile document 1: no op") {
		t.Errorf("bad %d, quoted %q", st.Bad, st.BadLines)
	}
}
