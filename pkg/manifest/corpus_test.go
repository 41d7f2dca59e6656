package manifest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"connector/internal/testcorpus"
	"connector/pkg/diag"
)

// update rewrites testdata/corpus.golden: go test ./pkg/manifest -run TestCorpus -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const corpusGolden = "testdata/corpus.golden"

// seedRules are the stated refusals: the rules some corpus definitions break on purpose, and
// Python code, which connector never runs.
var seedRules = map[string]bool{
	diag.CodeCredentialLiteral:   true,
	diag.CodeMixedAuthenticators: true,
	diag.CodeGrantType:           true,
	diag.CodePython:              true,
}

// cdkRefuses are the corpus definitions that CDK 7.28.2 refuses too, with its reason: their
// errors are true, not false errors, and each must stay refused.
var cdkRefuses = map[string]string{
	"workable": "a RequestOption with both field_name and field_path: RequestOption.__post_init__ raises ValueError",
}

// TestCorpus loads every real definition and compares its classification with
// testdata/corpus.golden: a definition that stops loading, or starts needing another
// component, fails the test. No definition may fail for a reason other than an unsupported
// component, a seed rule it breaks on purpose, or Python code.
func TestCorpus(t *testing.T) {
	var got strings.Builder
	got.WriteString("# The classification of every definition of ../shared/corpus/airbyte-manifests by manifest.Load:\n" +
		"# NAME  CLASS  [components: the unsupported component types]  [rules: the rules broken on purpose, python-component]\n" +
		"# Refresh with: go test ./pkg/manifest -run TestCorpus -update\n")
	for _, f := range testcorpus.Definitions(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		c := classify(f)
		if reason, ok := cdkRefuses[name]; ok {
			if len(c.falseErrors) == 0 {
				t.Errorf("%s is no longer refused, although the CDK refuses it (%s)", name, reason)
			}
			c.falseErrors, c.class = nil, "rejected"
		}
		for _, d := range c.falseErrors {
			t.Errorf("%s: %s [%s] %s", name, d, d.Code, d.Hint)
		}
		got.WriteString(c.line(name) + "\n")
	}
	if *update {
		if err := os.WriteFile(corpusGolden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(corpusGolden)
	if err != nil {
		t.Fatalf("missing golden file (run with -update): %v", err)
	}
	if diff := lineDiff(string(want), got.String()); diff != "" {
		t.Errorf("the corpus classification differs from %s (run with -update to accept):\n%s", corpusGolden, diff)
	}
}

// classification is what loading one definition says about it.
type classification struct {
	class       string   // valid, unsupported, rejected or false-error
	unsupported []string // the unsupported component types, sorted, each once
	rules       []string // the codes of the other errors, sorted, each once
	falseErrors diag.List
}

func classify(path string) classification {
	def, diags := Load(path)
	var c classification
	for _, d := range diags {
		if d.Severity != diag.Error {
			continue
		}
		if d.Code == diag.CodeUnsupported {
			c.unsupported = append(c.unsupported, d.Component)
			continue
		}
		c.rules = append(c.rules, d.Code)
		if !seedRules[d.Code] {
			c.falseErrors = append(c.falseErrors, d)
		}
	}
	slices.Sort(c.unsupported)
	c.unsupported = slices.Compact(c.unsupported)
	slices.Sort(c.rules)
	c.rules = slices.Compact(c.rules)
	switch {
	case len(c.falseErrors) > 0, len(c.rules) == 0 && len(c.unsupported) == 0 && def == nil:
		c.class = "false-error"
	case len(c.rules) > 0:
		c.class = "rejected"
	case len(c.unsupported) > 0:
		c.class = "unsupported"
	default:
		c.class = "valid"
	}
	return c
}

func (c classification) line(name string) string {
	s := fmt.Sprintf("%-24s %-12s", name, c.class)
	if len(c.unsupported) > 0 {
		s += " components: " + strings.Join(c.unsupported, " ")
	}
	if len(c.rules) > 0 {
		s += " rules: " + strings.Join(c.rules, " ")
	}
	return strings.TrimRight(s, " ")
}

// lineDiff lists the lines only in want (-) and only in got (+), keyed by their first word
// so that a changed definition shows as one pair.
func lineDiff(want, got string) string {
	key := func(l string) string { k, _, _ := strings.Cut(l, " "); return k }
	index := func(s string) (map[string]string, []string) {
		m := map[string]string{}
		var keys []string
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			if strings.HasPrefix(l, "#") || l == "" {
				continue
			}
			if _, dup := m[key(l)]; !dup {
				keys = append(keys, key(l))
			}
			m[key(l)] += l
		}
		return m, keys
	}
	w, wkeys := index(want)
	g, gkeys := index(got)
	keys := slices.Compact(slices.Sorted(slices.Values(append(wkeys, gkeys...))))
	var b strings.Builder
	for _, k := range keys {
		if w[k] == g[k] {
			continue
		}
		if l, ok := w[k]; ok {
			b.WriteString("- " + l + "\n")
		}
		if l, ok := g[k]; ok {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 && want != got {
		b.WriteString("(only the comment lines differ)\n")
	}
	return b.String()
}
