package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// yamlBlock finds fenced YAML examples in Markdown.
var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocsExamples keeps the documentation honest: every YAML example in
// README.md and docs/ must be a valid workload, templates included.
func TestDocsExamples(t *testing.T) {
	t.Parallel()

	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}

	files = append(files, filepath.Join("..", "..", "README.md"))

	n := 0

	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}

		for i, m := range yamlBlock.FindAllSubmatch(data, -1) {
			n++
			path := filepath.Join(t.TempDir(), filepath.Base(file)+"-"+string(rune('a'+i))+".yaml")

			if err := os.WriteFile(path, m[1], 0o600); err != nil {
				t.Fatal(err)
			}

			if _, errs := readWorkload(context.Background(), path, nil); len(errs) > 0 {
				t.Errorf("%s, example %d: %v", file, i+1, errs)
			}
		}
	}

	if n < 4 {
		t.Fatalf("found only %d YAML examples; did the docs move?", n)
	}
}
