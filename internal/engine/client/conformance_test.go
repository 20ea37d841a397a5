package client

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/spec/datagen"
)

// protocolFiles is clients/protocol: the adapter protocol's JSON Schema and
// conformance fixtures. Only tests (this one and the adapters' own suites)
// read them, so they are read from the source tree rather than embedded in
// the binary.
var protocolFiles = os.DirFS(filepath.Join("..", "..", "..", "clients", "protocol"))

// protocolSchema compiles clients/protocol/schema.json; request and reply
// are its two halves.
func protocolSchema(t *testing.T) (request, reply *jsonschema.Schema) {
	t.Helper()

	raw, err := fs.ReadFile(protocolFiles, "schema.json")
	if err != nil {
		t.Fatal(err)
	}

	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}

	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}

	if request, err = c.Compile("schema.json#/$defs/request"); err != nil {
		t.Fatal(err)
	}

	if reply, err = c.Compile("schema.json#/$defs/reply"); err != nil {
		t.Fatal(err)
	}

	return request, reply
}

type fixtureMessage struct {
	Direction string          `json:"direction"`
	Name      string          `json:"name"`
	Message   json.RawMessage `json:"message"`
}

func readFixtures(t *testing.T, name string) []fixtureMessage {
	t.Helper()

	raw, err := fs.ReadFile(protocolFiles, "fixtures/"+name)
	if err != nil {
		t.Fatal(err)
	}

	var f struct {
		Messages []fixtureMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}

	if len(f.Messages) == 0 {
		t.Fatalf("%s has no messages", name)
	}

	return f.Messages
}

// validate validates one JSON text against s.
func validate(s *jsonschema.Schema, text []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return err
	}

	return s.Validate(v)
}

// TestProtocolFixtures checks the shared fixtures against the schema
// (valid.json valid, each of invalid.json refused) and that the Go side
// reads every valid reply into what the message says.
func TestProtocolFixtures(t *testing.T) {
	t.Parallel()

	requests, replies := protocolSchema(t)
	schemaOf := map[string]*jsonschema.Schema{"request": requests, "reply": replies}

	for _, m := range readFixtures(t, "valid.json") {
		if err := validate(schemaOf[m.Direction], m.Message); err != nil {
			t.Errorf("valid %s %q refused: %v", m.Direction, m.Name, err)
		}

		if m.Direction != "reply" {
			continue
		}

		var want reply
		if err := json.Unmarshal(m.Message, &want); err != nil {
			t.Errorf("reply %q: encoding/json: %v", m.Name, err)
			continue
		}

		// The phase lines go through the parser of their own.
		if got, ok := parseReply(m.Message); ok {
			if got.Type != want.Type || got.Worker != want.Worker || got.Starved != want.Starved || len(got.Records) != len(want.R) {
				t.Errorf("reply %q: parsed as %+v, want %+v", m.Name, got, want)
			}
		} else if want.Type == msgDone || want.Type == msgNeed || want.Type == msgStopped {
			t.Errorf("reply %q: a %s line not read by the phase lines' parser", m.Name, want.Type)
		}
	}

	for _, m := range readFixtures(t, "invalid.json") {
		if err := validate(schemaOf[m.Direction], m.Message); err == nil {
			t.Errorf("invalid %s %q accepted", m.Direction, m.Name)
		}
	}
}

// TestGoSendsValidRequests checks that every message the Go side writes is
// valid against the schema: init of a workload with schemas, indexes,
// write concerns and read preferences; ops lines of every kind's
// arguments; phase, stop and exit.
func TestGoSendsValidRequests(t *testing.T) {
	t.Parallel()

	request, _ := protocolSchema(t)

	spec := parseSpec(t, strings.Replace(framingWorkload, "collections:\n  - name: c\n", `collections:
  - name: c
    indexes:
      - keys: {name: 1}
        unique: true
      - keys: {at: 1}
        expire_after: 1h
        sparse: true
  - name: empty
`, 1))
	spec.Operations[0].ReadPreference = "secondaryPreferred"

	env, errs := datagen.NewEnv(spec.Seed, spec.Vars.Node(), "vars")
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	ops, errs := op.Compile(spec, env)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	profile := "/tmp/p"
	s, _ := Lookup("node-mongoose")

	init, err := initOf(Config{Stack: s, URI: "mongodb://127.0.0.1:1/", Database: "d", Spec: spec, Ops: ops, Profile: profile})
	if err != nil {
		t.Fatal(err)
	}

	msgs := map[string]any{"init": init, "phase": phaseMessage("run", 4), "stop": typeOnly{msgStop}, "exit": typeOnly{msgExit}}
	for name, m := range msgs {
		text, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}

		if err := validate(request, text); err != nil {
			t.Errorf("%s: %v\n%s", name, err, text)
		}
	}

	var line OpsLine

	sc := env.NewScope(0)
	for range 20 {
		line.Begin(1)

		for id, o := range ops {
			sc.NextIteration()

			a, err := o.Args(sc)
			if err != nil {
				t.Fatal(err)
			}

			if err := line.Add(id, &a); err != nil {
				t.Fatal(err)
			}
		}

		text := append(append([]byte(nil), line.buf...), ']', '}')
		if err := validate(request, text); err != nil {
			t.Fatalf("ops line: %v\n%s", err, text)
		}
	}
}
