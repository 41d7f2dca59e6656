package values

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/diag"
)

// zeros reads like /dev/zero: without end.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += len(p)
	return len(p), nil
}

func TestLoadLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	laughs := "l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 7; i++ {
		laughs += "l" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.TrimSuffix(strings.Repeat("*a"+string(rune('0'+i-1))+", ", 10), ", ") + "]\n"
	}
	for _, tt := range []struct {
		name, path string
		want       string
	}{
		{"a file larger than 16 MiB", write("big.yaml", "a: \""+strings.Repeat("x", maxFileSize)+"\"\n"),
			"big.yaml: error: the testing values are larger than 16 MiB (a limit of connector)"},
		{"too many entries", write("flow.yaml", "a: ["+strings.Repeat("1,", maxEntries)+"1]\n"),
			"flow.yaml:1:500002: error: the testing values have more than 250000 YAML entries (a limit of connector)"},
		{"an alias bomb", write("laughs.yaml", laughs),
			"laughs.yaml:6:30: error: the testing values expand to more than 600000 nodes through YAML aliases (a limit of connector)"},
		{"a recursive alias", write("rec.yaml", "a: &x {b: *x}\n"),
			"rec.yaml:1:11: error: the alias *x is inside the value its anchor names, so it never ends"},
		{"deep nesting", write("deep.yaml", "a: "+strings.Repeat("[", 200)+strings.Repeat("]", 200)+"\n"),
			"deep.yaml:1:103: error: the testing values nest more than 100 levels deep (a limit of connector)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path, nil)
			var dl diag.List
			if !errors.As(err, &dl) || len(dl) != 1 || strings.TrimPrefix(dl[0].String(), dir+string(filepath.Separator)) != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestLoadStdinStopsAtTheLimit(t *testing.T) {
	z := &zeros{}
	_, err := Load("-", z)
	var dl diag.List
	if !errors.As(err, &dl) || len(dl) != 1 || dl[0].String() != "<stdin>: error: the testing values are larger than 16 MiB (a limit of connector)" {
		t.Errorf("err = %v", err)
	}
	if z.n > maxFileSize+64<<10 {
		t.Errorf("read %d bytes of an endless stdin", z.n)
	}
}
