package resolve

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connector/internal/testcorpus"
)

// The resolved manifests of real definitions, compared byte for byte with what CDK 7.28.2
// made of the same files (testdata/cdk; testdata/README.md says how): the JSON text of
// json.dumps, its key order included. Each mode is a folder: plain, or the Builder's
// __should_migrate, __should_normalize, or both.

func TestDefinitionsResolvedAsTheCDK(t *testing.T) {
	compareGoldens(t, "testdata/cdk/definitions", func(t *testing.T, name string) string {
		return filepath.Join("..", "..", "definitions", name+".yaml")
	})
}

func TestCorpusResolvedAsTheCDK(t *testing.T) {
	compareGoldens(t, "testdata/cdk/corpus", func(t *testing.T, name string) string {
		return testcorpus.File(t, name+".yaml")
	})
}

func compareGoldens(t *testing.T, dir string, source func(t *testing.T, name string) string) {
	modes, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mode := range modes {
		files, err := filepath.Glob(filepath.Join(dir, mode.Name(), "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, golden := range files {
			name := strings.TrimSuffix(filepath.Base(golden), ".json")
			t.Run(mode.Name()+"/"+name, func(t *testing.T) {
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				src, err := os.ReadFile(source(t, name))
				if err != nil {
					t.Fatal(err)
				}
				got := resolveFile(t, src, mode.Name())
				if !bytes.Equal(got, want) {
					t.Errorf("differs from the CDK's at byte %d:\n…%s…\nwant\n…%s…", firstDifference(got, want), around(got, want), around(want, got))
				}
			})
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no golden file in %s", dir)
	}
}

// resolveFile resolves a manifest file as the manifest server would with the Builder's keys
// of mode set, the migration records dated as in the goldens.
func resolveFile(t *testing.T, src []byte, mode string) []byte {
	t.Helper()
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "migrate" || mode == "both" {
		m.Set(shouldMigrate, true)
	}
	if mode == "normalize" || mode == "both" {
		m.Set(shouldNormalize, true)
	}
	out, err := Manifest(m, Options{Now: func() time.Time { return frozen }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(out, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// around is the text of a near its first difference with b.
func around(a, b []byte) string {
	i := firstDifference(a, b)
	return string(a[max(0, i-120):min(len(a), i+120)])
}
