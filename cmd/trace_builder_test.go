package cmd

import (
	"net/http"
	"strings"
	"testing"
)

// builderAPI serves /items?page=1…3: two records, two records, one; no Date header, so
// that the StreamRead is the same on every run.
func builderAPI(t *testing.T) *recorder {
	t.Helper()
	pages := map[string]string{
		"1": `{"data":[{"id":1},{"id":2}]}`,
		"2": `{"data":[{"id":3},{"id":4}]}`,
		"3": `{"data":[{"id":5}]}`,
	}
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/items" {
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"error":"boom"}`))
			return
		}
		w.Write([]byte(pages[r.URL.Query().Get("page")]))
	})
}

const builderDef = `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
  - type: DeclarativeStream
    name: broken
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: /broken}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`

// paginate-trace --format builder prints the test read's StreamRead, indented by two
// spaces; --max-pages sets the pages per slice (the Builder's other limits stay: 100
// records, 5 slices).
func TestTraceFormatBuilder(t *testing.T) {
	t.Parallel()
	api := builderAPI(t)
	def := writeFile(t, "def.yaml", builderDef)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	res := runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--format", "builder", "--stream", "items", "--max-pages", "1")
	res.Stdout = e2eScrub(res.Stdout, api)
	e2eCheckResult(t, api, res, 0, `{
  "logs": [],
  "slices": [
    {
      "pages": [
        {
          "records": [
            {
              "id": 1
            },
            {
              "id": 2
            }
          ],
          "request": {
            "url": "http://API/items?page=1",
            "headers": {
              "User-Agent": "connector/`+version+`"
            },
            "http_method": "GET",
            "body": null
          },
          "response": {
            "status": 200,
            "body": "{\"data\":[{\"id\":1},{\"id\":2}]}",
            "headers": {
              "Content-Length": "28",
              "Content-Type": "application/json"
            }
          }
        }
      ],
      "slice_descriptor": "{}",
      "state": [
        {
          "type": "STREAM",
          "stream": {
            "stream_descriptor": {
              "name": "items",
              "namespace": null
            },
            "stream_state": {
              "__ab_no_cursor_state_message": true
            }
          },
          "global_": null,
          "data": null,
          "sourceStats": {
            "recordCount": 2.0
          },
          "destinationStats": null
        }
      ],
      "auxiliary_requests": []
    }
  ],
  "test_read_limit_reached": true,
  "auxiliary_requests": [],
  "inferred_schema": {
    "$schema": "http://json-schema.org/schema#",
    "type": "object",
    "properties": {
      "id": {
        "type": [
          "number",
          "null"
        ]
      }
    }
  },
  "inferred_datetime_formats": {},
  "latest_config_update": null
}
`, "")
	e2eCheckRequests(t, api, e2eGet("/items?page=1"))

	// The Builder's own limits: every page (3 < 5), and no limit reached.
	res = runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--format", "builder", "--stream", "items")
	if res.Code != 0 || strings.Count(res.Stdout, `"url": `) != 3 || !strings.Contains(res.Stdout, `"test_read_limit_reached": false`) {
		t.Errorf("with the Builder's limits: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// A test read that fails prints its StreamRead all the same, says the failure on stderr,
// and exits 1; --format builder needs the one stream to read.
func TestTraceFormatBuilderFailuresAndUsage(t *testing.T) {
	t.Parallel()
	api := builderAPI(t)
	def := writeFile(t, "def.yaml", builderDef)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	res := runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--format", "builder", "--stream", "broken")
	stdout := e2eScrub(res.Stdout, api)
	if res.Code != 1 || !strings.Contains(stdout, `"message": "stream broken, page 1: 500 Internal Server Error from GET http://API/broken: {\"error\":\"boom\"}"`) ||
		!strings.Contains(stdout, `"status": 500`) {
		t.Errorf("exit %d, stdout:\n%s", res.Code, stdout)
	}
	if want := "error: stream broken, page 1: 500 Internal Server Error from GET http://API/broken: {\"error\":\"boom\"}\n"; e2eScrub(res.Stderr, api) != want {
		t.Errorf("stderr %q, want %q", e2eScrub(res.Stderr, api), want)
	}
	for _, args := range [][]string{{}, {"--stream", "items", "--stream", "broken"}} {
		res := runCLI(t, "", append([]string{"paginate-trace", def, "--testing-values", vals, "--format", "builder"}, args...)...)
		if res.Code != 2 || res.Stdout != "" || !strings.Contains(res.Stderr, "--format builder shows the test read of one stream: name it with --stream") {
			t.Errorf("%v: exit %d\n%s%s", args, res.Code, res.Stdout, res.Stderr)
		}
	}
	res = runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--format", "builder", "--stream", "nope")
	if res.Code != 2 || !strings.Contains(res.Stderr, `unknown stream "nope"`) {
		t.Errorf("an unknown stream: exit %d\n%s", res.Code, res.Stderr)
	}
}

// paginate-trace shows each response's headers, and with --show-bodies N the first N bytes
// of its body, JSON indented, secrets masked: the access token of the token response too,
// which the authenticator learns only once the exchange is over.
func TestTraceShowBodies(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/token":
			w.Write([]byte(`{"access_token":"fresh-access-token-1","expires_in":3600}`))
		default:
			w.Header().Set("X-Request-Id", "r-1")
			w.Write([]byte(`{"data":[{"id":1,"name":"first"},{"id":2,"name":"second"}]}`))
		}
	})
	def := writeFile(t, "def.yaml", `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator:
          type: OAuthAuthenticator
          token_refresh_endpoint: "{{ config['base_url'] }}/token"
          grant_type: client_credentials
          client_id: "{{ config['client_id'] }}"
          client_secret: "{{ config['client_secret'] }}"
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nclient_id: the-client\nclient_secret: the-client-secret\n")
	res := runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--show-bodies", "40")
	res.Stdout = e2eScrub(res.Stdout, api)
	e2eCheckResult(t, api, res, 0, `stream items (NoPagination)
  → POST http://API/token (token)
      Content-Type: application/json
      body: {"client_id":"****","client_secret":"****","grant_type":"client_credentials"}
    ← 200 OK, 57 bytes
      Content-Length: 57
      Content-Type: application/json
      body:
        {
          "access_token": "****",
          "expires_i
        … (cut after 40 bytes)
  → GET http://API/items (data)
      Authorization: Bearer ****
    ← 200 OK, 59 bytes
      Content-Length: 59
      Content-Type: application/json
      X-Request-Id: r-1
      body:
        {
          "data": [
            {
              "id": 1,
        … (cut after 40 bytes)
    page 1: 2 records extracted, token none → none
    stop: no pagination
  items: 1 page, 2 records emitted
`, "")
	res = runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--show-bodies", "1000", "--format", "json")
	if !strings.Contains(res.Stdout, `"response_body":"{\n  \"access_token\": \"****\",\n  \"expires_in\": 3600\n}"`) || strings.Contains(res.Stdout, "fresh-access-token-1") {
		t.Errorf("--format json --show-bodies:\n%s", res.Stdout)
	}
}
