package kube_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mongobench/mongobench/internal/lab/kube"
)

func TestObjectName(t *testing.T) {
	for in, want := range map[string]string{
		"ycsb-b":                         "ycsb-b",
		"Kube Demo!":                     "kube-demo",
		"__":                             "mongobench",
		strings.Repeat("ab", 40):         strings.Repeat("ab", 27),
		strings.Repeat("a", 53) + "_bbb": strings.Repeat("a", 53),
	} {
		if got := kube.ObjectName(in); got != want {
			t.Errorf("ObjectName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSetDefaults(t *testing.T) {
	now := time.Date(2026, 5, 1, 14, 3, 9, 0, time.FixedZone("CEST", 2*3600))

	for _, tc := range []struct {
		name     string
		given    kube.Options
		workload string
		want     kube.Options
	}{
		{
			name:     "everything derived",
			workload: "YCSB b",
			want:     kube.Options{Name: "ycsb-b", URISecret: "ycsb-b-uri", RunID: "20260501-120309"},
		},
		{
			name:     "the secret follows a given name",
			given:    kube.Options{Name: "mine"},
			workload: "ycsb-b",
			want:     kube.Options{Name: "mine", URISecret: "mine-uri", RunID: "20260501-120309"},
		},
		{
			name:     "given values are kept",
			given:    kube.Options{Name: "mine", URISecret: "creds", RunID: "r1"},
			workload: "ycsb-b",
			want:     kube.Options{Name: "mine", URISecret: "creds", RunID: "r1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.given
			o.SetDefaults(tc.workload, now)

			if o.Name != tc.want.Name || o.URISecret != tc.want.URISecret || o.RunID != tc.want.RunID {
				t.Errorf("got name %q, secret %q, run %q; want %q, %q, %q",
					o.Name, o.URISecret, o.RunID, tc.want.Name, tc.want.URISecret, tc.want.RunID)
			}
		})
	}
}
