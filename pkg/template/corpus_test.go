package template

import (
	"os"
	"path/filepath"
	"slices"
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

// corpusNeverRendered are fields, as Type.field, whose templates the CDK never renders, with
// the reason. Their templates are not compiled here, and pkg/manifest does not compile them.
var corpusNeverRendered = map[string]string{
	"SimpleRetriever.name": "the CDK's SimpleRetriever model has no name field (pydantic drops it): " +
		"create_simple_retriever names the retriever after its stream",
	"SimpleRetriever.primary_key": "the CDK's SimpleRetriever model has no primary_key field (pydantic drops it): " +
		"create_simple_retriever takes the stream's primary_key",
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
		walkTemplates(&root, corpusVars, "", func(n *yaml.Node, vars []string, field string) {
			s := n.Value
			count++
			if _, never := corpusNeverRendered[field]; never {
				seen[field] = true
				return
			}
			_, err := Compile(s, vars)
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
	for field := range corpusNeverRendered {
		if !seen[field] {
			t.Errorf("no corpus template in %s, listed as never rendered", field)
		}
	}
	if count < 1000 {
		t.Errorf("only %d templates found in the corpus", count)
	}
}

// walkTemplates calls f for each string scalar holding a template, with the variables it is
// compiled with and the field it sits in (Type.field when its mapping has a type). The
// templates of a declarative OAuth flow (oauth_connector_input_specification) are compiled as
// pkg/oauthflow compiles them: they may also read the user inputs that
// oauth_user_input_from_connector_config_specification declares, and the input
// specification's own keys, as top-level variables.
func walkTemplates(n *yaml.Node, vars []string, field string, f func(n *yaml.Node, vars []string, field string)) {
	switch n.Kind {
	case yaml.ScalarNode:
		if (n.Tag == "!!str" || n.Tag == "") && (strings.Contains(n.Value, "{{") || strings.Contains(n.Value, "{%")) {
			f(n, vars, field)
		}
	case yaml.MappingNode:
		typ := ""
		if t := mappingValue(n, "type"); t != nil && t.Kind == yaml.ScalarNode {
			typ = t.Value
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			walkTemplates(key, vars, "", f)
			inner := ""
			if typ != "" {
				inner = typ + "." + key.Value
			}
			childVars := vars
			if key.Value == "oauth_connector_input_specification" && val.Kind == yaml.MappingNode {
				childVars = append(slices.Clip(vars), oauthUserInputs(n)...)
				for j := 0; j < len(val.Content); j += 2 {
					childVars = append(childVars, val.Content[j].Value)
				}
			}
			walkTemplates(val, childVars, inner, f)
		}
	default:
		for _, c := range n.Content {
			walkTemplates(c, vars, field, f)
		}
	}
}

// oauthUserInputs are the names oauth_user_input_from_connector_config_specification declares
// in an oauth_config_specification.
func oauthUserInputs(cfg *yaml.Node) []string {
	var names []string
	if props := mappingValue(mappingValue(cfg, "oauth_user_input_from_connector_config_specification"), "properties"); props != nil {
		for i := 0; i+1 < len(props.Content); i += 2 {
			names = append(names, props.Content[i].Value)
		}
	}
	return names
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
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
