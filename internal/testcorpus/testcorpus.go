// Package testcorpus finds the shared corpus of real Airbyte definitions for tests.
//
// The corpus is not part of this repository: it sits in ../shared next to the checkout of
// the module. In CI (the environment variable CI is set) a missing corpus fails the test,
// because a test that silently stops reading it proves nothing; a developer without the
// folder gets a skip that says where the folder was looked for.
package testcorpus

import (
	"connector/internal/racetest"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the folder of the real definitions, ../shared/corpus/airbyte-manifests
// relative to the module's root.
func Dir(tb testing.TB) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatalf("testcorpus: %v", err)
	}
	dir := filepath.Join(root, "..", "shared", "corpus", "airbyte-manifests")
	if _, err := os.Stat(dir); err != nil {
		missing(tb, err)
	}
	return dir
}

// File returns the path of one definition of the corpus, such as "ticktick.yaml".
func File(tb testing.TB, name string) string {
	tb.Helper()
	path := filepath.Join(Dir(tb), name)
	if _, err := os.Stat(path); err != nil {
		missing(tb, err)
	}
	return path
}

// Definitions returns the paths of every definition (*.yaml) of the corpus, sorted.
//
// Under the race detector the test is skipped: walking the corpus loads hundreds of
// definitions one after the other, which the detector slows ten times and has nothing to
// check in; `make test` runs every corpus test (their names hold "Corpus") once more
// without it, and that run reads the whole corpus.
func Definitions(tb testing.TB) []string {
	tb.Helper()
	racetest.Sequential(tb)
	dir := Dir(tb)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		tb.Fatalf("testcorpus: %v", err)
	}
	if len(files) == 0 {
		missing(tb, fmt.Errorf("no definition matches %s", filepath.Join(dir, "*.yaml")))
	}
	return files
}

func missing(tb testing.TB, err error) {
	tb.Helper()
	if ci := os.Getenv("CI"); ci != "" {
		tb.Fatalf("the shared corpus is missing (%v); CI=%s, so it is required: put it at ../shared next to this repository", err, ci)
		return
	}
	tb.Skipf("skipped: the shared corpus is missing (%v); put it at ../shared next to this repository to run this test (with CI set, this is a failure)", err)
}

// moduleRoot is the nearest folder above the working directory (go test runs in the
// package's folder) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
