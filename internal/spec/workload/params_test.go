package workload

import (
	"strings"
	"testing"
)

const paramBase = `name: t
database: bench
params:
  recordcount: 1000
  ratio: {type: float, default: 0.5}
  dist: {type: string, default: zipfian, values: [uniform, zipfian]}
  length: {type: duration, default: 2s}
collections:
  - name: c
load:
  - collection: c
    documents: ${recordcount}
    document: {a: {^param: ratio}, d: "${dist}", label: "n=${recordcount}"}
run:
  duration: ${length}
operations:
  - name: ins
    op: insertOne
    collection: c
    document: {k: {^int: {min: 0, max: "${recordcount}"}}}
`

func TestParamsDefaultsAndTypes(t *testing.T) {
	t.Parallel()

	s, errs := Parse("w.yaml", []byte(paramBase))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	if s.Load[0].Documents != 1000 {
		t.Errorf("load.documents = %d, want the default 1000", s.Load[0].Documents)
	}

	if s.Run.Duration.D().String() != "2s" {
		t.Errorf("run.duration = %s, want 2s", s.Run.Duration.D())
	}

	doc := s.Load[0].Document.Node()
	if got := doc.Content[1].Tag + " " + doc.Content[1].Value; got != "!!float 0.5" {
		t.Errorf("{^param: ratio} became %q, want a float 0.5", got)
	}

	if got := doc.Content[5].Value; got != "n=1000" {
		t.Errorf("interpolated label = %q, want n=1000", got)
	}

	if len(s.Params) != 4 || s.Params[0].Name != "recordcount" || s.Params[0].Type != "int" || s.Params[0].Set {
		t.Errorf("Params = %+v", s.Params)
	}
}

func TestParamsSet(t *testing.T) {
	t.Parallel()

	s, errs := ParseWith("w.yaml", []byte(paramBase), []string{"recordcount=5", "dist=uniform"})
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	if s.Load[0].Documents != 5 {
		t.Errorf("load.documents = %d, want 5 from --set", s.Load[0].Documents)
	}

	if p := s.Params[0]; p.Value != "5" || !p.Set || p.Default != "1000" {
		t.Errorf("recordcount = %+v, want value 5, set, default 1000", p)
	}
}

func TestParamsErrors(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name string
		yaml string
		set  []string
		want string
	}{
		{"wrong type", paramBase, []string{"recordcount=ten"}, `--set recordcount=ten: "ten" is not a valid int (parameter recordcount has type int)`},
		{"not in values", paramBase, []string{"dist=latest"}, `"latest" is not one of uniform, zipfian`},
		{"undeclared set", paramBase, []string{"fieldcount=3"}, `w.yaml declares no parameter "fieldcount" (declared: dist, length, ratio, recordcount)`},
		{"no equals", paramBase, []string{"recordcount"}, "--set recordcount: give name=value"},
		{
			"unknown reference", strings.Replace(paramBase, "max: \"${recordcount}\"", "max: \"${recordcnt}\"", 1), nil,
			`w.yaml:20:40: operations[0].document.k.^int.max: unknown parameter "recordcnt"`,
		},
		{"bad default", strings.Replace(paramBase, "default: 2s", "default: soon", 1), nil, `params.length: default "soon" is not a valid duration`},
		{"bad type", strings.Replace(paramBase, "type: float", "type: real", 1), nil, `"real" is not a parameter type`},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			_, errs := ParseWith("w.yaml", []byte(tc.yaml), tc.set)
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}

// TestParamsLeaveEnvInTargets checks that ${NAME} in targets stays for the
// environment when it is not a parameter.
func TestParamsLeaveEnvInTargets(t *testing.T) {
	t.Parallel()

	src := paramBase + "targets:\n  - name: remote\n    kind: uri\n    uri: mongodb://u:${PASSWORD}@h/\n"

	s, errs := Parse("w.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	if got := s.Targets[0].URI; !strings.Contains(got, "${PASSWORD}") {
		t.Errorf("target uri = %q, want ${PASSWORD} kept", got)
	}
}

func TestSetMaxOperations(t *testing.T) {
	t.Parallel()

	s, errs := Parse("w.yaml", []byte(paramBase))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	if err := s.SetMaxOperations(77); err != nil || s.Run.MaxOperations != 77 {
		t.Errorf("SetMaxOperations: %v, run.max_operations = %d", err, s.Run.MaxOperations)
	}

	// A workload whose only phase ends by its stages has nothing to cap.
	ramp, errs := Parse("w.yaml", []byte(strings.Replace(base, "run:\n  duration: 1s\n", "run:\n  stages:\n    - {duration: 1s, rate: 10}\n", 1)))
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	want := "--max-operations applies to phases that run for a duration or a number of operations, and no phase of t does (they end by stages or blocks)"
	if err := ramp.SetMaxOperations(5); err == nil || err.Error() != want {
		t.Errorf("SetMaxOperations on a ramp: %v, want %q", err, want)
	}
}

func TestWeightInSequenceRejected(t *testing.T) {
	t.Parallel()

	src := strings.Replace(base, "run:\n  duration: 1s\n", "run:\n  duration: 1s\n  sequence: [ins]\n", 1) + "    weight: 3\n"

	_, errs := Parse("w.yaml", []byte(src))
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), `operations[0].weight: applies to weighted mixes, and "ins" runs only in sequences`) {
		t.Errorf("errors %v, want the weight of a sequence-only operation rejected", errs)
	}
}

func TestParamsInVariants(t *testing.T) {
	t.Parallel()

	src := paramBase + "variants:\n  - name: v\n    run: {concurrency: 2}\n"

	s, errs := ParseWith("w.yaml", []byte(src), []string{"recordcount=9"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	specs, errs := s.VariantSpecs()
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	for _, v := range specs {
		if v.Load[0].Documents != 9 || len(v.Params) != 4 || v.Params[0].Value != "9" {
			t.Errorf("variant %q: documents %d, params %+v; want the --set value 9 in both", v.Variant, v.Load[0].Documents, v.Params)
		}
	}
}

func TestGeneratedBatchSizeOfInsertManyRefused(t *testing.T) {
	t.Parallel()

	src := strings.Replace(base, "    op: insertOne\n", "    op: insertMany\n    batch_size: {^int: {min: 1, max: 9}}\n", 1)

	_, errs := Parse("w.yaml", []byte(src))
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "operations[0].batch_size: must be a constant for insertMany") {
		t.Errorf("errors %v, want a generated insertMany batch_size refused", errs)
	}
}

// secretParamBase declares a parameter named like a secret and one marked
// secret: true, with values to choose from.
const secretParamBase = `name: t
database: bench
params:
  api_token: none
  tenant: {type: string, default: nobody, values: [nobody, acme], secret: true}
  label: plain
collections:
  - name: c
operations:
  - name: ins
    op: insertOne
    collection: c
    document: {t: "${api_token}", who: "${tenant}", l: "${label}"}
`

// TestParamsSecret marks parameters named like secrets and those declared
// secret: true, and lists their values and defaults for masking.
func TestParamsSecret(t *testing.T) {
	t.Parallel()

	s, errs := ParseWith("w.yaml", []byte(secretParamBase), []string{"api_token=tok-123", "tenant=acme"})
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}

	secret := map[string]bool{}
	for _, p := range s.Params {
		secret[p.Name] = p.Secret
	}

	if !secret["api_token"] || !secret["tenant"] || secret["label"] {
		t.Errorf("secret marks %v, want api_token and tenant only", secret)
	}

	got := strings.Join(s.SecretValues(), ",")
	if got != "tok-123,none,acme,nobody" {
		t.Errorf("SecretValues = %s, want the values and defaults of api_token and tenant", got)
	}
}

// TestParamsSecretErrors refuses a bad secret field and does not quote a
// secret parameter's value in --set errors.
func TestParamsSecretErrors(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name, yaml string
		set        []string
		want       string
	}{
		{"not in values", secretParamBase, []string{"tenant=Hidden-1"}, "--set tenant=xxxxx: the value (secret, not shown) is not one of the 2 allowed values"},
		{"undeclared secret-like", secretParamBase, []string{"db_password=Hidden-1"}, `--set db_password=xxxxx: w.yaml declares no parameter "db_password"`},
		{"secret not a bool", strings.Replace(secretParamBase, "secret: true", "secret: yes please", 1), nil, "params.tenant.secret: must be true or false"},
		{
			"secret-like unmarked", strings.Replace(secretParamBase, "api_token: none", "api_token: {default: none, secret: false}", 1), nil,
			`"api_token" is named like a secret`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			_, errs := ParseWith("w.yaml", []byte(tc.yaml), tc.set)
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Fatalf("errors %v, want one containing %q", errs, tc.want)
			}

			if strings.Contains(errs[0].Error(), "Hidden") {
				t.Errorf("the error quotes the secret value: %v", errs[0])
			}
		})
	}
}
