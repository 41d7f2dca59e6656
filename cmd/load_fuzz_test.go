package cmd

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/values"
)

// loadBudget is what loading one definition and one testing values file may allocate in
// all; the inputs a fuzzer makes are a few kilobytes, so more is a bomb that got through.
const loadBudget = 256 << 20

// FuzzLoad loads arbitrary bytes as a definition and as testing values through the real
// loaders, then checks the values against the definition's specification as `check` and
// `read` do. None of it may panic, and it may not allocate more than loadBudget.
//
// Not parallel: TotalAlloc counts the allocations of the whole process, so the budget
// measures one load only while nothing else runs (go test runs fuzz targets after the tests).
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"api.yaml", "spec_required.yaml", "cyclic_ref.yaml", "credential_literal.yaml"} {
		def, err := os.ReadFile("testdata/badinput/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(def, []byte("base_url: http://127.0.0.1:1\napi_key: abc\n"))
	}
	f.Add([]byte(limitDef("", laughs("          ")[:200])), []byte(laughs("")[:120]))
	f.Add([]byte(limitDef(refFanout()[:400], "          x: \"#/definitions/a5\"")), []byte("a: &x {b: *x}\n"))
	f.Add([]byte(limitDef("", doubling("s ~ s"))), []byte("a: [1, [2, [3]]]\n"))
	f.Add([]byte("spec: {type: Spec, connection_specification: &s {properties: {a: *s}}}\nstreams: []\n"), []byte("a: {a: {a: 1}}\n"))
	f.Add([]byte(strings.Repeat("[", 100)), []byte(strings.Repeat("{a: ", 50)))
	f.Fuzz(func(t *testing.T, def, vals []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d, diags := manifest.Parse("fuzz.yaml", def)
		for _, x := range diags {
			if strings.Contains(x.Message, "internal error") {
				t.Fatalf("%s", x)
			}
		}
		v, err := values.Parse("values.yaml", vals)
		if err == nil && d != nil {
			_ = v.Validate(d.ConnectionSpec)
			_ = v.Secrets(d.ConnectionSpec)
			_ = manifest.CheckGrantType(d, v.Map)
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > loadBudget {
			t.Fatalf("loading %d + %d bytes allocated %d MB", len(def), len(vals), n>>20)
		}
	})
}
