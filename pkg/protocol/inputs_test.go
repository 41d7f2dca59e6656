package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/session"
)

// runFiles runs command with the files given by name (config.json, def.yaml, catalog.json,
// state.json: the ones present are passed) and returns the output and the error.
func runFiles(t *testing.T, command string, files map[string]string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	req := Request{Command: command}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		switch name {
		case "config.json":
			req.Config = path
		case "def.yaml":
			req.ManifestPath = path
		case "catalog.json":
			req.Catalog = path
		case "state.json":
			req.State = path
		}
	}
	var out bytes.Buffer
	err := Run(context.Background(), req, Env{Redactor: &redact.Redactor{}, Now: func() time.Time { return time.Unix(1700000000, 0) }}, &out)
	return out.String(), err
}

// message is the one message of out of type typ, decoded.
func message(t *testing.T, out, typ string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if m["type"] == typ {
			return m
		}
	}
	t.Fatalf("no %s message in %s", typ, out)
	return nil
}

// traceError is the message of out's TRACE ERROR.
func traceError(t *testing.T, out string) string {
	t.Helper()
	return message(t, out, "TRACE")["trace"].(map[string]any)["error"].(map[string]any)["message"].(string)
}

func TestSpecOfTheDefinition(t *testing.T) {
	out, err := runFiles(t, "spec", map[string]string{"def.yaml": def})
	if err != nil {
		t.Fatal(err)
	}
	spec := message(t, out, "SPEC")["spec"].(map[string]any)["connectionSpecification"].(map[string]any)
	if got := strings.Join(toStrings(spec["required"].([]any)), ","); got != "base_url,api_key" {
		t.Errorf("required %q, want base_url,api_key (%s)", got, out)
	}
	// A definition that does not load: the spec fails with the first error.
	out, err = runFiles(t, "spec", map[string]string{"def.yaml": "version: 6.5.0\ntype: DeclarativeSource\nstreams: 3\n"})
	if !errors.Is(err, ErrFailed) || !strings.HasPrefix(traceError(t, out), "Invalid definition: ") {
		t.Errorf("%v: %s", err, out)
	}
}

func toStrings(vs []any) []string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i], _ = v.(string)
	}
	return s
}

func TestInputErrors(t *testing.T) {
	const starting = "Error starting the sync. This could be due to an invalid configuration or catalog. Error: "
	for _, tt := range []struct {
		name    string
		command string
		files   map[string]string
		want    string
	}{
		{"a config that is not an object", "check", map[string]string{"config.json": "[1]"},
			starting + "could not read json file CONFIG: it is not a JSON object"},
		{"an injected definition that is not an object", "discover", map[string]string{"config.json": `{"__injected_declarative_manifest": "streams: []"}`},
			starting + "invalid config: `__injected_declarative_manifest` should be a dictionary"},
		{"a config over the limit", "check", map[string]string{"config.json": "{}" + strings.Repeat(" ", MaxConfigSize)},
			starting + "the config CONFIG is "},
		{"a catalog that is missing", "read", map[string]string{"config.json": `{"base_url":"http://127.0.0.1:1","api_key":"k"}`, "def.yaml": def},
			starting + "cannot read the catalog: "},
		{"a state that is not a state", "read", map[string]string{"config.json": `{"base_url":"http://127.0.0.1:1","api_key":"k"}`, "def.yaml": def,
			"catalog.json": `{"streams":[]}`, "state.json": `"state"`}, starting},
		{"a config that misses a required value", "discover", map[string]string{"config.json": `{"base_url":"http://127.0.0.1:1"}`, "def.yaml": def},
			"Config validation error: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runFiles(t, tt.command, tt.files)
			if !errors.Is(err, ErrFailed) {
				t.Fatalf("error %v, want ErrFailed; %s", err, out)
			}
			got := traceError(t, out)
			want := strings.ReplaceAll(tt.want, "CONFIG", "")
			if i := strings.Index(tt.want, "CONFIG"); i >= 0 {
				// The config's path is a temporary file's: compare around it.
				if !strings.HasPrefix(got, tt.want[:i]) || !strings.Contains(got, filepath.Base("config.json")+tt.want[i+len("CONFIG"):]) {
					t.Errorf("message %q, want %q", got, tt.want)
				}
				return
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("message %q, want it to begin %q", got, want)
			}
		})
	}
	// A check with a config that does not validate answers a failed status, not an error.
	out, err := runFiles(t, "check", map[string]string{"config.json": `{"base_url":"http://127.0.0.1:1"}`, "def.yaml": def})
	if err != nil {
		t.Fatal(err)
	}
	status := message(t, out, "CONNECTION_STATUS")["connectionStatus"].(map[string]any)
	if status["status"] != "FAILED" || !strings.HasPrefix(status["message"].(string), "Config validation error: ") {
		t.Errorf("status %v", status)
	}
	// A manifest path that does not exist.
	out, err = runFiles(t, "check", map[string]string{"config.json": `{}`})
	if !errors.Is(err, ErrFailed) || !strings.Contains(out, "should be provided at the root of the config") {
		t.Errorf("%v: %s", err, out)
	}
}

func TestCheckNamesAStreamThatIsNotThere(t *testing.T) {
	// orders is left out by a condition the config does not meet: the definition is valid,
	// the check names a stream the source does not have.
	bad := strings.Replace(strings.Replace(def, "stream_names: [items]", "stream_names: [orders]", 1), "\nspec:\n", `
  - type: ConditionalStreams
    condition: "{{ config.get('orders', false) }}"
    streams:
      - type: DeclarativeStream
        name: orders
        retriever:
          type: SimpleRetriever
          requester:
            type: HttpRequester
            url_base: "http://127.0.0.1:1"
            path: /orders
            authenticator: {type: ApiKeyAuthenticator, header: X-Key, api_token: "{{ config['api_key'] }}"}
          record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
spec:
`, 1)
	out, err := runFiles(t, "check", map[string]string{"config.json": `{"base_url":"http://127.0.0.1:1","api_key":"k"}`, "def.yaml": bad})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("error %v, want ErrFailed: %s", err, out)
	}
	tr := message(t, out, "TRACE")["trace"].(map[string]any)["error"].(map[string]any)
	if tr["internal_message"] != "orders is not part of the catalog. Expected one of ['items']." || tr["failure_type"] != "system_error" {
		t.Errorf("trace %v", tr)
	}
	if strings.Contains(out, "CONNECTION_STATUS") {
		t.Errorf("a status after an uncaught failure: %s", out)
	}
}

func TestAsGivenKeepsTheConfigsOrder(t *testing.T) {
	given, err := record.Decode([]byte(`{"z":1,"__injected_declarative_manifest":{"a":1},"nested":{"y":1,"x":2},"a":3}`))
	if err != nil {
		t.Fatal(err)
	}
	got := asGiven(given, map[string]any{"a": 4, "z": 1, "nested": map[string]any{"x": 2, "y": 5, "new": true}, "b": "new"})
	b, err := record.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"__injected_declarative_manifest":{"a":1},"nested":{"y":5,"x":2,"new":true},"a":4,"b":"new"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if v := asGiven([]any{1}, map[string]any{"a": 1}); v.(map[string]any)["a"] != 1 {
		t.Errorf("a config given as a list: %v", v)
	}
}

const incrementalDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "http://127.0.0.1:1", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: "{{ config['cursor'] }}"
      allow_catalog_defined_cursor_field: true
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
`

func loadDef(t *testing.T, src string) *manifest.Definition {
	t.Helper()
	d, err := session.Load(context.Background(), "def.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCursorOfAndTheCatalogsCursor(t *testing.T) {
	d := loadDef(t, incrementalDef)
	st := d.Stream("items")
	if field, allow := CursorOf(st, map[string]any{"cursor": "updated"}); field != "updated" || !allow {
		t.Errorf("CursorOf = %q, %v; want updated, true", field, allow)
	}
	plain := loadDef(t, def).Stream("items")
	if field, allow := CursorOf(plain, nil); field != "" || allow {
		t.Errorf("CursorOf without incremental_sync = %q, %v", field, allow)
	}
	catalog := func(fields ...string) ConfiguredStream {
		var cs ConfiguredStream
		cs.Stream.Name, cs.CursorField = "items", fields
		return cs
	}
	got, err := withCatalogCursor(st, catalog("modified"))
	if err != nil || got == st || got.Incremental.CursorField.Source() != "modified" || st.Incremental.CursorField.Source() != "{{ config['cursor'] }}" {
		t.Errorf("a catalog's cursor: %v, %v", got.Incremental.CursorField.Source(), err)
	}
	for _, none := range []ConfiguredStream{catalog(), catalog("")} {
		if got, err := withCatalogCursor(st, none); got != st || err != nil {
			t.Errorf("no catalog cursor %q: %v, %v", none.CursorField, got, err)
		}
	}
	if _, err := withCatalogCursor(st, catalog("a", "b")); err == nil || !strings.Contains(err.Error(), "does not support nested cursor_field") {
		t.Errorf("a nested cursor: %v", err)
	}
	if _, err := withCatalogCursor(st, catalog("{{ config['x'] }}")); err == nil || !strings.Contains(err.Error(), "is not a plain field name") {
		t.Errorf("a template as the cursor: %v", err)
	}
}

func TestOpenConfig(t *testing.T) {
	d := loadDef(t, def)
	dir := t.TempDir()
	defPath := filepath.Join(dir, "def.yaml")
	if err := os.WriteFile(defPath, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"base_url":"http://127.0.0.1:1","api_key":"key-secret-9"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenConfig(d, defPath, path, Env{Redactor: &redact.Redactor{}, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Redactor().String("the key key-secret-9"); strings.Contains(got, "key-secret-9") {
		t.Errorf("the config's secret is not redacted: %q", got)
	}
	_, err = OpenConfig(d, defPath, filepath.Join(dir, "missing.json"), Env{Redactor: &redact.Redactor{}, Now: time.Now})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "cannot read the config: ") || !strings.Contains(err.Error(), "missing.json: ") {
		t.Errorf("a missing config: %v", err)
	}
	if errors.Unwrap(err) == nil {
		t.Errorf("InputError unwraps to nothing")
	}
	if _, err := Open(d, "def.yaml", "config.json", []byte(`{"base_url":"http://127.0.0.1:1"}`), Env{Redactor: &redact.Redactor{}, Now: time.Now}); err == nil ||
		!strings.Contains(Reason(err), "api_key") {
		t.Errorf("a config without the key: %v", err)
	}
}

func TestReason(t *testing.T) {
	_, err := session.Load(context.Background(), "def.yaml", []byte("streams: [}"))
	if err == nil || Reason(err) == err.Error() && !strings.Contains(Reason(err), "def.yaml") {
		t.Errorf("a definition error: %v", err)
	}
	if got := Reason(errors.New("plain")); got != "plain" {
		t.Errorf("Reason(plain) = %q", got)
	}
}
