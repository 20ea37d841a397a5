package wireproxy

import (
	"encoding/binary"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

func marshal(t *testing.T, d bson.D) []byte {
	t.Helper()

	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}

	return b
}

// message frames body after a header with opCode.
func message(opCode int32, body []byte) []byte {
	m := binary.LittleEndian.AppendUint32(nil, uint32(wiretest.HeaderLen+len(body)))
	m = binary.LittleEndian.AppendUint32(m, 7) // requestID
	m = binary.LittleEndian.AppendUint32(m, 0)
	m = binary.LittleEndian.AppendUint32(m, uint32(opCode))

	return append(m, body...)
}

// TestStripCompression removes the compressors of a hello in both of the
// forms drivers send it, and leaves a well-framed message the server reads
// with everything else in it.
func TestStripCompression(t *testing.T) {
	hello := bson.D{{Key: "isMaster", Value: 1}, {Key: "compression", Value: bson.A{"zlib", "snappy"}}, {Key: "client", Value: bson.D{{Key: "app", Value: "x"}}}}

	// OP_QUERY, wrapped in $query because of a read preference.
	var q []byte
	q = binary.LittleEndian.AppendUint32(q, 0)
	q = append(q, "admin.$cmd\x00"...)
	q = binary.LittleEndian.AppendUint32(q, 0)
	q = binary.LittleEndian.AppendUint32(q, 0xffffffff)
	q = append(q, marshal(t, bson.D{{Key: "$query", Value: hello}, {Key: "$readPreference", Value: bson.D{{Key: "mode", Value: "primaryPreferred"}}}})...)
	query := message(wiretest.OpQuery, q)

	// OP_MSG with a checksum, which the edit invalidates.
	var m []byte
	m = binary.LittleEndian.AppendUint32(m, 1) // checksumPresent
	m = append(m, 0)
	m = append(m, marshal(t, append(bson.D{{Key: "hello", Value: 1}}, append(hello[1:], bson.E{Key: "$db", Value: "admin"})...))...)
	m = binary.LittleEndian.AppendUint32(m, 0xdeadbeef)
	msg := message(wiretest.OpMsg, m)

	for _, tc := range []struct {
		name string
		msg  []byte
		keys []string
	}{
		{"OP_QUERY", query, []string{"isMaster", "client"}},
		{"OP_MSG", msg, []string{"hello", "client", "$db"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := wiretest.ParseFrame(tc.msg)
			if err != nil {
				t.Fatal(err)
			}

			out, changed := stripCompression(tc.msg, f)
			if !changed {
				t.Fatal("nothing stripped")
			}

			g, err := wiretest.ParseFrame(out)
			if err != nil {
				t.Fatalf("the edited message does not parse: %v", err)
			}

			elems, _ := g.Body.Elements()
			if len(elems) != len(tc.keys) {
				t.Fatalf("body %v, want keys %v", g.Body, tc.keys)
			}

			for i, e := range elems {
				if e.Key() != tc.keys[i] {
					t.Errorf("key %d: %s, want %s", i, e.Key(), tc.keys[i])
				}
			}

			if g.OpCode == wiretest.OpMsg && binary.LittleEndian.Uint32(out[16:])&1 != 0 {
				t.Error("checksum flag still set")
			}

			if g.OpCode == wiretest.OpQuery {
				outer := bson.Raw(out[g.QueryOffset:])
				if err := outer.Validate(); err != nil {
					t.Fatalf("the $query wrapper is broken: %v", err)
				}

				if mode, _ := outer.Lookup("$readPreference", "mode").StringValueOK(); mode != "primaryPreferred" {
					t.Errorf("read preference lost: %v", outer)
				}
			}

			if again, changed := stripCompression(out, g); changed || len(again) != len(out) {
				t.Error("a hello without compressors was changed")
			}
		})
	}
}
