package resolve

import (
	"os"
	"testing"
	"time"
)

// Any text: Parse either refuses it or gives a mapping that resolves (or fails) within the
// budget, and whose JSON, read again, is the same JSON.
func FuzzResolve(f *testing.F) {
	for _, name := range []string{"testdata/scalars.yaml", "testdata/full-config.yaml", "../../definitions/substream-partition-router.yaml"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"a": {"$ref": "#/b", "k": [1.5, "#/b/x"]}, "b": {"x": 1e400, "$parameters": {"p": [{"q": 1}]}}}`))
	f.Add([]byte("a: &x {k: [*x]}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := Parse(src)
		if err != nil {
			return
		}
		if b, err := Encode(m, ""); err == nil {
			again, err := Parse(b)
			if err != nil {
				t.Fatalf("the JSON written does not read back: %v\n%s", err, b)
			}
			if b2, _ := Encode(again, ""); string(b2) != string(b) {
				t.Fatalf("written again differently:\n%s\n%s", b, b2)
			}
		}
		for _, mode := range []func(*Object){func(*Object) {}, func(o *Object) { o.Set(shouldMigrate, true); o.Set(shouldNormalize, true) }} {
			c := deepCopy(m).(*Object)
			mode(c)
			out, err := Manifest(c, Options{Now: func() time.Time { return frozen }, maxSteps: 20_000})
			if err == nil {
				Encode(out, "")
			}
		}
	})
}
