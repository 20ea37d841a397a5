// Package clienttest is a protocol peer for tests of the client protocol's
// Go side: a test binary runs it as its "adapter" (re-executing itself with
// PeerEnv set) to reach the edge cases a real adapter should never show on
// purpose (no answer, a fatal reply, a malformed line, a sudden death) and
// to check how reports are filed. It talks to no database: it is no proof
// that a stack works, which the tests against real adapters give.
package clienttest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// PeerEnv selects the peer's behaviour when set in a test binary's
// environment: ok, silent, fatal, malformed, wrongstack, die or hang.
const PeerEnv = "MONGOBENCH_TEST_PEER"

// RecordEnv names, when set, a file the peer appends every operation it
// receives to, one JSON line per operation: [worker, id, args].
const RecordEnv = "MONGOBENCH_TEST_PEER_RECORD"

// Command returns the command line and environment that run the peer in
// mode from the test binary.
func Command(mode string) (args []string, env string) {
	return []string{os.Args[0], "-test.run=^$"}, PeerEnv + "=" + mode
}

// MaybeRun runs the peer and exits when PeerEnv is set; tests call it first
// in TestMain.
func MaybeRun() {
	mode := os.Getenv(PeerEnv)
	if mode == "" {
		return
	}

	fmt.Fprintln(os.Stderr, "peer starting in mode", mode)
	os.Exit(run(mode, os.Stdin, os.Stdout))
}

// message is any line mongobench sends.
type message struct {
	Type       string `json:"type"`
	Stack      string `json:"stack"`
	URI        string `json:"uri"`
	Workers    int    `json:"workers"`
	Worker     int    `json:"worker"`
	Operations []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	} `json:"operations"`
	Ops []json.RawMessage `json:"ops"`
}

// peer is the ok mode's state: one queue per worker.
type peer struct {
	out    *json.Encoder
	outMu  sync.Mutex
	failID map[int]bool

	mu      sync.Mutex
	cond    *sync.Cond
	queues  [][]int
	stop    bool
	origin  time.Time
	running sync.WaitGroup
	starved int64
}

func (p *peer) send(v any) {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	_ = p.out.Encode(v)
}

func run(mode string, in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 64<<20)

	p := &peer{out: json.NewEncoder(out), failID: map[int]bool{}}
	p.cond = sync.NewCond(&p.mu)

	var record *os.File

	if path := os.Getenv(RecordEnv); path != "" {
		f, err := os.Create(path) //nolint:gosec // a test's own file
		if err != nil {
			fmt.Fprintln(os.Stderr, "peer:", err)
			return 3
		}

		defer f.Close()

		record = f
	}

	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			fmt.Fprintln(os.Stderr, "peer: bad line:", err)
			return 3
		}

		switch m.Type {
		case "init":
			fmt.Fprintln(os.Stderr, "peer: connecting to", m.URI)

			switch mode {
			case "silent":
				continue
			case "fatal":
				p.send(map[string]any{"type": "fatal", "message": "operation \"x\": kind drop has no idiomatic call"})
				return 1
			}

			for _, o := range m.Operations {
				if strings.HasPrefix(o.Name, "fail") {
					p.failID[o.ID] = true
				}
			}

			stack := m.Stack
			if mode == "wrongstack" {
				stack = "other-stack"
			}

			p.send(map[string]any{"type": "ready", "stack": stack, "versions": map[string]string{"peer": "1"}})

			if mode == "malformed" {
				fmt.Fprintln(out, "this is not JSON")
			}
		case "phase":
			if mode == "die" {
				fmt.Fprintln(os.Stderr, "peer: dying at phase start")
				return 4
			}

			p.startPhase(m.Workers, mode == "hang")
		case "ops":
			if mode == "echo" {
				p.echo(m.Worker, m.Ops)
				continue
			}

			p.mu.Lock()
			for _, raw := range m.Ops {
				var entry []json.RawMessage
				var id int

				if json.Unmarshal(raw, &entry) == nil && len(entry) == 2 && json.Unmarshal(entry[0], &id) == nil {
					p.queues[m.Worker] = append(p.queues[m.Worker], id)

					if record != nil {
						fmt.Fprintf(record, "[%d,%d,%s]\n", m.Worker, id, entry[1])
					}
				}
			}
			p.cond.Broadcast()
			p.mu.Unlock()
		case "stop":
			if mode == "hang" {
				continue
			}

			p.mu.Lock()
			p.stop = true
			p.cond.Broadcast()
			p.mu.Unlock()
			p.running.Wait()
			p.send(map[string]any{"type": "stopped", "starved": p.starved})
		case "exit":
			return 0
		}
	}

	return 0
}

// startPhase starts the workers: each takes its queue's next operation,
// "runs" it for 200 µs, and reports it in batches every 20 ms.
func (p *peer) startPhase(workers int, hang bool) {
	p.mu.Lock()
	p.queues = make([][]int, workers)
	p.stop = false
	p.origin = time.Now()
	p.mu.Unlock()

	for w := range workers {
		p.running.Add(1)

		go func() {
			defer p.running.Done()

			var batch [][]any

			last := time.Now()
			flush := func() {
				if len(batch) > 0 {
					p.send(map[string]any{"type": "done", "worker": w, "r": batch})
					batch = nil
				}

				last = time.Now()
			}

			for {
				p.mu.Lock()
				for len(p.queues[w]) == 0 && !p.stop {
					p.starved++
					p.cond.Wait()
				}

				if p.stop || hang {
					p.mu.Unlock()
					flush()

					return
				}

				id := p.queues[w][0]
				p.queues[w] = p.queues[w][1:]
				left := len(p.queues[w])
				p.mu.Unlock()

				if left == 32 {
					p.send(map[string]any{"type": "need", "worker": w})
				}

				start := time.Since(p.origin)
				time.Sleep(200 * time.Microsecond)
				lat := time.Since(p.origin) - start

				var e any
				if p.failID[id] {
					e = map[string]any{"code": 11000, "name": "MongoServerError", "message": "E11000 duplicate key", "labels": []string{}, "network": false, "timeout": false}
				}

				batch = append(batch, []any{id, start.Nanoseconds(), lat.Nanoseconds(), 1, e})
				if time.Since(last) > 20*time.Millisecond {
					flush()
				}
			}
		}()
	}
}

// echo answers an ops line with a done line of as many records, each a
// successful operation of one document.
func (p *peer) echo(worker int, ops []json.RawMessage) {
	r := make([][]any, 0, len(ops))

	for _, raw := range ops {
		var entry []json.RawMessage
		var id int

		if json.Unmarshal(raw, &entry) == nil && len(entry) == 2 && json.Unmarshal(entry[0], &id) == nil {
			r = append(r, []any{id, 1000 + len(r), 250000, 1, nil})
		}
	}

	p.send(map[string]any{"type": "done", "worker": worker, "r": r})
}
