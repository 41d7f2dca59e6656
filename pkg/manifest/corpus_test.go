package manifest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"connector/pkg/diag"
)

const corpusDir = "../../../shared/corpus/airbyte-manifests"

var seedRules = map[string]bool{
	diag.CodeCredentialLiteral:   true,
	diag.CodeMixedAuthenticators: true,
	diag.CodeGrantType:           true,
}

// TestCorpus loads every real definition: none may fail for a reason other than an
// unsupported component or a seed rule it breaks on purpose.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if len(files) == 0 {
		t.Skip("corpus not found at " + corpusDir)
	}
	classes := map[string][]string{}
	unsupported := map[string]int{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		def, diags := Load(f)
		class := "valid"
		codes := map[string]bool{}
		for _, d := range diags {
			if d.Severity != diag.Error {
				continue
			}
			codes[d.Code] = true
			if d.Code == diag.CodeUnsupported {
				unsupported[d.Component]++
			}
		}
		switch {
		case len(codes) == 0:
			if def == nil {
				t.Errorf("%s: no error but no definition", name)
			}
		case len(codes) == 1 && codes[diag.CodeUnsupported]:
			class = "unsupported"
		default:
			class = "rejected"
			for c := range codes {
				if c != diag.CodeUnsupported && !seedRules[c] {
					class = "false-error"
				}
			}
		}
		classes[class] = append(classes[class], name)
		for _, d := range diags {
			if d.Severity != diag.Error {
				continue
			}
			if class == "false-error" && d.Code != diag.CodeUnsupported && !seedRules[d.Code] {
				t.Errorf("%s: %s [%s] %s", name, d, d.Code, d.Hint)
			}
			if class == "rejected" && seedRules[d.Code] {
				t.Logf("%s: rejected: %s [%s]", name, d, d.Code)
			}
		}
	}
	for _, c := range []string{"valid", "unsupported", "rejected", "false-error"} {
		t.Logf("%-12s %2d  %s", c, len(classes[c]), strings.Join(classes[c], " "))
	}
	var comps []string
	for k, v := range unsupported {
		comps = append(comps, k+"="+itoa(v))
	}
	sort.Strings(comps)
	t.Logf("unsupported components: %s", strings.Join(comps, " "))
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
