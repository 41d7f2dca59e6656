package testcorpus

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that writes down how missing ended the test instead of ending it.
type recorder struct {
	testing.TB
	ended string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.ended = "fatal" }
func (r *recorder) Skipf(format string, a ...any)  { r.ended = "skip" }
func (r *recorder) Fatal(a ...any)                 { r.ended = "fatal" }
func (r *recorder) Skip(a ...any)                  { r.ended = "skip" }

func TestMissingFailsInCIAndSkipsElsewhere(t *testing.T) {
	for _, tc := range []struct {
		ci   string
		want string
	}{
		{"1", "fatal"},
		{"true", "fatal"},
		{"", "skip"},
	} {
		t.Setenv("CI", tc.ci)
		r := &recorder{TB: t}
		missing(r, errors.New("gone"))
		if r.ended != tc.want {
			t.Errorf("CI=%q: missing ended the test with %q, want %q", tc.ci, r.ended, tc.want)
		}
	}
}

func TestModuleRootHoldsThisModule(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	here, _ := os.Getwd()
	if want := filepath.Dir(filepath.Dir(here)); root != want {
		t.Errorf("module root %s, want %s", root, want)
	}
}
