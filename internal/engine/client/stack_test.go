package client

import (
	"slices"
	"testing"

	"github.com/mongobench/mongobench/internal/results/result"
)

func TestEveryStackNamesItsLibrary(t *testing.T) {
	for _, s := range Stacks() {
		if s.Library == "" {
			t.Errorf("stack %s names no library for its title", s.Name)
		}
	}
}

func TestLibrariesPutODMsFirst(t *testing.T) {
	libs := Libraries()

	seen := map[string]bool{}
	lastODM := -1

	for i, lib := range libs {
		if seen[lib] {
			t.Errorf("library %s listed twice: %v", lib, libs)
		}

		seen[lib] = true

		for _, s := range Stacks() {
			if s.Library == lib && s.ODM {
				lastODM = i
			}
		}
	}

	for _, s := range Stacks() {
		i := slices.Index(libs, s.Library)
		if i < 0 {
			t.Errorf("stack %s: library %s not listed in %v", s.Name, s.Library, libs)
		}

		if !s.ODM && i < lastODM {
			t.Errorf("driver %s listed before an ODM: %v", s.Library, libs)
		}
	}
}

func TestTitleVersion(t *testing.T) {
	for _, tc := range []struct {
		name          string
		versions      map[string]string
		wantLib, want string
	}{
		{"none", nil, "", ""},
		{"runtime only", map[string]string{"node": "22.1.0", "bson": "6.10.0"}, "", ""},
		{"driver", map[string]string{"node": "22.1.0", "mongodb": "6.16.0"}, "mongodb", "6.16.0"},
		{"odm over its driver", map[string]string{"mongodb": "6.16.0", "mongoose": "8.24.10"}, "mongoose", "8.24.10"},
		{"python odm over its driver", map[string]string{"pymongo": "4.13.0", "mongoengine": "0.29.1"}, "mongoengine", "0.29.1"},
		{"python driver", map[string]string{"python": "3.12.3", "pymongo": "4.13.0"}, "pymongo", "4.13.0"},
		{"an empty version is no version", map[string]string{"mongoose": "", "mongodb": "6.16.0"}, "mongodb", "6.16.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib, v := TitleVersion(tc.versions)
			if lib != tc.wantLib || v != tc.want {
				t.Errorf("TitleVersion(%v) = %q, %q; want %q, %q", tc.versions, lib, v, tc.wantLib, tc.want)
			}
		})
	}
}

// TestThrough: the table's title names an external stack and its library's
// version, nothing for the Go engine, and the stack alone when no library
// version was reported.
func TestThrough(t *testing.T) {
	for _, tc := range []struct {
		c    *result.Client
		want string
	}{
		{nil, ""},
		{&result.Client{Stack: "node-mongoose", Versions: map[string]string{"mongodb": "6.16.0", "mongoose": "8.24.10"}}, " through node-mongoose (mongoose 8.24.10)"},
		{&result.Client{Stack: "python-pymongo"}, " through python-pymongo"},
	} {
		if got := Through(tc.c); got != tc.want {
			t.Errorf("Through(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
