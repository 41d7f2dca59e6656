package template

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"connector/internal/testcorpus"
)

// corpusVars are all the variable names the definition format knows,
// including the declarative OAuth flow's.
var corpusVars = []string{
	"config", "parameters", "next_page_token", "response", "headers", "last_records", "last_record",
	"last_page_size", "record", "session_token", "stream_slice", "stream_partition", "stream_interval",
	"stream_state", "creation_response", "polling_response", "download_target", "components_values",
	"raw_schema", "property", "extra_fields",
	"client_id_key", "client_id_value", "client_id_param", "client_secret_key", "client_secret_value",
	"client_secret_param", "redirect_uri_key", "redirect_uri_value", "redirect_uri_param", "scope_key",
	"scope_value", "scope_param", "state_key", "state_value", "state_param", "auth_code_key",
	"auth_code_value", "auth_code_param", "state",
}

// corpusRefused are corpus templates deliberately refused, with the reason.
var corpusRefused = map[string]string{
	"{{ config.authorization.client_secret) }}": "syntax error in the definition itself (unbalanced parenthesis); Jinja2 refuses it too",
}

func TestCorpusTemplatesCompile(t *testing.T) {
	files := testcorpus.Definitions(t)
	seen := map[string]bool{}
	count := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walkScalars(&root, func(n *yaml.Node) {
			s := n.Value
			if !strings.Contains(s, "{{") && !strings.Contains(s, "{%") {
				return
			}
			count++
			_, err := Compile(s, corpusVars)
			if reason, refused := corpusRefused[s]; refused {
				if err == nil {
					t.Errorf("%s:%d: %q compiles but is listed as refused (%s)", filepath.Base(f), n.Line, s, reason)
				}
				seen[s] = true
				return
			}
			if err != nil {
				t.Errorf("%s:%d: %q: %v", filepath.Base(f), n.Line, s, err)
			}
		})
	}
	for s := range corpusRefused {
		if !seen[s] {
			t.Errorf("refused template %q no longer appears in the corpus", s)
		}
	}
	if count < 1000 {
		t.Errorf("only %d templates found in the corpus", count)
	}
}

func walkScalars(n *yaml.Node, f func(*yaml.Node)) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "") {
		f(n)
	}
	for _, c := range n.Content {
		walkScalars(c, f)
	}
}

// TestCorpusTemplatesEvaluate runs every corpus template against sparse
// values: evaluation may fail (missing values) but must fail with an *Error.
func TestCorpusTemplatesEvaluate(t *testing.T) {
	files := testcorpus.Definitions(t)
	vars := map[string]any{
		"config":          map[string]any{"start_date": "2024-01-02T00:00:00Z", "credentials": map[string]any{}, "spreadsheet_id": "https://docs.google.com/spreadsheets/d/1234567890abcdefghijklmnop/edit"},
		"parameters":      map[string]any{"cursor_field": "updated"},
		"next_page_token": nil,
		"response":        map[string]any{"sheets": []any{}},
		"headers":         map[string]any{},
		"last_records":    []any{},
		"record":          map[string]any{"timestamp": "2024-01-02T03:04:05+0200", "stats": []any{}},
		"stream_slice":    map[string]any{"extra_fields": map[string]any{"timezone": "Europe/Paris"}},
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var root yaml.Node
		_ = yaml.Unmarshal(data, &root)
		walkScalars(&root, func(n *yaml.Node) {
			if !strings.Contains(n.Value, "{{") && !strings.Contains(n.Value, "{%") {
				return
			}
			tp, err := Compile(n.Value, corpusVars)
			if err != nil {
				return
			}
			_, err = tp.Eval(vars)
			if err == nil {
				return
			}
			e, ok := err.(*Error)
			if !ok || strings.Contains(e.Msg, "internal error") {
				t.Errorf("%s:%d: %q: %v", filepath.Base(f), n.Line, n.Value, err)
			}
		})
	}
}
