package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"connector/pkg/redact"
)

const def = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator: {type: ApiKeyAuthenticator, header: X-Key, api_token: "{{ config['api_key'] }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, api_key]
    properties:
      base_url: {type: string}
      api_key: {type: string, airbyte_secret: true}
`

// runCommand runs a protocol command against a local API that answers /items to the key
// "key-secret-9", with files written from the texts given, and returns the messages' types
// and the requests the API received.
func runCommand(t *testing.T, command string, injected bool, extra map[string]string) ([]map[string]any, []string, error) {
	t.Helper()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Key"))
		if r.Header.Get("X-Key") != "key-secret-9" {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	key := "key-secret-9"
	if k, ok := extra["key"]; ok {
		key = k
	}
	config := map[string]any{"base_url": srv.URL, "api_key": key}
	req := Request{Command: command}
	if injected {
		config[InjectedKey] = map[string]any{"placeholder": true}
	} else {
		req.ManifestPath = write("def.yaml", def)
	}
	b, _ := json.Marshal(config)
	text := string(b)
	if injected {
		// The definition as the platform injects it: JSON under the key.
		defJSON := yamlToJSON(t, def)
		text = strings.Replace(text, `{"placeholder":true}`, defJSON, 1)
	}
	req.Config = write("config.json", text)
	if c, ok := extra["catalog"]; ok {
		req.Catalog = write("catalog.json", c)
	}
	var out bytes.Buffer
	err := Run(context.Background(), req, Env{
		Redactor: &redact.Redactor{}, Now: func() time.Time { return time.Unix(1700000000, 0) }, UserAgent: "test",
	}, &out)
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.Contains(line, "key-secret-9") {
			t.Errorf("the secret reached the output: %s", line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		msgs = append(msgs, m)
	}
	return msgs, got, err
}

// yamlToJSON is the test definition as the JSON the platform injects.
func yamlToJSON(t *testing.T, text string) string {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func types(msgs []map[string]any) string {
	var ts []string
	for _, m := range msgs {
		ts = append(ts, m["type"].(string))
	}
	return strings.Join(ts, " ")
}

func TestCheck(t *testing.T) {
	msgs, got, err := runCommand(t, "check", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]["connectionStatus"].(map[string]any)
	if types(msgs) != "LOG CONNECTION_STATUS" || last["status"] != "SUCCEEDED" {
		t.Errorf("messages %v", msgs)
	}
	if strings.Join(got, "\n") != "GET /items key-secret-9" {
		t.Errorf("requests %q", got)
	}
	msgs, _, err = runCommand(t, "check", true, map[string]string{"key": "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	last = msgs[len(msgs)-1]["connectionStatus"].(map[string]any)
	if types(msgs) != "LOG LOG CONNECTION_STATUS" || last["status"] != "FAILED" ||
		!strings.HasPrefix(last["message"].(string), "'Stream items is not available: authentication failed: 401 Unauthorized from GET ") {
		t.Errorf("messages %v", msgs)
	}
}

func TestDiscover(t *testing.T) {
	msgs, got, err := runCommand(t, "discover", true, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("%v, requests %q", err, got)
	}
	cat := msgs[0]["catalog"].(map[string]any)["streams"].([]any)
	st := cat[0].(map[string]any)
	if len(cat) != 1 || st["name"] != "items" || fmt.Sprint(st["source_defined_primary_key"]) != "[[id]]" {
		t.Errorf("catalog %v", cat)
	}
}

func TestRead(t *testing.T) {
	catalog := `{"streams":[{"stream":{"name":"items"},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"},
	  {"stream":{"name":"nowhere"},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`
	msgs, got, err := runCommand(t, "read", false, map[string]string{"catalog": catalog})
	if err != nil {
		t.Fatal(err)
	}
	var records []string
	for _, m := range msgs {
		if m["type"] == "RECORD" {
			b, _ := json.Marshal(m["record"].(map[string]any)["data"])
			records = append(records, string(b))
		}
	}
	if strings.Join(records, " ") != `{"id":1,"name":"a"} {"id":2,"name":"b"}` || len(got) != 1 {
		t.Errorf("records %q, requests %q", records, got)
	}
	// A failing key: the stream fails, the read ends with a TRACE ERROR, exit 1.
	msgs, _, err = runCommand(t, "read", false, map[string]string{"catalog": catalog, "key": "wrong"})
	if !errors.Is(err, ErrFailed) {
		t.Errorf("error %v, want ErrFailed", err)
	}
	last := msgs[len(msgs)-1]
	if last["type"] != "TRACE" || last["trace"].(map[string]any)["error"].(map[string]any)["internal_message"] != "Concurrent read failure" {
		t.Errorf("last message %v", last)
	}
	// A catalog that is not JSON fails before any request.
	msgs, got, err = runCommand(t, "read", false, map[string]string{"catalog": "{"})
	if !errors.Is(err, ErrFailed) || len(got) != 0 || types(msgs) != "LOG TRACE" {
		t.Errorf("%v, requests %q, messages %v", err, got, msgs)
	}
}

func TestNoDefinition(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	os.WriteFile(path, []byte(`{"b":1,"a":2}`), 0o600)
	err := Run(context.Background(), Request{Command: "check", Config: path}, Env{Redactor: &redact.Redactor{}, Now: time.Now}, &out)
	if !errors.Is(err, ErrFailed) || !strings.Contains(out.String(), "should be provided at the root of the config or using the --manifest-path argument; config only has keys: [a, b]") {
		t.Errorf("%v: %s", err, out.String())
	}
	out.Reset()
	if err := Run(context.Background(), Request{Command: "spec"}, Env{Redactor: &redact.Redactor{}, Now: time.Now}, &out); err != nil || !strings.Contains(out.String(), `"type":"SPEC"`) {
		t.Errorf("%v: %s", err, out.String())
	}
}
