package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/diag"
)

// TestPythonComponents checks that every component that runs Python in the CDK is refused
// with the code python-component, at its position, with a hint naming the class,
// wherever it is written — also inside a value this tool does not read yet.
func TestPythonComponents(t *testing.T) {
	type want struct{ at, msg, hint, component string }
	tests := []struct {
		name, stream string
		want         []want
	}{
		{"a CustomTransformation",
			"    retriever: {requester: {url_base: http://x}, record_selector: {extractor: {field_path: []}}}\n" +
				"    transformations:\n      - type: CustomTransformation\n        class_name: source_x.components.Foo\n",
			[]want{{"6:9", "CustomTransformation runs Python code (transformations)", "class_name: source_x.components.Foo — " + pythonHint, "CustomTransformation"}}},
		{"a class_name without a type (the CDK makes it a CustomRequester)",
			"    retriever:\n      requester: {class_name: source_x.components.Req, url_base: http://x}\n      record_selector: {extractor: {field_path: []}}\n",
			[]want{{"5:18", "`requester` names a Python class", "class_name: source_x.components.Req — " + pythonHint, ""}}},
		{"a Custom type without a class_name",
			"    retriever:\n      requester: {url_base: http://x}\n      record_selector: {extractor: {type: CustomRecordExtractor}}\n",
			[]want{{"6:36", "CustomRecordExtractor runs Python code (extractor)", "CustomRecordExtractor without a class_name — " + pythonHint, "CustomRecordExtractor"}}},
		{"a CustomStateMigration, in a field that is not run",
			"    retriever: {requester: {url_base: http://x}, record_selector: {extractor: {field_path: []}}}\n" +
				"    state_migrations: [{type: CustomStateMigration, class_name: source_x.components.Mig}]\n",
			[]want{{"5:24", "CustomStateMigration runs Python code (state_migrations)", "class_name: source_x.components.Mig — " + pythonHint, "CustomStateMigration"}}},
		{"a CustomBackoffStrategy in an error handler",
			"    retriever:\n      requester:\n        url_base: http://x\n        error_handler: {backoff_strategies: [{type: CustomBackoffStrategy, class_name: source_x.components.B}]}\n" +
				"      record_selector: {extractor: {field_path: []}}\n",
			[]want{{"7:46", "CustomBackoffStrategy runs Python code (backoff_strategies)", "class_name: source_x.components.B — " + pythonHint, "CustomBackoffStrategy"}}},
		{"Python inside a file_uploader that lacks its requester: both are said",
			"    retriever: {requester: {url_base: http://x}, record_selector: {extractor: {field_path: []}}}\n" +
				"    file_uploader:\n      type: FileUploader\n      download_target_extractor: {type: CustomRecordExtractor, class_name: source_x.components.E}\n",
			[]want{
				{"6:7", "FileUploader is missing the required field `requester`", "", ""},
				{"7:34", "CustomRecordExtractor runs Python code (download_target_extractor)", "class_name: source_x.components.E — " + pythonHint, "CustomRecordExtractor"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "version: 1\nstreams:\n  - name: s\n" + tt.stream
			def, diags := Parse("d.yaml", []byte(src))
			if def != nil {
				t.Error("a definition with Python code was loaded")
			}
			var got []want
			for _, d := range diags {
				if d.Severity == diag.Error {
					got = append(got, want{posOf(d), d.Message, d.Hint, d.Component})
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("source:\n%s\ngot %q\nwant %q", src, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("diagnostic %d\n got %q\nwant %q", i, got[i], tt.want[i])
				}
			}
			for _, d := range diags {
				if d.Severity == diag.Error && strings.Contains(d.Message, "Python") && d.Code != diag.CodePython {
					t.Errorf("code %q for %q, want %q", d.Code, d.Message, diag.CodePython)
				}
			}
		})
	}
}

func posOf(d diag.Diagnostic) string {
	return strings.TrimPrefix(strings.SplitN(d.String(), ": ", 2)[0], d.File+":")
}

// `connector oauth` reads only the spec: Python elsewhere in the definition does not stop it.
func TestLoadSpecIgnoresPythonElsewhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.yaml")
	src := "version: 1\nspec: {connection_specification: {type: object}}\nstreams:\n  - name: s\n" +
		"    retriever: {requester: {url_base: http://x}, record_selector: {extractor: {type: CustomRecordExtractor, class_name: a.B}}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, diags := LoadSpec(path)
	if spec == nil || len(diags) != 0 {
		t.Errorf("spec %v, diagnostics %v", spec, diags)
	}
}
