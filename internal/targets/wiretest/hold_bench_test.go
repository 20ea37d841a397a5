package wiretest_test

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/targets/wiretest"
)

// BenchmarkHoldAccuracy measures the server's reply delay as a client over
// loopback sees it: 8 raw connections each send an OP_MSG ping and time it
// from just before the write to the end of the reply's read, and the excess
// over the configured delay is reported as p50/p90/p99 in microseconds. The
// excess includes the loopback round trip and the client's own wake-up, which
// the 0s case measures alone. One iteration is one round of 8 pings, so
// -benchtime bounds the count:
//
//	go test -run '^$' -bench HoldAccuracy -benchtime 2s ./internal/targets/wiretest/
func BenchmarkHoldAccuracy(b *testing.B) {
	delays := []time.Duration{
		0,
		100 * time.Microsecond,
		500 * time.Microsecond,
		1200 * time.Microsecond,
		20 * time.Millisecond,
		time.Second,
	}

	body := binary.LittleEndian.AppendUint32(nil, 0) // flag bits
	body = append(body, 0)                           // section kind 0
	body = append(body, mustMarshal(b, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})...)
	ping := message(1, opMsg, body)

	for _, d := range delays {
		b.Run(d.String(), func(b *testing.B) {
			s := startServer(b, wiretest.Config{Latency: wiretest.Fixed(d)})

			conns := make([]net.Conn, 8)
			for i := range conns {
				conns[i] = dial(b, s)
			}

			var (
				mu     sync.Mutex
				excess []time.Duration
			)

			for b.Loop() {
				var wg sync.WaitGroup

				for _, c := range conns {
					wg.Go(func() {
						start := time.Now()

						if _, err := c.Write(ping); err != nil {
							b.Error(err)
							return
						}

						// Not readReply: it stops the benchmark with
						// Fatal, which only its own goroutine may call.
						if err := skipMessage(c); err != nil {
							b.Error(err)
							return
						}

						took := time.Since(start)

						mu.Lock()
						excess = append(excess, took-d)
						mu.Unlock()
					})
				}

				wg.Wait()
			}

			slices.Sort(excess)

			for _, p := range []struct {
				q    float64
				unit string
			}{{0.50, "p50-excess-µs"}, {0.90, "p90-excess-µs"}, {0.99, "p99-excess-µs"}} {
				if len(excess) > 0 {
					i := min(int(p.q*float64(len(excess))), len(excess)-1)
					b.ReportMetric(float64(excess[i])/float64(time.Microsecond), p.unit)
				}
			}
		})
	}
}

// skipMessage reads one whole wire message from c, whatever it holds.
func skipMessage(c net.Conn) error {
	var hdr [16]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}

	_, err := io.CopyN(io.Discard, c, int64(binary.LittleEndian.Uint32(hdr[0:4]))-16)

	return err
}
