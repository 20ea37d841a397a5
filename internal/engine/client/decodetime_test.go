package client

import (
	"encoding/json"
	"testing"
)

// TestDoneRecordDecodeTime checks the optional sixth element of a done
// record, the client's decode time, through both readers of done lines:
// the fast parser and encoding/json, which must agree, and that a record
// without it reads as "not measured" (-1) rather than as zero.
func TestDoneRecordDecodeTime(t *testing.T) {
	t.Parallel()

	line := []byte(`{"type":"done","worker":2,"r":[[0,10,20000,200,null,15000],[1,11,30,0,null],[0,12,40,0,null,0]]}`)
	want := []int64{15000, -1, 0}

	fast, ok := parseReply(line)
	if !ok {
		t.Fatal("the fast parser refused a done line with decode times")
	}

	var slow reply
	if err := json.Unmarshal(line, &slow); err != nil {
		t.Fatal(err)
	}

	for i, w := range want {
		if got := fast.Records[i].DecodeNS; got != w {
			t.Errorf("fast parser: record %d decode %d, want %d", i, got, w)
		}

		if got := slow.R[i].DecodeNS; got != w {
			t.Errorf("encoding/json: record %d decode %d, want %d", i, got, w)
		}
	}

	if fast.Records[0].Docs != 200 || fast.Records[0].Latency != 20000 {
		t.Errorf("the decode time moved another element: %+v", fast.Records[0])
	}

	for _, bad := range []string{
		`{"type":"done","worker":0,"r":[[0,1,2,3,null,-4]]}`,
		`{"type":"done","worker":0,"r":[[0,1,2,3,null,4,5]]}`,
	} {
		if _, ok := parseReply([]byte(bad)); ok {
			t.Errorf("fast parser accepted %s", bad)
		}

		var r reply
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("encoding/json accepted %s", bad)
		}
	}
}
