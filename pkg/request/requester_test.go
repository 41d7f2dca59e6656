package request

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"connector/pkg/extract"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// requester loads a definition whose one stream has the given requester (YAML indented by
// eight spaces) and returns it.
func requester(t *testing.T, yaml string) *manifest.Requester {
	t.Helper()
	src := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
` + yaml + `
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`
	def, diags := manifest.Parse("def.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	return def.Streams[0].Requester
}

var testVars = map[string]any{
	"config": map[string]any{
		"base":    "https://api.test/v1/",
		"region":  "eu",
		"empty":   "",
		"ids":     []any{"a", "b"},
		"filters": map[string]any{"status": "open", "after": "2024-01-01"},
	},
	"parameters": map[string]any{"resource": "orders"},
}

func TestFromRequester(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       built
	}{
		{
			name: "url_base and path joined; parameters and headers in the order written; empty values dropped",
			yaml: `        url_base: "{{ config.base }}"
        path: "/{{ parameters.resource }}"
        request_parameters:
          region: "{{ config.region }}"
          gone: "{{ config.empty }}"
          missing: "{{ config.nothing }}"
          none: "{{ None }}"
          id: "{{ config.ids }}"
          limit: 50
        request_headers:
          X-Region: "{{ config.region }}"
          X-Empty: ""`,
			want: built{Method: "GET", URL: "https://api.test/v1/orders?region=eu&id=a&id=b&limit=50",
				Header: http.Header{"X-Region": {"eu"}}},
		},
		{
			name: "url without url_base, a POST with a JSON body keeping key order and number spelling",
			yaml: `        url: "https://api.test/search?v=2"
        http_method: POST
        request_body_json:
          query: "status:{{ config.filters.status }}"
          size: 100
          ratio: 1.50
          big: 12345678901234567890
          nested: {b: 1, a: [true, null, "x"], e: ""}
          drop: "{{ config.empty }}"
          filters: "{{ config.filters }}"`,
			want: built{Method: "POST", URL: "https://api.test/search?v=2",
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   `{"query":"status:open","size":100,"ratio":1.5,"big":12345678901234567890,"nested":{"b":1,"a":[true,null,"x"]},"filters":{"after":"2024-01-01","status":"open"}}`},
		},
		{
			// As the CDK sends calendly's scheduled_events (testdata/cdk-get-body): a GET
			// carries its request_body_json, with its Content-Type.
			name: "a GET with a JSON body sends it",
			yaml: `        url_base: https://api.test
        path: /scheduled_events
        http_method: GET
        request_body_json:
          sort: start_time:desc`,
			want: built{Method: "GET", URL: "https://api.test/scheduled_events",
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   `{"sort":"start_time:desc"}`},
		},
		{
			name: "a form body; request options given as one template of a mapping (keys sorted)",
			yaml: `        url_base: https://api.test
        path: token
        http_method: POST
        request_parameters: "{{ config.filters }}"
        request_body_data:
          grant_type: client_credentials
          scope: "{{ config.ids }}"
          gone: "{{ config.empty }}"`,
			want: built{Method: "POST", URL: "https://api.test/token?after=2024-01-01&status=open",
				Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
				Body:   "grant_type=client_credentials&scope=a&scope=b"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := FromRequester("data", requester(t, tt.yaml), NewScope(testVars, nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := build(t, b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("built\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestFromRequesterErrors(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"no URL at all", `        url_base: "{{ config.empty }}"
        path: /x`, "the requester has no url_base or url (or it renders empty: check the testing values)"},
		{"request options that are not a mapping", `        url_base: https://api.test
        request_headers: "{{ config.region }}"`, "request_headers must be a mapping, got eu"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromRequester("data", requester(t, tt.yaml), NewScope(testVars, nil))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// compile compiles a template that may read config.
func compile(t *testing.T, src string) *template.Template {
	t.Helper()
	tp, err := template.Compile(src, []string{"config", "parameters", "next_page_token"})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestOptionInjectAndString(t *testing.T) {
	vars := map[string]any{"config": map[string]any{"name": "page_size"}}
	for _, tt := range []struct {
		opt    manifest.RequestOption
		value  any
		str    string
		expect built
	}{
		{manifest.RequestOption{InjectInto: manifest.InjectParameter, FieldName: compile(t, "{{ config.name }}")}, 25,
			`query parameter "page_size"`,
			built{Method: "POST", URL: "https://api.test/?page_size=25", Header: http.Header{}}},
		{manifest.RequestOption{InjectInto: manifest.InjectHeader, FieldName: compile(t, "X-Cursor")}, "c 2",
			`header "X-Cursor"`,
			built{Method: "POST", URL: "https://api.test/", Header: http.Header{"X-Cursor": {"c 2"}}}},
		{manifest.RequestOption{InjectInto: manifest.InjectBodyData, FieldName: compile(t, "page")}, 3,
			`form field "page"`,
			built{Method: "POST", URL: "https://api.test/", Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: "page=3"}},
		{manifest.RequestOption{InjectInto: manifest.InjectBodyJSON, FieldName: compile(t, "page")}, 3,
			`JSON body property "page"`,
			built{Method: "POST", URL: "https://api.test/", Header: http.Header{"Content-Type": {"application/json"}}, Body: `{"page":3}`}},
		{manifest.RequestOption{InjectInto: manifest.InjectBodyJSON, FieldPath: []*template.Template{compile(t, "paging"), compile(t, "{{ config.name }}")}}, 3,
			`JSON body property "paging.page_size"`,
			built{Method: "POST", URL: "https://api.test/", Header: http.Header{"Content-Type": {"application/json"}}, Body: `{"paging":{"page_size":3}}`}},
	} {
		o, err := NewOption(&tt.opt, vars)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.String(); got != tt.str {
			t.Errorf("String() = %s, want %s", got, tt.str)
		}
		b := New("data", "POST", "https://api.test/")
		if err := o.Inject(b, tt.value, "the paginator"); err != nil {
			t.Fatal(err)
		}
		if got := build(t, b); !reflect.DeepEqual(got, tt.expect) {
			t.Errorf("%s: built\n%+v\nwant\n%+v", tt.str, got, tt.expect)
		}
	}
	if o, err := NewOption(nil, vars); o != nil || err != nil {
		t.Errorf("NewOption(nil) = %v, %v", o, err)
	}
	path := &Option{Place: manifest.InjectPath}
	if got := path.String(); got != "the whole URL (RequestPath)" {
		t.Errorf("String() = %s", got)
	}
	if err := path.Inject(New("data", "GET", "https://api.test/"), "x", "the paginator"); err == nil ||
		err.Error() != `the paginator cannot inject into "path"` {
		t.Errorf("Inject into the path: %v", err)
	}
}

// A template that reads a secret registers with the redactor the part of its result that
// the secret determines; one that reads none of it, or reads only values that are not
// secret, registers nothing.
func TestScopeRegistersWhatSecretsDetermine(t *testing.T) {
	config := map[string]any{"user": "alice", "password": "pw-s3cret", "region": "eu-west", "start": "2024-03-01"}
	for _, tt := range []struct {
		name, src string
		secrets   []string
		wantValue string
		derived   int    // how many values the redactor learns
		printed   string // the result as the redactor prints it
	}{
		{"a Basic header computed from a secret", "Basic {{ (config.user ~ ':' ~ config.password) | base64encode }}", []string{"pw-s3cret"},
			"Basic YWxpY2U6cHctczNjcmV0", 1, "Basic ****"},
		// The part that differs is widened to its word, '=' included (base64 padding).
		{"a secret inside a URL", "https://api.test/{{ config.region }}/items?key={{ config.password }}&x=1", []string{"pw-s3cret"},
			"https://api.test/eu-west/items?key=pw-s3cret&x=1", 1, "https://api.test/eu-west/items?****&x=1"},
		{"a secret with a suffix", "{{ config.password }}-v2", []string{"pw-s3cret"},
			"pw-s3cret-v2", 1, "****"},
		{"only values that are not secret", "{{ config.region }}:{{ config.user }}", []string{"pw-s3cret"},
			"eu-west:alice", 0, "eu-west:alice"},
		{"a template that fails on the stand-in: the whole result", "{{ format_datetime(config.start, '%Y') }}", []string{"2024-03-01"},
			"2024", 1, "****"},
		{"no secret known", "Basic {{ (config.user ~ ':' ~ config.password) | base64encode }}", nil,
			"Basic YWxpY2U6cHctczNjcmV0", 0, "Basic YWxpY2U6cHctczNjcmV0"},
		{"a literal", "plain text", []string{"pw-s3cret"}, "plain text", 0, "plain text"},
		// None and booleans spell no secret: the word "None" of a missing value (amazon-ads:
		// a partition's missing time zone) was learned, and every "None" printed as ****.
		{"a None read from the testing values", "{{ config.get('absent') }}", []string{"pw-s3cret"},
			"None", 0, "None"},
		{"a boolean a secret decides", "{{ config.password == 'pw-s3cret' }}", []string{"pw-s3cret"},
			"True", 0, "True"},
		{"a None beside a derived value", "{{ {'tz': config.get('absent'), 'sig': config.password | upper} }}", []string{"pw-s3cret"},
			"{'sig': 'PW-S3CRET', 'tz': None}", 1, "{'sig': '****', 'tz': None}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &redact.Redactor{}
			r.Add(tt.secrets...)
			before := r.Len()
			s := NewScope(map[string]any{"config": config, "parameters": map[string]any{}}, r)
			got, err := s.Render(compile(t, tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantValue {
				t.Errorf("rendered %q, want %q", got, tt.wantValue)
			}
			if n := r.Len() - before; n != tt.derived {
				t.Errorf("the redactor learned %d values, want %d", n, tt.derived)
			}
			if p := r.String(got); p != tt.printed {
				t.Errorf("printed %q, want %q", p, tt.printed)
			}
		})
	}
}

// A request option tree that reads a secret registers each derived leaf, and a scope
// without a redactor evaluates all the same.
func TestScopeTracksTreesAndWorksWithoutARedactor(t *testing.T) {
	q := requester(t, `        url_base: https://api.test
        request_headers:
          Authorization: "Token {{ config.password | upper }}"
          X-User: "{{ config.user }}"
        request_body_json:
          auth: {sig: "{{ config.password ~ config.user }}", list: ["{{ config.password | lower }}x"]}`)
	config := map[string]any{"user": "alice", "password": "Pw-S3cret"}
	r := &redact.Redactor{}
	r.Add("Pw-S3cret")
	b, err := FromRequester("data", q, NewScope(map[string]any{"config": config}, r))
	if err != nil {
		t.Fatal(err)
	}
	got := build(t, b)
	want := built{Method: "GET", URL: "https://api.test",
		Header: http.Header{"Authorization": {"Token PW-S3CRET"}, "X-User": {"alice"}, "Content-Type": {"application/json"}},
		Body:   `{"auth":{"sig":"Pw-S3cretalice","list":["pw-s3cretx"]}}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("built\n%+v\nwant\n%+v", got, want)
	}
	printed := r.String(got.Header.Get("Authorization") + " " + got.Header.Get("X-User") + " " + got.Body)
	if wantPrinted := `Token **** alice {"auth":{"sig":"****","list":["****"]}}`; printed != wantPrinted {
		t.Errorf("printed %s\nwant    %s", printed, wantPrinted)
	}
	b2, err := FromRequester("data", q, NewScope(map[string]any{"config": config}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got2 := build(t, b2); !reflect.DeepEqual(got2, want) {
		t.Errorf("without a redactor: %+v", got2)
	}
	if strings.Contains(printed, "S3") {
		t.Errorf("a secret leaked: %s", printed)
	}
}

// A template whose value is a mapping or a list registers each leaf that a secret
// determines.
func TestScopeRegistersTheLeavesOfAStructuredValue(t *testing.T) {
	r := &redact.Redactor{}
	r.Add("pw-s3cret")
	s := NewScope(map[string]any{"config": map[string]any{"password": "pw-s3cret", "user": "alice"}}, r)
	v, err := s.Eval(compile(t, "{{ {'sig': config.password ~ '!', 'who': config.user, 'all': [config.password | upper, 'fixed']} }}"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := record.Marshal(jsonValue(v))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"all":["PW-S3CRET","fixed"],"sig":"pw-s3cret!","who":"alice"}`; string(body) != want {
		t.Fatalf("value %s, want %s", body, want)
	}
	if got, want := r.String(string(body)), `{"all":["****","fixed"],"sig":"****!","who":"alice"}`; got != want {
		t.Errorf("printed %s\nwant    %s", got, want)
	}
}

// Request option values keep the API's number spelling, and a mapping read from a response
// body (a lazily decoded object) has its keys in sorted order.
// The CDK reads each text of request_body_json as a Python literal when it is one (rollbar's
// "[{{ stream_partition['item_id'] }}]", square's '[ "ITEM" ]'). The body is the one CDK 7.28.2's
// InterpolatedNestedMapping gives for the same mapping and config:
// {"regions": ["eu", "us"], "types": ["ITEM"], "number_text": 123, "flag_text": true, "word": "open",
// "date": "2024-01-05", "status": "open", "counters": [7]}.
func TestBodyJSONReadsPythonLiterals(t *testing.T) {
	q := requester(t, `        url_base: https://api.test
        http_method: POST
        request_body_json:
          regions: "['{{ config.region }}', 'us']"
          types: '[ "ITEM" ]'
          number_text: "123"
          flag_text: "True"
          word: "open"
          date: "2024-01-05"
          status: "{{ config.filters.status }}"
          counters: "[{{ config.count }}]"
        request_parameters:
          counters: "[{{ config.count }}]"`)
	vars := map[string]any{"config": map[string]any{"region": "eu", "filters": map[string]any{"status": "open"}, "count": 7}}
	b, err := FromRequester("data", q, NewScope(vars, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := build(t, b)
	want := `{"regions":["eu","us"],"types":["ITEM"],"number_text":123,"flag_text":true,"word":"open","date":"2024-01-05","status":"open","counters":[7]}`
	if got.Body != want {
		t.Errorf("body %s\nwant %s", got.Body, want)
	}
	// Query parameters keep the text.
	if got.URL != "https://api.test?counters=%5B7%5D" {
		t.Errorf("url %s", got.URL)
	}
}

func TestRenderTreeValues(t *testing.T) {
	page, err := extract.Parse([]byte(`{"next":{"b":2,"a":1.50},"data":[]}`), []string{"data"}, extract.Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	q := requester(t, `        url_base: https://api.test
        http_method: POST
        request_body_json:
          exact: "{{ config.amount }}"
          int: "{{ config.count }}"
          float: "{{ config.ratio }}"
          flag: "{{ config.flag }}"
          next: "{{ config.page.next }}"
          page: "{{ config.page }}"
          list: "{{ [config.count, config.amount] }}"`)
	vars := map[string]any{
		"config": map[string]any{"amount": json.Number("1.50"), "count": 7, "ratio": 0.5, "flag": false, "page": page.Body},
	}
	s := NewScope(vars, nil)
	got, err := RenderTree(q.BodyJSON, s)
	if err != nil {
		t.Fatal(err)
	}
	body, err := record.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"exact":1.50,"int":7,"float":0.5,"flag":false,"next":{"a":1.50,"b":2},"page":{"data":[],"next":{"a":1.50,"b":2}},"list":[7,1.50]}`; string(body) != want {
		t.Errorf("body %s\nwant %s", body, want)
	}
}
