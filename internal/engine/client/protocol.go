package client

import (
	"encoding/json"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/engine/errkind"
	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// ProtocolVersion is the version of the adapter protocol this mongobench
// speaks (docs/clients.md); an adapter refuses any other at init.
const ProtocolVersion = 1

// Message types, the "type" of every line.
const (
	msgInit    = "init"
	msgReady   = "ready"
	msgFatal   = "fatal"
	msgPhase   = "phase"
	msgOps     = "ops"
	msgNeed    = "need"
	msgDone    = "done"
	msgStop    = "stop"
	msgStopped = "stopped"
	msgExit    = "exit"
)

// initMessage is the first line mongobench sends: everything the adapter
// needs to build its models and connect.
type initMessage struct {
	Type        string           `json:"type"`
	Protocol    int              `json:"protocol"`
	Stack       string           `json:"stack"`
	URI         string           `json:"uri"`
	Database    string           `json:"database"`
	TimeoutMS   int64            `json:"timeout_ms"`
	Profile     *string          `json:"profile"`
	Collections []collectionInit `json:"collections"`
	Operations  []operationInit  `json:"operations"`
}

// collectionInit describes a collection: its schema and indexes.
type collectionInit struct {
	Name    string      `json:"name"`
	Schema  *Schema     `json:"schema"`
	Indexes []indexInit `json:"indexes"`
}

// indexInit is one index: keys in canonical Extended JSON, in order.
type indexInit struct {
	Keys    json.RawMessage `json:"keys"`
	Options indexOptions    `json:"options"`
}

type indexOptions struct {
	Name               string `json:"name"`
	Unique             bool   `json:"unique,omitempty"`
	Sparse             bool   `json:"sparse,omitempty"`
	ExpireAfterSeconds *int64 `json:"expireAfterSeconds,omitempty"`
}

// operationInit is an operation as the adapter knows it; its id is its
// index in the runner's operation registry, which ops and done lines use.
type operationInit struct {
	ID             int               `json:"id"`
	Name           string            `json:"name"`
	Kind           string            `json:"kind"`
	Collection     string            `json:"collection"`
	WriteConcern   *writeConcernInit `json:"write_concern"`
	ReadPreference *string           `json:"read_preference"`
}

type writeConcernInit struct {
	W any   `json:"w,omitempty"`
	J *bool `json:"j,omitempty"`
}

// phaseMessage starts a measured phase of workers closed-loop workers.
func phaseMessage(name string, workers int) any {
	return struct {
		Type    string `json:"type"`
		Phase   string `json:"phase"`
		Workers int    `json:"workers"`
	}{msgPhase, name, workers}
}

// typeOnly is a message that is its type alone: stop, exit.
type typeOnly struct {
	Type string `json:"type"`
}

// reply is any line the adapter sends; Type says which fields are set.
type reply struct {
	Type     string            `json:"type"`
	Stack    string            `json:"stack"`
	Versions map[string]string `json:"versions"`
	Message  string            `json:"message"`
	Worker   int               `json:"worker"`
	R        []doneRecord      `json:"r"`
	Starved  int64             `json:"starved"`
}

// doneRecord is one finished operation: [OPID, START_NS, LATENCY_NS, DOCS,
// ERR] or, from an adapter that measures it, [OPID, START_NS, LATENCY_NS,
// DOCS, ERR, DECODE_NS].
type doneRecord struct {
	Op      int
	StartNS int64
	Latency int64
	Docs    int64
	Err     *AdapterError

	// DecodeNS is the client's own time on the operation's documents
	// (docs/clients.md, Decode time); -1 when the adapter sent none.
	DecodeNS int64
}

// UnmarshalJSON reads the array form.
func (d *doneRecord) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}

	if len(raw) != 5 && len(raw) != 6 {
		return fmt.Errorf("a done record has 5 or 6 elements, not %d", len(raw))
	}

	d.DecodeNS = -1

	for i, dst := range []any{&d.Op, &d.StartNS, &d.Latency, &d.Docs, &d.Err, &d.DecodeNS}[:len(raw)] {
		if err := json.Unmarshal(raw[i], dst); err != nil {
			return fmt.Errorf("done record element %d: %w", i, err)
		}
	}

	if len(raw) == 6 && d.DecodeNS < 0 {
		return fmt.Errorf("done record element 5: a negative decode time %d", d.DecodeNS)
	}

	return nil
}

// AdapterError is an operation's failure as the adapter reports it. Error
// returns it as an error that errkind classifies as it classifies the Go
// driver's (see Err).
type AdapterError struct {
	Code    *int     `json:"code"`
	Name    string   `json:"name"`
	Message string   `json:"message"`
	Labels  []string `json:"labels"`
	Network bool     `json:"network"`
	Timeout bool     `json:"timeout"`
}

// Err returns the adapter's error as an error that package errkind
// classifies under the same kinds as the Go driver's (errkind.Reported).
// The stack's class name stays in the message only: kinds must not depend
// on wording.
func (e *AdapterError) Err() error {
	msg := e.Message
	if e.Name != "" {
		msg = e.Name + ": " + msg
	}

	return errkind.Reported{Code: e.Code, Labels: e.Labels, Network: e.Network, Timeout: e.Timeout, Message: msg}.Err()
}

// Operations describes the operations to the adapter: ids are positions in
// names (the runner's registry order), so that done records file directly.
func operationsInit(ops []*op.Operation, names []string) []operationInit {
	out := make([]operationInit, 0, len(names))

	for id, name := range names {
		i := slices.IndexFunc(ops, func(o *op.Operation) bool { return o.Name() == name })
		if i < 0 {
			continue
		}

		so := ops[i].Spec
		oi := operationInit{ID: id, Name: name, Kind: so.Op, Collection: so.Collection}

		if wc := so.WriteConcern; wc != nil && (wc.W != nil || wc.J != nil) {
			oi.WriteConcern = &writeConcernInit{J: wc.J}
			if wc.W != nil {
				oi.WriteConcern.W = wc.W.N
				if wc.W.Tag != "" {
					oi.WriteConcern.W = wc.W.Tag
				}
			}
		}

		if so.ReadPreference != "" {
			rp := so.ReadPreference
			oi.ReadPreference = &rp
		}

		out = append(out, oi)
	}

	return out
}

// collectionsInit describes the spec's collections: schemas and indexes.
func collectionsInit(spec *workload.Spec, strict bool) ([]collectionInit, error) {
	out := make([]collectionInit, 0, len(spec.Collections))

	for _, c := range spec.Collections {
		sc, err := DeriveSchema(spec, c.Name, strict)
		if err != nil {
			return nil, err
		}

		ci := collectionInit{Name: c.Name, Schema: sc, Indexes: []indexInit{}}

		for _, idx := range c.Indexes {
			keys, perr := workload.IndexKeys(idx.Keys.Node(), "")
			if perr != nil {
				continue // validation reported it
			}

			kd := make(bson.D, 0, len(keys))
			for _, k := range keys {
				kd = append(kd, bson.E{Key: k.Field, Value: k.Value})
			}

			text, err := bson.MarshalExtJSON(kd, true, false)
			if err != nil {
				return nil, fmt.Errorf("collection %q: index keys: %w", c.Name, err)
			}

			opts := indexOptions{Name: idx.Name, Unique: idx.Unique, Sparse: idx.Sparse}
			if opts.Name == "" {
				opts.Name = workload.DefaultIndexName(keys)
			}

			if idx.ExpireAfter != nil {
				s := int64(idx.ExpireAfter.D().Seconds())
				opts.ExpireAfterSeconds = &s
			}

			ci.Indexes = append(ci.Indexes, indexInit{Keys: text, Options: opts})
		}

		out = append(out, ci)
	}

	return out, nil
}
