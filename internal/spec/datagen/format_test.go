package datagen

import "testing"

func TestFormat(t *testing.T) {
	t.Parallel()

	e := newEnv(t, 1, "")
	tpl := compileYAML(t, e, "{^format: {pattern: 'err-%06d/%s/100%%', args: [{^seq: {start: 41, step: 1}}, x]}}")
	s := e.NewScope(0)

	for _, want := range []string{"err-000041/x/100%", "err-000042/x/100%"} {
		if got := tpl.Value(s); got != want {
			t.Errorf("got %v, want %q", got, want)
		}
	}
}
