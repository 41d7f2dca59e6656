package cmd

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Hostile responses: nesting deeper than the JSON depth limit, bodies over --max-body
// (compression bombs included) and redirects to other schemes. Each ends at once with exit 1
// and one line naming the limit, after exactly one request (never retried).

// limitsAPI answers according to the first path segment; the rest of the path is the
// request the definition makes (/items, /auth/login, /oauth/token).
func limitsAPI(t *testing.T) *recorder { return newLimitsAPI(t, limitsRoutes(t)) }

// limitsRoute answers one route of limitsAPI.
type limitsRoute = func(w http.ResponseWriter, r *http.Request)

// limitsRoutes builds the answers of limitsAPI (megabytes of them, built once per test).
func limitsRoutes(t *testing.T) map[string]limitsRoute {
	bomb := `{"data":[` + strings.Repeat(" ", 4<<20) + `]}` // 4 MiB that compress to a few KiB
	gzipped, deflated, rawDeflated := compress(t, "gzip", bomb), compress(t, "deflate", bomb), compress(t, "raw", bomb)
	exact := func(n int) string { // a body of exactly n bytes
		const start, end = `{"data":[{"id":1}]`, `}`
		return start + strings.Repeat(" ", n-len(start)-len(end)) + end
	}
	return map[string]limitsRoute{
		"lists":     answer(arrays(2_000_000)),
		"objects":   answer(objects(2_000_000)),
		"in-record": answer(`{"data":[{"id":1,"x":` + arrays(1_000_000) + `}]}`),
		"depth-512": answer(`{"data":[{"x":` + arrays(509) + `}]}`),
		"depth-513": answer(`{"data":[{"x":` + arrays(510) + `}]}`),
		"gzip-bomb": encoded("gzip", gzipped),
		"zlib-bomb": encoded("deflate", deflated),
		"raw-bomb":  encoded("deflate", rawDeflated),
		"gzip-1024": encoded("gzip", compress(t, "gzip", exact(1024))),
		"gzip-1025": encoded("gzip", compress(t, "gzip", exact(1025))),
		"size-1024": answer(exact(1024)),
		"size-1025": answer(exact(1025)),
		"records-8": answer(`{"data":[0,0,0,0,0,0,0,0]}`),
		"records-9": answer(`{"data":[0,0,0,0,0,0,0,0,0]}`),
		"announced": func(w http.ResponseWriter, _ *http.Request) {
			// Announces one byte more than 256 MiB, and sends none of it.
			w.Header().Set("Content-Length", strconv.Itoa(256<<20+1))
			w.WriteHeader(http.StatusOK)
		},
		"chunked": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush() // no Content-Length: the body is chunked
			w.Write([]byte(`{"data":[` + strings.Repeat(" ", 2<<20) + `]}`))
		},
		"to-file": redirect("file:///etc/passwd?key=" + badSecret),
		"to-ftp":  redirect("ftp://127.0.0.1/items"),
	}
}

// newLimitsAPI serves routes as limitsAPI does.
func newLimitsAPI(t *testing.T, routes map[string]limitsRoute) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		route, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch {
		case rest == "auth/login" || rest == "oauth/token":
			routes[route](w, r)
		case strings.HasSuffix(route, "-login") || strings.HasSuffix(route, "-token"):
			w.Write([]byte(`{"data":[{"id":1}]}`)) // the data of an authentication case
		case routes[route] != nil:
			routes[route](w, r)
		default:
			http.NotFound(w, r)
		}
	})
}

func arrays(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func objects(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }

func answer(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) }
}

func encoded(encoding string, body []byte) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Encoding", encoding)
		w.Write(body)
	}
}

func redirect(to string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Location", to)
		w.WriteHeader(http.StatusFound)
	}
}

// compress is body compressed with gzip, deflate (zlib-wrapped, as RFC 9110 says) or raw
// deflate.
func compress(t *testing.T, how, body string) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	switch how {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "deflate":
		w = zlib.NewWriter(&b)
	default:
		w, _ = flate.NewWriter(&b, flate.DefaultCompression)
	}
	if _, err := io.WriteString(w, body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type limitCase struct {
	name string
	// command is read, check or paginate-trace; def a definition (api.yaml of
	// testdata/badinput by default); route the first path segment of base_url.
	command, def, route string
	args                []string
	code                int
	// want is a line of stderr (the API's address replaced by API), stdout when
	// the case succeeds.
	want, stdout string
	// requests is how many requests the API must receive (default 1).
	requests int
}

var responseLimits = []limitCase{
	// JSON nesting.
	{name: "JSON lists nested 2,000,000 deep", route: "lists", code: 1,
		want: "error: stream items, page 1: GET API/lists/items?key=**** answered 200 with JSON nested deeper than 512 levels at byte 512, a limit of connector (0 records written before the failure)"},
	{name: "JSON objects nested 2,000,000 deep", route: "objects", code: 1,
		want: "error: stream items, page 1: GET API/objects/items?key=**** answered 200 with JSON nested deeper than 512 levels at byte 2560, a limit of connector (0 records written before the failure)"},
	{name: "a record nested 1,000,000 deep", route: "in-record", code: 1,
		want: "error: stream items, page 1: GET API/in-record/items?key=**** answered 200 with JSON nested deeper than 512 levels at byte 530, a limit of connector (0 records written before the failure)"},
	{name: "JSON nested exactly 512 levels", route: "depth-512", code: 0,
		stdout: `{"x":` + arrays(509) + "}\n"},
	{name: "JSON nested 513 levels", route: "depth-513", code: 1,
		want: "error: stream items, page 1: GET API/depth-513/items?key=**** answered 200 with JSON nested deeper than 512 levels at byte 523, a limit of connector (0 records written before the failure)"},
	{name: "JSON nested too deep, in check", command: "check", route: "lists", code: 1,
		want: "FAILED  items  GET API/lists/items?key=**** answered 200 with JSON nested deeper than 512 levels at byte 512, a limit of connector"},
	{name: "a session login answer nested too deep", def: "../../../definitions/session-token.yaml", route: "objects", code: 1,
		args: []string{"--stream", "books"}, requests: 1,
		want: "error: stream books, page 1: authentication failed: session login: 200 OK from POST API/objects/auth/login: the answer is JSON nested deeper than 512 levels at byte 2560, a limit of connector, so there is no token at session_token_path data.session.token (0 records written before the failure)"},
	{name: "an OAuth token answer nested too deep", def: "../../../definitions/oauth-refresh-token.yaml", route: "lists", code: 1,
		args: []string{"--stream", "books"},
		want: "error: stream books, page 1: authentication failed: OAuth token refresh: 200 OK from POST API/lists/oauth/token: the answer is JSON nested deeper than 512 levels at byte 512, a limit of connector (0 records written before the failure)"},

	// Body size, counted after decompression.
	{name: "a gzip bomb (decoded by Go's transport)", route: "gzip-bomb", args: []string{"--max-body", "1MiB"}, code: 1,
		want: "error: stream items, page 1: GET API/gzip-bomb/items?key=**** answered 200 with a body larger than 1 MiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a gzip bomb (decoded by connector)", def: "api_gzip.yaml", route: "gzip-bomb", args: []string{"--max-body", "1MiB"}, code: 1,
		want: "error: stream items, page 1: GET API/gzip-bomb/items?key=**** answered 200 with a body larger than 1 MiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a deflate bomb", route: "zlib-bomb", args: []string{"--max-body", "1MiB"}, code: 1,
		want: "error: stream items, page 1: GET API/zlib-bomb/items?key=**** answered 200 with a body larger than 1 MiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a raw deflate bomb", route: "raw-bomb", args: []string{"--max-body", "1MiB"}, code: 1,
		want: "error: stream items, page 1: GET API/raw-bomb/items?key=**** answered 200 with a body larger than 1 MiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a Content-Length over the default limit", route: "announced", code: 1,
		want: "error: stream items, page 1: GET API/announced/items?key=**** answered 200 with a body larger than 256 MiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a chunked body over the limit", route: "chunked", args: []string{"--max-body", "1MiB"}, code: 1,
		want: "error: stream items, page 1: GET API/chunked/items?key=**** answered 200 with a body larger than 1 MiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a body of exactly --max-body", route: "size-1024", args: []string{"--max-body", "1KiB"}, code: 0, stdout: `{"id":1}` + "\n"},
	{name: "a body one byte over --max-body", route: "size-1025", args: []string{"--max-body", "1024"}, code: 1,
		want: "error: stream items, page 1: GET API/size-1025/items?key=**** answered 200 with a body larger than 1 KiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a gzip body decoding to exactly --max-body", def: "api_gzip.yaml", route: "gzip-1024", args: []string{"--max-body", "1KiB"}, code: 0,
		stdout: `{"id":1}` + "\n"},
	{name: "a gzip body decoding to one byte over --max-body", def: "api_gzip.yaml", route: "gzip-1025", args: []string{"--max-body", "1KiB"}, code: 1,
		want: "error: stream items, page 1: GET API/gzip-1025/items?key=**** answered 200 with a body larger than 1 KiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a limit of bytes that are not whole KiB", route: "size-1025", args: []string{"--max-body", "1000"}, code: 1,
		want: "error: stream items, page 1: GET API/size-1025/items?key=**** answered 200 with a body larger than 1000 bytes (--max-body raises the limit) (0 records written before the failure)"},
	{name: "a body over the limit, in paginate-trace", command: "paginate-trace", route: "chunked", args: []string{"--max-body", "1MiB"}, code: 1,
		want: "    ✗ GET API/chunked/items?key=**** answered 200 with a body larger than 1 MiB (--max-body raises the limit)"},
	{name: "a body over the limit, in check", command: "check", route: "chunked", args: []string{"--max-body", "1MiB"}, code: 1,
		want: "FAILED  items  GET API/chunked/items?key=**** answered 200 with a body larger than 1 MiB (--max-body raises the limit)"},
	{name: "a session login answer over the limit", def: "../../../definitions/session-token.yaml", route: "chunked", code: 1,
		args: []string{"--stream", "books", "--max-body", "1MiB"},
		want: "error: stream books, page 1: authentication failed: session login: POST API/chunked/auth/login answered 200 with a body larger than 1 MiB (--max-body raises the limit) (0 records written before the failure)"},
	{name: "an OAuth token answer over the limit", def: "../../../definitions/oauth-refresh-token.yaml", route: "gzip-bomb", code: 1,
		args: []string{"--stream", "books", "--max-body", "1MiB"},
		want: "error: stream books, page 1: authentication failed: OAuth token refresh: POST API/gzip-bomb/oauth/token answered 200 with a body larger than 1 MiB (--max-body raises the limit) (0 records written before the failure)"},

	// Records per page: one per 128 bytes of --max-body (8 for 1 KiB).
	{name: "as many records as --max-body allows", route: "records-8", args: []string{"--max-body", "1KiB"}, code: 0,
		stdout: strings.Repeat("0\n", 8)},
	{name: "a page of more records than --max-body allows", route: "records-9", args: []string{"--max-body", "1KiB"}, code: 1,
		want: "error: stream items, page 1: GET API/records-9/items?key=**** answered 200 with more than 8 records on one page, a limit of one record per 128 bytes of --max-body (--max-body raises the limit) (0 records written before the failure)"},

	// Redirects.
	{name: "a redirect to file://", route: "to-file", code: 1,
		want: "error: stream items, page 1: GET API/to-file/items?key=****: redirect to file:///etc/passwd?key=**** refused: only http and https URLs are followed (0 records written before the failure)"},
	{name: "a redirect to ftp://", route: "to-ftp", code: 1,
		want: "error: stream items, page 1: GET API/to-ftp/items?key=****: redirect to ftp://127.0.0.1/items refused: only http and https URLs are followed (0 records written before the failure)"},

	// The flag.
	{name: "--max-body that is not a size", route: "size-1024", args: []string{"--max-body", "64XB"}, code: 2, requests: -1,
		want: `error: --max-body must be a size such as 64MiB, 1GiB or a number of bytes (1 byte to 4 EiB), not "64XB"`},
	{name: "--max-body 0", route: "size-1024", args: []string{"--max-body", "0"}, code: 2, requests: -1,
		want: `error: --max-body must be a size such as 64MiB, 1GiB or a number of bytes (1 byte to 4 EiB), not "0"`},
}

func TestResponseLimits(t *testing.T) {
	t.Parallel()
	env, _ := fakeWaits() // a retry would not wait; the count of requests shows it
	routes := limitsRoutes(t)
	for _, tt := range responseLimits {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newLimitsAPI(t, routes)
			command, def := tt.command, tt.def
			if command == "" {
				command = "read"
			}
			switch {
			case def == "":
				def = "testdata/badinput/api.yaml"
			case !strings.HasPrefix(def, "../"):
				def = "testdata/limits_response/" + def
			default:
				def = strings.TrimPrefix(def, "../../")
			}
			base := api.URL + "/" + tt.route
			vals := writeFile(t, "values.yaml", "base_url: "+base+"\napi_key: "+badSecret+"\n"+
				"username: demo\npassword: "+badSecret+"\nclient_id: demo-client\nclient_secret: "+badSecret+"\nrefresh_token: "+badSecret+"\n")
			res := runCLIEnv(t, env, "", append([]string{command, def, "--testing-values", vals}, tt.args...)...)
			stderr := strings.ReplaceAll(res.Stderr, api.URL, "API")
			stdout := strings.ReplaceAll(res.Stdout, api.URL, "API")
			if res.Code != tt.code {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", res.Code, tt.code, stderr)
			}
			if tt.want != "" && !hasLine(stderr+stdout, tt.want) {
				t.Errorf("stderr:\n%s\nstdout:\n%s\nwant the line:\n%s", stderr, stdout, tt.want)
			}
			if tt.stdout != "" && res.Stdout != tt.stdout {
				t.Errorf("stdout:\n%.300s\nwant:\n%.300s", res.Stdout, tt.stdout)
			}
			var ours []string
			for _, r := range api.requests() {
				if strings.HasPrefix(r.URL, "/"+tt.route+"/") {
					ours = append(ours, r.Method+" "+r.URL)
				}
			}
			want := tt.requests
			if want == 0 {
				want = 1
			}
			if want < 0 {
				want = 0
			}
			if len(ours) != want {
				t.Errorf("the API received %d requests, want %d (no retry):\n%s", len(ours), want, strings.Join(ours, "\n"))
			}
			for _, bad := range []string{"panic", "goroutine ", "runtime error", "fatal error", badSecret, "%!", "<nil>"} {
				if strings.Contains(res.Stderr+res.Stdout, bad) {
					t.Errorf("the output contains %q:\n%.2000s", bad, res.Stderr)
				}
			}
		})
	}
}

// CONNECTOR_MAX_BODY sets the limit as the flag does.
func TestMaxBodyFromTheEnvironment(t *testing.T) {
	t.Parallel()
	api := limitsAPI(t)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"/size-1025\napi_key: "+badSecret+"\n")
	env := testEnv(map[string]string{"CONNECTOR_MAX_BODY": "1KiB"})
	res := runCLIEnv(t, env, "", "read", "testdata/badinput/api.yaml", "--testing-values", vals)
	want := "error: stream items, page 1: GET API/size-1025/items?key=**** answered 200 with a body larger than 1 KiB (--max-body raises the limit) (0 records written before the failure)"
	if stderr := strings.ReplaceAll(res.Stderr, api.URL, "API"); res.Code != 1 || !hasLine(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and the line:\n%s", res.Code, stderr, want)
	}
}
