package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"connector/pkg/demoapi"
	"connector/pkg/jsondiff"
)

// `connector serve`'s /v1/manifest/test_read answers the StreamRead that `paginate-trace
// --format builder` prints, for every case of the CDK comparison
// (pkg/builder/testdata/cdk/cases.txt: a definition, a stream and the limits), each side
// against a demo API of its own, fresh as the CDK's was. The only differences allowed are
// those of two runs: the API's URL (its port), the server's Date headers and the expiry of
// the tokens it issues.
func TestServeTestReadIsPaginateTraceBuilder(t *testing.T) {
	cases := builderCDKCases(t)
	server := startServe(t)
	values, err := os.ReadFile(filepath.Join("..", "testing-values.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defPath := filepath.Join("..", c.def)
			// paginate-trace, with the testing values pointed at its API.
			api := httptest.NewServer(demoapi.New(demoapi.Options{}))
			defer api.Close()
			vals := writeFile(t, "values.yaml", baseURLLine.ReplaceAllString(string(values), "base_url: "+api.URL))
			res := runCLI(t, "", "paginate-trace", defPath, "--testing-values", vals, "--format", "builder",
				"--stream", c.stream, "--max-records", c.records, "--max-pages", c.pages, "--max-slices", c.slices)
			if res.Stdout == "" {
				t.Fatalf("paginate-trace printed nothing (exit %d): %s", res.Code, res.Stderr)
			}
			trace := sameRunText(res.Stdout, api.URL)

			// serve, with the same values as its config (the spec's defaults filled, as the
			// Builder's form of testing values fills them and the CLI does) and the definition
			// as JSON, keys in the definition's order as the Builder sends them.
			api2 := httptest.NewServer(demoapi.New(demoapi.Options{}))
			defer api2.Close()
			config := orderedJSON(t, baseURLLine.ReplaceAllString(string(values), "base_url: "+api2.URL))
			src, err := os.ReadFile(defPath)
			if err != nil {
				t.Fatal(err)
			}
			manifest := orderedJSON(t, string(src))
			config = withSpecDefaults(t, config, manifest)
			body, _ := json.Marshal(map[string]any{"manifest": manifest, "config": config, "stream_name": c.stream,
				"record_limit": json.Number(c.records), "page_limit": json.Number(c.pages), "slice_limit": json.Number(c.slices)})
			resp, err := http.Post(server+"/v1/manifest/test_read", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var answer bytes.Buffer
			answer.ReadFrom(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("test_read answered %d: %s", resp.StatusCode, answer.String())
			}
			served := sameRunText(answer.String(), api2.URL)

			d, err := jsondiff.First(tokenRequestsAsValues(t, served), tokenRequestsAsValues(t, trace), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d != nil {
				t.Errorf("serve's test_read differs from paginate-trace --format builder: %s", d.Format("paginate-trace's"))
			}
		})
	}
}

// orderedJSON is a YAML document as JSON, its mappings' keys in their order.
func orderedJSON(t *testing.T, src string) json.RawMessage {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var write func(n *yaml.Node)
	write = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode:
			write(n.Content[0])
		case yaml.AliasNode:
			write(n.Alias)
		case yaml.MappingNode:
			b.WriteByte('{')
			for i := 0; i+1 < len(n.Content); i += 2 {
				if i > 0 {
					b.WriteByte(',')
				}
				k, _ := json.Marshal(n.Content[i].Value)
				b.Write(k)
				b.WriteByte(':')
				write(n.Content[i+1])
			}
			b.WriteByte('}')
		case yaml.SequenceNode:
			b.WriteByte('[')
			for i, e := range n.Content {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		default:
			var v any
			if err := n.Decode(&v); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(out)
		}
	}
	write(&doc)
	return b.Bytes()
}

// withSpecDefaults is config with the default of every property of the manifest's
// spec.connection_specification that config does not set, after its own keys.
func withSpecDefaults(t *testing.T, config, manifest json.RawMessage) json.RawMessage {
	t.Helper()
	var m struct {
		Spec struct {
			ConnectionSpecification struct {
				Properties map[string]struct {
					Default json.RawMessage `json:"default"`
				} `json:"properties"`
			} `json:"connection_specification"`
		} `json:"spec"`
	}
	var have map[string]json.RawMessage
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(config, &have); err != nil {
		t.Fatal(err)
	}
	out := bytes.TrimSuffix(bytes.TrimSpace(config), []byte("}"))
	var names []string
	for k := range m.Spec.ConnectionSpecification.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		d := m.Spec.ConnectionSpecification.Properties[k].Default
		if _, ok := have[k]; ok || d == nil {
			continue
		}
		key, _ := json.Marshal(k)
		out = append(append(append(append(out, ','), key...), ':'), d...)
	}
	return append(out, '}')
}

// tokenRequestsAsValues is a StreamRead's JSON with the body of each OAuth token request
// (an auxiliary request titled "Refresh token") as its fields and without its
// Content-Type: serve sends it form-encoded, as the CDK does for the platform, the CLI
// sends JSON first, as the seed says.
func tokenRequestsAsValues(t *testing.T, text string) []byte {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var fix func(v any)
	fix = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["title"] == "Refresh token" {
				if req, ok := x["request"].(map[string]any); ok {
					delete(req["headers"].(map[string]any), "Content-Type")
					if b, ok := req["body"].(string); ok {
						req["body"] = tokenRequestFields(b)
					}
				}
			}
			for _, e := range x {
				fix(e)
			}
		case []any:
			for _, e := range x {
				fix(e)
			}
		}
	}
	fix(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tokenRequestFields is a token request's body as its fields, from a JSON object or a form;
// a list (the scopes) is its items separated by spaces, as the form writes it.
func tokenRequestFields(body string) map[string]any {
	var v map[string]any
	if json.Unmarshal([]byte(body), &v) == nil {
		for k, e := range v {
			if list, ok := e.([]any); ok {
				items := make([]string, len(list))
				for i, x := range list {
					items[i] = fmt.Sprint(x)
				}
				v[k] = strings.Join(items, " ")
			}
		}
		return v
	}
	q, err := url.ParseQuery(body)
	if err != nil {
		return map[string]any{"(text)": body}
	}
	out := map[string]any{}
	for k, vs := range q {
		out[k] = strings.Join(vs, " ")
	}
	return out
}

// baseURLLine is the line of the testing values that names the API.
var baseURLLine = regexp.MustCompile(`(?m)^base_url: .*$`)

var (
	// dateValue is a Date header's value in a StreamRead's JSON.
	dateValue = regexp.MustCompile(`"Date":\s*"[^"]*"`)
	// quotaReset is the end of a quota window the demo API announces (its clock's minute).
	quotaReset = regexp.MustCompile(`"X-Ratelimit-Reset":\s*"[^"]*"`)
	// expiresAt is the expiry a token endpoint answers (an hour from its clock), within a
	// response's body written as a JSON string.
	expiresAt = regexp.MustCompile(`\\"expires_at\\":\\"[^\\"]*\\"`)
	// expiryDate is the expiry the read wrote into the config it updates (now and the
	// token's expires_in: a second apart when the two runs straddle a second).
	expiryDate = regexp.MustCompile(`"token_expiry_date":\s*"[^"]*"`)
)

// sameRunText is a StreamRead's JSON with what differs from one run to another made equal:
// the API's URL, the server's Date and the expiry of a token it issues.
func sameRunText(s, base string) string {
	s = dateValue.ReplaceAllString(strings.ReplaceAll(s, base, "http://API"), `"Date":"DATE"`)
	s = quotaReset.ReplaceAllString(s, `"X-Ratelimit-Reset":"RESET"`)
	s = expiresAt.ReplaceAllString(s, `\"expires_at\":\"EXPIRY\"`)
	return expiryDate.ReplaceAllString(s, `"token_expiry_date":"EXPIRY"`)
}

// startServe runs `connector serve` on a free port of the loopback for the test and
// returns its URL.
func startServe(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &lockedBuffer{}
	env := testEnv(nil)
	env.Stdin, env.Stdout, env.Stderr = strings.NewReader(""), &bytes.Buffer{}, stderr
	done := make(chan int, 1)
	go func() { done <- Execute(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, env) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	listening := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("serve did not start: %s", stderr.String())
	return ""
}

type builderCDKCase struct{ name, def, stream, records, pages, slices string }

// builderCDKCases reads the cases of the CDK comparison: a line each, its name, definition
// (from the repository's root), stream and limits (records, pages per slice, slices).
func builderCDKCases(t *testing.T) []builderCDKCase {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "pkg", "builder", "testdata", "cdk", "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []builderCDKCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		x := strings.Fields(sc.Text())
		if len(x) == 0 || strings.HasPrefix(x[0], "#") {
			continue
		}
		if len(x) != 6 {
			t.Fatalf("cases.txt: %q has %d fields, want 6", sc.Text(), len(x))
		}
		out = append(out, builderCDKCase{x[0], x[1], x[2], x[3], x[4], x[5]})
	}
	if len(out) == 0 {
		t.Fatal("cases.txt has no case")
	}
	return out
}
