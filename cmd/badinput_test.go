package cmd

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The catalogue of bad inputs: every row of the README's "Bad inputs and their messages"
// table is one case here. Each asserts the exit code and the line the user reads on stderr,
// and that no message is a panic, a bare Go error or carries the API key.

// badSecret is the API key of the runtime cases; it must never be printed.
const badSecret = "s3cr3t-k3y"

// badEnv is what the cases' arguments are built from.
type badEnv struct {
	t   *testing.T
	api string // the local misbehaving API
	tls string // a TLS server whose certificate the default client does not trust
	// closed is the address of a port on 127.0.0.1 nobody listens on.
	closed string
}

// def is a definition of testdata/badinput.
func (e *badEnv) def(name string) string { return filepath.Join("testdata", "badinput", name) }

// values writes testing values with base_url and the API key and returns the path.
func (e *badEnv) values(baseURL string) string {
	return writeFile(e.t, "values.yaml", "base_url: "+baseURL+"\napi_key: "+badSecret+"\n")
}

// read is `read DEF --testing-values VALUES` against baseURL.
func (e *badEnv) read(def, baseURL string, more ...string) []string {
	return append([]string{"read", e.def(def), "--testing-values", e.values(baseURL)}, more...)
}

// badAPI answers according to the first path segment.
func badAPI(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")[0] {
		case "html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!DOCTYPE html>\n<html><body>Please log in</body></html>"))
		case "empty":
		case "scalar":
			w.Write([]byte(`{"data": 5}`))
		case "cut":
			w.Write([]byte(`{"data":[{"id":1},`))
		case "loop":
			http.Redirect(w, r, "/loop2/items", http.StatusFound)
		case "loop2":
			http.Redirect(w, r, "/loop/items", http.StatusFound)
		case "cursor":
			w.Write([]byte(`{"data":[{"id":1}],"next":"/cursor/2","count":3}`))
		default:
			w.Write([]byte(`{"data":[{"id":1}]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

type badCase struct {
	name string
	args func(e *badEnv) []string
	code int
	// want is a line of stderr (addresses replaced by API, TLS and CLOSED), or its start
	// when it ends with "…".
	want string
}

var badInputs = []badCase{
	// The definition (validate, read, check and paginate-trace all report these).
	{"malformed YAML", validateArgs("malformed.yaml"), 3,
		"testdata/badinput/malformed.yaml:4:1: error: invalid YAML: did not find expected ',' or ']'"},
	{"a tab-indented file", validateArgs("tabs.yaml"), 3,
		"testdata/badinput/tabs.yaml:3:1: error: invalid YAML: found character that cannot start any token"},
	{"a wrong type", validateArgs("wrong_type.yaml"), 3,
		"testdata/badinput/wrong_type.yaml:2:10: error: `streams` must be a list, not a string"},
	{"an unknown top-level field", validateArgs("unknown_field.yaml"), 3,
		"testdata/badinput/unknown_field.yaml:2:1: error: unknown field `defintions` in DeclarativeSource"},
	{"a misspelled component type", validateArgs("misspelled_type.yaml"), 3,
		"  hint: if `DpathExtracter` is a typo: did you mean `DpathExtractor`?"},
	{"a $ref to a missing definition", validateArgs("bad_ref.yaml"), 3,
		"testdata/badinput/bad_ref.yaml:9:15: error: reference `#/definitions/requestr` not found"},
	{"a cyclic $ref", validateArgs("cyclic_ref.yaml"), 3,
		"testdata/badinput/cyclic_ref.yaml:6:11: error: reference cycle: #/definitions/a → #/definitions/b → #/definitions/a"},
	{"a template syntax error", validateArgs("template_syntax.yaml"), 3,
		"testdata/badinput/template_syntax.yaml:10:23: error: in `path`: unclosed tag `{{`: missing `}}`"},
	{"an unknown template variable", validateArgs("unknown_variable.yaml"), 3,
		"testdata/badinput/unknown_variable.yaml:10:26: error: in `path`: unknown variable `confg`"},
	{"a bad ISO 8601 duration", validateArgs("bad_duration.yaml"), 3,
		"testdata/badinput/bad_duration.yaml:15:32: error: `expiration_duration` must be an ISO 8601 duration or a number of seconds, not `P1X`"},
	{"a credential written in the definition", validateArgs("credential_literal.yaml"), 3,
		"testdata/badinput/credential_literal.yaml:14:21: error: the password is written in the definition; credentials must come from the testing values"},
	{"a credential written in a request header", validateArgs("credential_header.yaml"), 3,
		"testdata/badinput/credential_header.yaml:12:22: error: the header `X-Api-Key` is written in the definition; credentials must come from the testing values"},
	{"a missing required field", validateArgs("missing_field.yaml"), 3,
		"testdata/badinput/missing_field.yaml:8:9: error: HttpRequester is missing the required field `url_base` (or `url`)"},
	{"a definition that is a list", validateArgs("list_top.yaml"), 3,
		"testdata/badinput/list_top.yaml:1:1: error: the definition must be a mapping, not a list"},
	{"an empty definition", validateArgs("empty.yaml"), 3,
		"testdata/badinput/empty.yaml:1:1: error: the definition is empty"},
	{"an unknown error handler action", validateArgs("bad_action.yaml"), 3,
		"testdata/badinput/bad_action.yaml:14:23: error: `action` must be one of SUCCESS, FAIL, RETRY, IGNORE, RATE_LIMITED, RESET_PAGINATION, not `RETRI`"},
	{"an HTTP status code that is not an integer", validateArgs("bad_http_codes.yaml"), 3,
		"testdata/badinput/bad_http_codes.yaml:15:35: error: an HTTP status code must be an integer from 100 to 599, not `4.5`"},
	{"a definition file that does not exist", validateArgs("nope.yaml"), 2,
		"error: cannot read definition: testdata/badinput/nope.yaml: no such file or directory"},

	// The command line and the testing values.
	{"an unknown flag", func(e *badEnv) []string { return e.read("api.yaml", e.api, "--max-recods", "3") }, 2,
		"error: unknown flag: --max-recods (did you mean --max-records?)"},
	{"a timeout that is not positive", func(e *badEnv) []string { return e.read("api.yaml", e.api, "--timeout", "0s") }, 2,
		"error: --timeout must be positive, e.g. 30s"},
	{"a missing testing values file", func(e *badEnv) []string {
		return []string{"read", e.def("api.yaml"), "--testing-values", "testdata/badinput/nope-values.yaml"}
	}, 2, "error: cannot read testing values: testdata/badinput/nope-values.yaml: no such file or directory"},
	{"an unreadable testing values file (a folder)", func(e *badEnv) []string {
		return []string{"read", e.def("api.yaml"), "--testing-values", "testdata/badinput"}
	}, 2, "error: cannot read testing values: testdata/badinput: is a directory"},
	{"testing values that are not a mapping", func(e *badEnv) []string {
		return []string{"read", e.def("api.yaml"), "--testing-values", e.def("values_list.yaml")}
	}, 3, "testdata/badinput/values_list.yaml:1:1: error: testing values must be a mapping of keys to values, found a list"},
	{"testing values that are not valid YAML", func(e *badEnv) []string {
		return []string{"read", e.def("api.yaml"), "--testing-values", e.def("values_malformed.yaml")}
	}, 3, "testdata/badinput/values_malformed.yaml:1:1: error: invalid YAML: did not find expected ',' or ']'"},
	{"testing values missing a required key", func(e *badEnv) []string {
		vals := writeFile(e.t, "values.yaml", "base_url: "+e.api+"\n")
		return []string{"read", e.def("spec_required.yaml"), "--testing-values", vals}
	}, 3, "…/values.yaml:1:1: error: missing required testing value \"api_key\""},
	{"--set without =", func(e *badEnv) []string { return e.read("api.yaml", e.api, "--set", "api_key") }, 2, `error: --set "api_key": write key.path=value`},
	{"an unknown stream", func(e *badEnv) []string { return e.read("api.yaml", e.api, "--stream", "itemz") }, 2,
		`error: unknown stream "itemz"; the definition has: items`},

	// Run time.
	{"a stop condition that fails at run time", func(e *badEnv) []string { return e.read("stop_condition_runtime.yaml", e.api+"/cursor") }, 1,
		"error: stream items, page 1: stop_condition: evaluating `{{ response.count / 0 > 0 }}`: division by zero (1 record written before the failure)"},
	{"an error handler number from the testing values that is not a number", func(e *badEnv) []string {
		vals := writeFile(e.t, "values.yaml", "base_url: "+e.api+"\nfactor: fast\n")
		return []string{"read", e.def("factor_runtime.yaml"), "--testing-values", vals}
	}, 1, "error: stream items: error_handler: `factor` of the ExponentialBackoffStrategy at line 13 must be a number, but \"{{ config['factor'] }}\" gives \"fast\" (0 records written before the failure)"},
	{"an invalid URL", func(e *badEnv) []string { return e.read("api.yaml", "http://exa mple.com") }, 1,
		`error: stream items, page 1: invalid URL "http://exa mple.com/items": parse "http://exa mple.com/items": invalid character " " in host name (0 records written before the failure)`},
	{"an unsupported URL scheme", func(e *badEnv) []string { return e.read("api.yaml", "ftp://127.0.0.1") }, 1,
		`error: stream items, page 1: invalid URL "ftp://127.0.0.1/items": unsupported scheme "ftp" (only http and https) (0 records written before the failure)`},
	{"an HTML response", func(e *badEnv) []string { return e.read("api.yaml", e.api+"/html") }, 1,
		`error: stream items, page 1: GET API/html/items?key=**** answered 200 with a body that is not JSON (invalid JSON at byte 0: unexpected '<'): "<!DOCTYPE html> <html><body>Please log in</body></html>" (0 records written before the failure)`},
	{"an empty body", func(e *badEnv) []string { return e.read("api.yaml", e.api+"/empty") }, 1,
		"error: stream items, page 1: GET API/empty/items?key=**** answered 200 with a body that is not JSON (empty response body): (empty body) (0 records written before the failure)"},
	{"a JSON body whose field_path points at a scalar", func(e *badEnv) []string { return e.read("api.yaml", e.api+"/scalar") }, 1,
		`error: stream items, page 1: GET API/scalar/items?key=**** answered 200, but the field path ends at a number (byte 9), not at an object or a list of objects: "{\"data\": 5}" (0 records written before the failure)`},
	{"invalid JSON (a body cut short)", func(e *badEnv) []string { return e.read("api.yaml", e.api+"/cut") }, 1,
		`error: stream items, page 1: GET API/cut/items?key=**** answered 200 with a body that is not JSON (invalid JSON at byte 18: unexpected end of body): "{\"data\":[{\"id\":1}," (0 records written before the failure)`},
	{"a redirect loop", func(e *badEnv) []string { return e.read("api.yaml", e.api+"/loop") }, 1,
		"error: stream items, page 1: GET API/loop/items?key=****: redirect loop: API/loop/items?key=**** → API/loop2/items → API/loop/items → API/loop2/items (0 records written before the failure)"},
	{"a host name that does not resolve", func(e *badEnv) []string { return e.read("api.yaml", "http://api.example.invalid") }, 1,
		"error: stream items, page 1: GET http://api.example.invalid/items?key=****: cannot resolve the host api.example.invalid: …"},
	{"a connection refused", func(e *badEnv) []string { return e.read("api.yaml", e.closed) }, 1,
		"error: stream items, page 1: GET CLOSED/items?key=****: connection refused by … (is the server running?) (gave up after 2 retries) (0 records written before the failure)"},
	{"a TLS certificate the system does not trust", func(e *badEnv) []string { return e.read("api.yaml", e.tls) }, 1,
		"error: stream items, page 1: GET TLS/items?key=****: TLS failure: tls: failed to verify certificate: x509: certificate signed by unknown authority (0 records written before the failure)"},
}

func validateArgs(file string) func(e *badEnv) []string {
	return func(e *badEnv) []string { return []string{"validate", e.def(file)} }
}

func TestBadInputs(t *testing.T) {
	t.Parallel()
	env, _ := fakeWaits() // a retry does not wait
	api := badAPI(t)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = quietLog()
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close) // after the parallel subtests
	closed := refusedURL(t)
	if len(badInputs) < 30 {
		t.Errorf("the catalogue has %d bad inputs, want at least 30", len(badInputs))
	}
	for _, tt := range badInputs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &badEnv{t: t, api: api.URL, tls: tlsSrv.URL, closed: closed}
			res := runCLIEnv(t, env, "", tt.args(e)...)
			stderr := strings.NewReplacer(api.URL, "API", tlsSrv.URL, "TLS", closed, "CLOSED").Replace(res.Stderr)
			if res.Code != tt.code {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", res.Code, tt.code, stderr)
			}
			if !hasLine(stderr, tt.want) {
				t.Errorf("stderr:\n%s\nwant the line:\n%s", stderr, tt.want)
			}
			for _, bad := range []string{"panic", "goroutine ", "runtime error", badSecret, "%!", "<nil>"} {
				if strings.Contains(res.Stderr+res.Stdout, bad) {
					t.Errorf("the output contains %q:\n%s", bad, res.Stderr)
				}
			}
		})
	}
}

// hasLine reports whether one line of text is want, or matches it with "…" standing for
// any text.
func hasLine(text, want string) bool {
	for _, line := range strings.Split(text, "\n") {
		if matchEllipsis(line, want) {
			return true
		}
	}
	return false
}

func matchEllipsis(s, pattern string) bool {
	parts := strings.Split(pattern, "…")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, p)
		}
		j := strings.Index(s, p)
		if j < 0 {
			return false
		}
		s = s[j+len(p):]
	}
	return s == ""
}

// The catalogue in the README lists every case, in order.
func TestBadInputsAreInTheReadme(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "## Bad inputs and their messages")
	if !ok {
		t.Fatal("README.md has no section \"Bad inputs and their messages\"")
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| input") {
			rows++
		}
		if strings.HasPrefix(line, "## ") {
			break
		}
	}
	for _, tt := range badInputs {
		if !strings.Contains(table, "| "+tt.name+" |") {
			t.Errorf("README: no row for %q", tt.name)
		}
	}
	if rows != len(badInputs) {
		t.Errorf("README table has %d rows, the catalogue %d cases", rows, len(badInputs))
	}
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
