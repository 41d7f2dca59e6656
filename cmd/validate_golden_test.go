package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateGolden pins what `validate` prints for broken definitions, one or more per
// diagnostic code, and for a valid one: the text diagnostics on stderr and the JSON report on
// stdout. Refresh with: go test ./cmd -run TestValidateGolden -update (then read the diff).
func TestValidateGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string // in testdata/validate
		codes []string
	}{
		{"yaml_error.yaml", []string{"yaml"}},
		{"ref_missing.yaml", []string{"ref"}},
		{"ref_cycle.yaml", []string{"ref"}},
		{"unknown_field.yaml", []string{"unknown-field", "unknown-field"}}, // an error at the top level, a warning below
		{"unknown_top_level.yaml", []string{"missing-field", "unknown-field"}},
		{"missing_field.yaml", []string{"missing-field", "missing-field"}},
		{"type_error.yaml", []string{"type", "type"}},
		{"unsupported.yaml", []string{"unsupported-component"}},
		{"python_component.yaml", []string{"python-component", "python-component"}},
		{"template_error.yaml", []string{"template", "template"}},
		{"template_variable.yaml", []string{"template", "template"}},
		{"option_conflict.yaml", []string{"option-conflict"}},
		{"option_conflict_parameter.yaml", []string{"option-conflict"}},
		{"credential_literal.yaml", []string{"credential-literal"}},
		{"credential_literal_bearer.yaml", []string{"credential-literal"}},
		{"mixed_authenticators.yaml", []string{"mixed-authenticators"}},
		{"grant_type.yaml", []string{"grant-type"}},
		{"valid_basic.yaml", nil},
	}
	for _, tt := range tests {
		name := strings.TrimSuffix(tt.file, ".yaml")
		path := filepath.Join("testdata", "validate", tt.file)
		wantCode := 3
		if len(tt.codes) == 0 {
			wantCode = 0
		}
		t.Run(name+"/text", func(t *testing.T) {
			t.Parallel()
			res := runCLI(t, "", "validate", path)
			if res.Code != wantCode {
				t.Errorf("exit code %d, want %d", res.Code, wantCode)
			}
			if res.Stdout != "" {
				t.Errorf("text diagnostics must go to stderr; stdout:\n%s", res.Stdout)
			}
			golden(t, filepath.Join("validate", name+".stderr"), res.Stderr)
		})
		t.Run(name+"/json", func(t *testing.T) {
			t.Parallel()
			res := runCLI(t, "", "validate", "--format", "json", path)
			if res.Code != wantCode {
				t.Errorf("exit code %d, want %d", res.Code, wantCode)
			}
			if res.Stderr != "" {
				t.Errorf("stderr must be empty with --format json:\n%s", res.Stderr)
			}
			golden(t, filepath.Join("validate", name+".json"), res.Stdout)

			// Beyond the bytes: one object, naming the file, valid only without errors,
			// with the expected codes in order and a position for each.
			var report struct {
				File        string `json:"file"`
				Valid       bool   `json:"valid"`
				Diagnostics []struct {
					Severity, Code, Message string
					Line, Column            int
				} `json:"diagnostics"`
			}
			if strings.Count(res.Stdout, "\n") != 1 {
				t.Fatalf("want exactly one JSON line, got:\n%s", res.Stdout)
			}
			if err := json.Unmarshal([]byte(res.Stdout), &report); err != nil {
				t.Fatalf("stdout is not a JSON report: %v", err)
			}
			if report.File != path || report.Valid != (wantCode == 0) {
				t.Errorf("file %q valid %v, want %q %v", report.File, report.Valid, path, wantCode == 0)
			}
			var codes []string
			for _, d := range report.Diagnostics {
				codes = append(codes, d.Code)
				if (d.Severity != "error" && d.Severity != "warning") || d.Message == "" || d.Line < 1 || d.Column < 1 {
					t.Errorf("diagnostic without severity, message or position: %+v", d)
				}
			}
			if strings.Join(codes, ",") != strings.Join(tt.codes, ",") {
				t.Errorf("codes %q, want %q", codes, tt.codes)
			}
		})
	}
}

// TestValidateSeveralFiles checks that every file is reported, that the exit code is that of
// the worst, and that an unreadable file is a usage error.
func TestValidateSeveralFiles(t *testing.T) {
	t.Parallel()
	valid := filepath.Join("testdata", "validate", "valid_basic.yaml")
	broken := filepath.Join("testdata", "validate", "unknown_field.yaml")
	missing := filepath.Join("testdata", "validate", "no_such_file.yaml")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{
			name: "a valid and a broken definition",
			args: []string{valid, broken},
			code: 3,
			stderr: "testdata/validate/valid_basic.yaml: valid\n" +
				"testdata/validate/unknown_field.yaml:2:1: error: unknown field `descripton` in DeclarativeSource\n" +
				"  hint: did you mean `description`?\n" +
				"testdata/validate/unknown_field.yaml:18:11: warning: unknown field `page_sise` in OffsetIncrement; it is ignored\n" +
				"  hint: did you mean `page_size`?\n" +
				"testdata/validate/unknown_field.yaml: invalid, 1 error, 1 warning\n",
		},
		{
			name: "JSON: one line per file",
			args: []string{"--format", "json", valid, broken},
			code: 3,
			stdout: `{"file":"testdata/validate/valid_basic.yaml","valid":true,"diagnostics":[]}` + "\n" +
				`{"file":"testdata/validate/unknown_field.yaml","valid":false,"diagnostics":[{"severity":"error","code":"unknown-field","message":"unknown field ` +
				"`descripton`" + ` in DeclarativeSource","hint":"did you mean ` + "`description`" + `?","line":2,"column":1,"path":"descripton"},` +
				`{"severity":"warning","code":"unknown-field","message":"unknown field ` + "`page_sise`" + ` in OffsetIncrement; it is ignored","hint":"did you mean ` +
				"`page_size`" + `?","line":18,"column":11,"path":"streams[0].retriever.paginator.pagination_strategy.page_sise"}]}` + "\n",
		},
		{
			name: "a file that does not exist",
			args: []string{missing, valid},
			code: 2,
			stderr: "error: cannot read definition: testdata/validate/no_such_file.yaml: no such file or directory\n" +
				"testdata/validate/valid_basic.yaml: valid\n",
		},
		{
			name:   "no file at all",
			code:   2,
			stderr: "error: validate needs at least one definition file\nRun 'connector validate --help' for usage.\n",
		},
		{
			name:   "an unknown format",
			args:   []string{"--format", "yaml", valid},
			code:   2,
			stderr: "error: --format must be text or json, not \"yaml\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runCLI(t, "", append([]string{"validate"}, tt.args...)...)
			e2eCheckResult(t, nil, res, tt.code, tt.stdout, tt.stderr)
		})
	}
}

// TestPythonRefusedByEveryCommand checks that read, check and paginate-trace refuse a
// definition with Python code as validate does: exit 3, the same diagnostics.
func TestPythonRefusedByEveryCommand(t *testing.T) {
	t.Parallel()
	def := filepath.Join("testdata", "validate", "python_component.yaml")
	want := "testdata/validate/python_component.yaml:6:7: error: CustomRecordExtractor runs Python code (extractor)\n" +
		"  hint: class_name: source_example.components.Extractor — connector runs no Python: write the behaviour with declarative components, or run this definition with the Airbyte CDK\n" +
		"testdata/validate/python_component.yaml:28:9: error: CustomPartitionRouter runs Python code (partition_router)\n" +
		"  hint: class_name: source_example.components.Router — connector runs no Python: write the behaviour with declarative components, or run this definition with the Airbyte CDK\n"
	values := writeFile(t, "values.yaml", "api_key: x\n")
	for _, command := range []string{"validate", "read", "check", "paginate-trace"} {
		t.Run(command, func(t *testing.T) {
			args := []string{command, def}
			if command != "validate" {
				args = append(args, "--testing-values", values)
			}
			res := runCLI(t, "", args...)
			if res.Code != 3 || !strings.HasPrefix(res.Stderr, want) || res.Stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 3 and stderr starting with:\n%s", res.Code, res.Stdout, res.Stderr, want)
			}
		})
	}
}
