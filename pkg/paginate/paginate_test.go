package paginate

import (
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"connector/pkg/extract"
	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

var (
	sizeVars   = []string{"config", "parameters"}
	cursorVars = []string{"config", "parameters", "response", "headers", "last_records", "last_record",
		"last_page_size", "next_page_token", "stream_slice", "stream_partition", "stream_interval", "stream_state"}
)

func compile(t *testing.T, src string, vars []string) *template.Template {
	t.Helper()
	if src == "" {
		return nil
	}
	tm, err := template.Compile(src, vars)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return tm
}

// opt is a RequestOption written as "place:name" ("body_json:a.b" is a nested field_path,
// "path" a RequestPath); "" is no option.
func opt(t *testing.T, spec string) *manifest.RequestOption {
	t.Helper()
	if spec == "" {
		return nil
	}
	place, name, _ := strings.Cut(spec, ":")
	o := &manifest.RequestOption{InjectInto: place}
	switch {
	case place == manifest.InjectPath:
	case place == manifest.InjectBodyJSON && strings.Contains(name, "."):
		for _, seg := range strings.Split(name, ".") {
			o.FieldPath = append(o.FieldPath, compile(t, seg, sizeVars))
		}
	default:
		o.FieldName = compile(t, name, sizeVars)
	}
	return o
}

// spec describes a DefaultPaginator as a connector author writes it.
type spec struct {
	strategy       string
	pageSize       string
	startFromPage  int
	noFirstInject  bool
	cursor, stop   string
	token, sizeOpt string
}

func newPaginator(t *testing.T, s spec) *Paginator {
	t.Helper()
	m := &manifest.Paginator{
		Strategy: &manifest.Strategy{
			Type:                 s.strategy,
			PageSize:             compile(t, s.pageSize, sizeVars),
			StartFromPage:        s.startFromPage,
			InjectOnFirstRequest: !s.noFirstInject,
			CursorValue:          compile(t, s.cursor, cursorVars),
			StopCondition:        compile(t, s.stop, cursorVars),
		},
		PageTokenOption: opt(t, s.token),
		PageSizeOption:  opt(t, s.sizeOpt),
	}
	p, err := New(m, template.Globals{Config: map[string]any{"page_size": int64(3)}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// response is what the read loop hands the paginator after a page: the body parsed once by
// pkg/extract (records under "data"), the headers, the request URL.
func response(t *testing.T, body string, header http.Header, url string) Page {
	t.Helper()
	pg, err := extract.Parse([]byte(body), []string{"data"}, extract.Want{Body: true, Values: true})
	if err != nil {
		t.Fatal(err)
	}
	out := Page{Count: len(pg.Records), Body: pg.Body, URL: url, Headers: NewHeaders(header, url)}
	for _, r := range pg.Records {
		out.LastRecords = append(out.LastRecords, r.Value)
	}
	return out
}

func page(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = `{"id":"r` + string(rune('a'+i)) + `"}`
	}
	return `{"data":[` + strings.Join(parts, ",") + `]}`
}

func TestNextOffsetIncrement(t *testing.T) {
	tests := []struct {
		name      string
		pageSize  string
		token     any
		count     int
		wantStop  bool
		wantToken any
		why       Why
	}{
		{"full page asks for the next offset", "3", int64(0), 3, false, int64(3), FullPage},
		{"more than the limit advances by what was received", "3", int64(6), 5, false, int64(11), FullPage},
		{"short page stops", "3", int64(3), 2, true, nil, ShortPage},
		{"empty page stops", "3", int64(3), 0, true, nil, ShortPage},
		{"page size from the testing values", "{{ config['page_size'] }}", int64(0), 3, false, int64(3), FullPage},
		{"no limit: any records go on", "", int64(4), 1, false, int64(5), NonEmptyPage},
		{"no limit: empty page stops", "", int64(5), 0, true, nil, EmptyPage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPaginator(t, spec{strategy: manifest.OffsetIncrement, pageSize: tt.pageSize, token: "request_parameter:offset"})
			d, err := p.Next(tt.token, response(t, page(tt.count), nil, "http://api/x"))
			if err != nil {
				t.Fatal(err)
			}
			if d.Stop != tt.wantStop || d.Token != tt.wantToken || d.Why != tt.why {
				t.Errorf("got %+v, want stop=%v token=%v why %v", d, tt.wantStop, tt.wantToken, tt.why)
			}
		})
	}
}

func TestNextPageIncrement(t *testing.T) {
	tests := []struct {
		name      string
		pageSize  string
		token     any
		count     int
		wantStop  bool
		wantToken any
		why       Why
	}{
		{"full page asks for page + 1", "2", int64(1), 2, false, int64(2), FullPage},
		{"bigger page too", "2", int64(4), 3, false, int64(5), FullPage},
		{"short page stops", "2", int64(2), 1, true, nil, ShortPage},
		{"no page size: empty page stops", "", int64(2), 0, true, nil, EmptyPage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPaginator(t, spec{strategy: manifest.PageIncrement, pageSize: tt.pageSize, startFromPage: 1, token: "request_parameter:page"})
			d, err := p.Next(tt.token, response(t, page(tt.count), nil, "http://api/x"))
			if err != nil {
				t.Fatal(err)
			}
			if d.Stop != tt.wantStop || d.Token != tt.wantToken || d.Why != tt.why {
				t.Errorf("got %+v, want stop=%v token=%v why %v", d, tt.wantStop, tt.wantToken, tt.why)
			}
		})
	}
}

func TestInitial(t *testing.T) {
	for _, tt := range []struct {
		s    spec
		want any
	}{
		{spec{strategy: manifest.OffsetIncrement, pageSize: "10"}, int64(0)},
		{spec{strategy: manifest.PageIncrement, pageSize: "10"}, int64(0)},
		{spec{strategy: manifest.PageIncrement, pageSize: "10", startFromPage: 1}, int64(1)},
		{spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}"}, nil},
	} {
		if got := newPaginator(t, tt.s).Initial(); got != tt.want {
			t.Errorf("%s start %d: Initial() = %v, want %v", tt.s.strategy, tt.s.startFromPage, got, tt.want)
		}
	}
}

func TestNextCursor(t *testing.T) {
	link := http.Header{"Link": {`</items?page=3>; rel="next", <https://api.example.com/items?page=9>; rel="last"`}}
	tests := []struct {
		name      string
		cursor    string
		stop      string
		body      string
		header    http.Header
		wantStop  bool
		wantToken any
		why       Why
	}{
		{"nested body value", "{{ response.meta.next_cursor }}", "",
			`{"data":[{"id":1}],"meta":{"next_cursor":"c2"}}`, nil, false, "c2", CursorFound},
		{"null in the body stops", "{{ response.meta.next_cursor }}", "",
			`{"data":[{"id":1}],"meta":{"next_cursor":null}}`, nil, true, nil, NoCursor},
		{"missing parent stops", "{{ response.meta.next_cursor }}", "",
			`{"data":[{"id":1}]}`, nil, true, nil, NoCursor},
		{"empty string stops", "{{ response.next }}", "",
			`{"data":[],"next":""}`, nil, true, nil, NoCursor},
		{"empty mapping stops", "{{ response.next }}", "",
			`{"data":[],"next":{}}`, nil, true, nil, NoCursor},
		{"few records do not stop a cursor", "{{ response.next }}", "",
			`{"data":[],"next":"n"}`, nil, false, "n", CursorFound},
		{"header, any case", "{{ headers['x-next-cursor'] }}", "",
			`{"data":[{"id":1}]}`, http.Header{"X-Next-Cursor": {"h2"}}, false, "h2", CursorFound},
		{"absent header stops", "{{ headers['X-Next-Cursor'] }}", "",
			`{"data":[{"id":1}]}`, http.Header{}, true, nil, NoCursor},
		{"relative Link resolved against the request URL", "{{ headers.link.next.url }}", "",
			`{"data":[{"id":1}]}`, link, false, "https://api.example.com/items?page=3", CursorFound},
		{"no next link stops", "{{ headers.link.next.url }}", "",
			`{"data":[{"id":1}]}`, http.Header{"Link": {`<https://api.example.com/items?page=1>; rel="first"`}}, true, nil, NoCursor},
		{"no Link header stops", "{{ headers.link.next.url }}", "",
			`{"data":[{"id":1}]}`, nil, true, nil, NoCursor},
		{"last record's key", "{{ last_records[-1]['id'] }}", "",
			`{"data":[{"id":"a"},{"id":"b"}]}`, nil, false, "b", CursorFound},
		{"last record's key of an empty page stops", "{{ last_records[-1]['id'] }}", "",
			`{"data":[]}`, nil, true, nil, NoCursor},
		{"raw response key", "{{ response['data'][-1]['id'] }}", "",
			`{"data":[{"id":"a"},{"id":"z"}]}`, nil, false, "z", CursorFound},
		{"stop condition is checked first", "{{ response.next }}", "{{ response.has_more is false }}",
			`{"data":[{"id":1}],"next":"still-here","has_more":false}`, nil, true, nil, StopCondition},
		{"stop condition false, cursor used", "{{ response.next }}", "{{ response.has_more is false }}",
			`{"data":[{"id":1}],"next":"n2","has_more":true}`, nil, false, "n2", CursorFound},
		{"stop condition false, no cursor stops", "{{ response.next }}", "{{ response.has_more is false }}",
			`{"data":[{"id":1}],"has_more":true}`, nil, true, nil, NoCursor},
		// The CDK's InterpolatedBoolean: an undefined value ordered is its default, False; text
		// compared with a number is a TypeError, whose template text is true
		// (pkg/template/testdata/cdk-undefined).
		{"stop condition ordering a missing value is false", "{{ response.next }}", "{{ response.remaining < 1 }}",
			`{"data":[{"id":1}],"next":"n3"}`, nil, false, "n3", CursorFound},
		{"stop condition comparing text with a number is true", "{{ response.next }}", "{{ response.remaining < 1 }}",
			`{"data":[{"id":1}],"next":"n3","remaining":"none"}`, nil, true, nil, StopCondition},
		{"cursor value adding text and a number is its own text", "{{ response.next + 1 }}", "",
			`{"data":[{"id":1}],"next":"n"}`, nil, false, "{{ response.next + 1 }}", CursorFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPaginator(t, spec{strategy: manifest.CursorPagination, cursor: tt.cursor, stop: tt.stop, pageSize: "100", token: "request_parameter:cursor"})
			d, err := p.Next(nil, response(t, tt.body, tt.header, "https://api.example.com/items?page=2"))
			if err != nil {
				t.Fatal(err)
			}
			if d.Stop != tt.wantStop || d.Token != tt.wantToken || d.Why != tt.why {
				t.Errorf("got %+v, want stop=%v token=%v why %v", d, tt.wantStop, tt.wantToken, tt.why)
			}
		})
	}
}

func TestNoPagination(t *testing.T) {
	p, err := New(nil, template.Globals{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Enabled() || p.Initial() != nil || p.Describe() != "NoPagination" {
		t.Errorf("NoPagination paginator: enabled %v, initial %v, %q", p.Enabled(), p.Initial(), p.Describe())
	}
	d, err := p.Next(nil, response(t, page(3), nil, "http://api/x"))
	if err != nil || !d.Stop || d.Why != NotPaginated {
		t.Errorf("Next = %+v, %v", d, err)
	}
	b := request.New("data", "GET", "http://api/x?a=1")
	if err := p.Inject(b, nil, true, ""); err != nil {
		t.Fatal(err)
	}
	if got := built(t, b); got != "GET http://api/x?a=1" {
		t.Errorf("request %q", got)
	}
}

func TestNewRejectsBadStrategies(t *testing.T) {
	for src, want := range map[string]string{
		"0":    "page_size must be positive, got 0",
		"-5":   "page_size must be positive, got -5",
		"many": `page_size "many" is not an integer: 'many' is not an integer`,
	} {
		m := &manifest.Paginator{Strategy: &manifest.Strategy{Type: manifest.OffsetIncrement, PageSize: compile(t, src, sizeVars)}}
		_, err := New(m, template.Globals{})
		if err == nil || err.Error() != want {
			t.Errorf("page_size %q: error %v, want %q", src, err, want)
		}
	}
	_, err := New(&manifest.Paginator{Strategy: &manifest.Strategy{Type: manifest.CursorPagination}}, template.Globals{})
	if want := "CursorPagination needs a cursor_value"; err == nil || err.Error() != want {
		t.Errorf("cursor without cursor_value: error %v, want %q", err, want)
	}
}

// built renders a request as one line per part: "METHOD URL", then sorted headers, then the body.
func built(t *testing.T, b *request.Builder) string {
	t.Helper()
	req, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{req.Method + " " + req.URL}
	for _, k := range sortedKeys(req.Header) {
		lines = append(lines, k+": "+strings.Join(req.Header[k], ","))
	}
	if len(req.Body) > 0 {
		lines = append(lines, string(req.Body))
	}
	return strings.Join(lines, "\n")
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestInject(t *testing.T) {
	tests := []struct {
		name    string
		s       spec
		method  string
		url     string
		token   any
		first   bool
		prevURL string
		want    string
	}{
		{"offset 0 and limit in the query on the first request",
			spec{strategy: manifest.OffsetIncrement, pageSize: "3", token: "request_parameter:offset", sizeOpt: "request_parameter:limit"},
			"GET", "http://api/items", int64(0), true, "", "GET http://api/items?offset=0&limit=3"},
		{"inject_on_first_request false: no offset first",
			spec{strategy: manifest.OffsetIncrement, pageSize: "3", noFirstInject: true, token: "request_parameter:offset", sizeOpt: "request_parameter:limit"},
			"GET", "http://api/items", int64(0), true, "", "GET http://api/items?limit=3"},
		{"inject_on_first_request false: offset on later requests",
			spec{strategy: manifest.OffsetIncrement, pageSize: "3", noFirstInject: true, token: "request_parameter:offset", sizeOpt: "request_parameter:limit"},
			"GET", "http://api/items", int64(3), false, "http://api/items?limit=3", "GET http://api/items?offset=3&limit=3"},
		{"no page_size_option: the limit is not sent",
			spec{strategy: manifest.OffsetIncrement, pageSize: "3", token: "request_parameter:offset"},
			"GET", "http://api/items", int64(6), false, "", "GET http://api/items?offset=6"},
		{"start page in headers",
			spec{strategy: manifest.PageIncrement, pageSize: "25", startFromPage: 1, token: "header:X-Page", sizeOpt: "header:X-Per-Page"},
			"GET", "http://api/items", int64(1), true, "", "GET http://api/items\nX-Page: 1\nX-Per-Page: 25"},
		{"form body",
			spec{strategy: manifest.OffsetIncrement, pageSize: "3", token: "body_data:offset", sizeOpt: "body_data:limit"},
			"POST", "http://api/items", int64(3), false, "", "POST http://api/items\nContent-Type: application/x-www-form-urlencoded\noffset=3&limit=3"},
		{"JSON body keeps numbers as numbers",
			spec{strategy: manifest.PageIncrement, pageSize: "3", token: "body_json:page", sizeOpt: "body_json:per_page"},
			"POST", "http://api/items", int64(0), true, "", "POST http://api/items\nContent-Type: application/json\n{\"page\":0,\"per_page\":3}"},
		{"nested JSON body paths",
			spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", pageSize: "3", token: "body_json:page.cursor", sizeOpt: "body_json:page.size"},
			"POST", "http://api/items", "c2", false, "", "POST http://api/items\nContent-Type: application/json\n{\"page\":{\"cursor\":\"c2\",\"size\":3}}"},
		{"no cursor on the first request",
			spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", pageSize: "3", token: "request_parameter:cursor", sizeOpt: "request_parameter:limit"},
			"GET", "http://api/items", nil, true, "", "GET http://api/items?limit=3"},
		{"token and page size in one query parameter: the page size wins, as in the CDK",
			spec{strategy: manifest.OffsetIncrement, pageSize: "500", token: "request_parameter:offset", sizeOpt: "request_parameter:offset"},
			"GET", "http://api/items", int64(500), false, "", "GET http://api/items?offset=500"},
		{"… and in one header, whatever its case",
			spec{strategy: manifest.PageIncrement, pageSize: "25", token: "header:X-Page", sizeOpt: "header:x-page"},
			"GET", "http://api/items", int64(3), false, "", "GET http://api/items\nX-Page: 25"},
		{"… but without a page size the token is sent",
			spec{strategy: manifest.OffsetIncrement, token: "request_parameter:offset", sizeOpt: "request_parameter:offset"},
			"GET", "http://api/items", int64(7), false, "", "GET http://api/items?offset=7"},
		{"cursor page size never sent without page_size_option",
			spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", pageSize: "3", token: "request_parameter:cursor"},
			"GET", "http://api/items", "c2", false, "", "GET http://api/items?cursor=c2"},
		{"custom injection: the paginator adds nothing but the page size",
			spec{strategy: manifest.OffsetIncrement, pageSize: "3", sizeOpt: "request_parameter:limit"},
			"GET", "http://api/items", int64(3), false, "", "GET http://api/items?limit=3"},
		{"RequestPath: the cursor replaces the URL, its own query wins",
			spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", pageSize: "3", token: "path", sizeOpt: "request_parameter:limit"},
			"GET", "http://api/items", "https://other.example/v2/items?limit=50&after=x", false, "http://api/items?limit=3",
			"GET https://other.example/v2/items?limit=50&after=x"},
		{"RequestPath: missing keys are added",
			spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", pageSize: "3", token: "path", sizeOpt: "request_parameter:limit"},
			"GET", "http://api/items", "https://other.example/v2/items?after=x", false, "http://api/items?limit=3",
			"GET https://other.example/v2/items?after=x&limit=3"},
		{"RequestPath: relative to the previous request URL",
			spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", token: "path"},
			"GET", "http://api/v1/items", "?page=3", false, "http://api/v1/items?page=2",
			"GET http://api/v1/items?page=3"},
		{"RequestPath: absolute path reference",
			spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", token: "path"},
			"GET", "http://api/v1/items", "/v2/items?page=3", false, "http://api/v1/items?page=2",
			"GET http://api/v2/items?page=3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPaginator(t, tt.s)
			b := request.New("data", tt.method, tt.url)
			if err := p.Inject(b, tt.token, tt.first, tt.prevURL); err != nil {
				t.Fatal(err)
			}
			if got := built(t, b); got != tt.want {
				t.Errorf("request:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestInjectConflictNamesBothSources(t *testing.T) {
	p := newPaginator(t, spec{strategy: manifest.OffsetIncrement, pageSize: "3", token: "request_parameter:offset"})
	b := request.New("data", "GET", "http://api/items")
	if err := b.SetParam("offset", []string{"9"}, "the requester"); err != nil {
		t.Fatal(err)
	}
	err := p.Inject(b, int64(0), true, "")
	want := `request parameter "offset" is set by both the requester and the paginator; remove one of them`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestNextPageToken(t *testing.T) {
	if v := NextPageToken(true, int64(0)); v != nil {
		t.Errorf("first request: %v, want none", v)
	}
	v, ok := NextPageToken(false, "c2").(map[string]any)
	if !ok || v["next_page_token"] != "c2" || len(v) != 1 {
		t.Errorf("later request: %#v", v)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		s    spec
		want string
	}{
		{spec{strategy: manifest.OffsetIncrement, pageSize: "100", token: "request_parameter:offset", sizeOpt: "request_parameter:limit"},
			`OffsetIncrement limit 100; offset → query parameter "offset"; limit → query parameter "limit"`},
		{spec{strategy: manifest.OffsetIncrement, pageSize: "100", noFirstInject: true},
			`OffsetIncrement limit 100, no offset on the first request; offset → only through next_page_token in the requester's templates; limit not sent (no page_size_option)`},
		{spec{strategy: manifest.PageIncrement, pageSize: "25", startFromPage: 1, token: "header:X-Page", sizeOpt: "body_data:per_page"},
			`PageIncrement page_size 25, first page 1; page → header "X-Page"; page_size → form field "per_page"`},
		{spec{strategy: manifest.CursorPagination, cursor: "{{ headers.link.next.url }}", token: "path"},
			`CursorPagination, cursor from headers.link.next.url; cursor → the whole URL (RequestPath)`},
		{spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", stop: "{{ not response.more }}", token: "body_json:page.after", pageSize: "10", sizeOpt: "body_json:limit"},
			`CursorPagination page_size 10, cursor from response.next, stop when not response.more; cursor → JSON body property "page.after"; page_size → JSON body property "limit"`},
	}
	for _, tt := range tests {
		if got := newPaginator(t, tt.s).Describe(); got != tt.want {
			t.Errorf("Describe:\n got %s\nwant %s", got, tt.want)
		}
	}
}

// TestPredictorAgreesWithNext: what a read predicts from a count before deciding is exactly
// what Next decides, for every count around the page size, with and without a size.
func TestPredictorAgreesWithNext(t *testing.T) {
	for _, strategy := range []string{manifest.OffsetIncrement, manifest.PageIncrement} {
		for _, size := range []string{"3", ""} {
			p := newPaginator(t, spec{strategy: strategy, pageSize: size, token: "request_parameter:t"})
			pred := p.Predictor()
			if pred == nil {
				t.Fatalf("%s: no predictor", strategy)
			}
			for count := 0; count <= 7; count++ {
				d, err := p.Next(int64(10), Page{Count: count})
				if err != nil {
					t.Fatal(err)
				}
				next, more := pred.After(int64(10), count)
				if more == d.Stop || next != d.Token {
					t.Errorf("%s size %q count %d: predicted %v %v, decided %+v", strategy, size, count, next, more, d)
				}
			}
			spec, ok := pred.Speculate(int64(10))
			if size == "" && ok {
				t.Errorf("%s without a size speculates %v", strategy, spec)
			}
			if d, _ := p.Next(int64(10), Page{Count: 3}); size != "" && (!ok || spec != d.Token) {
				t.Errorf("%s: speculated %v, a full page gives %v", strategy, spec, d.Token)
			}
		}
	}
	if p := newPaginator(t, spec{strategy: manifest.CursorPagination, cursor: "{{ response.next }}", token: "request_parameter:c"}); p.Predictor() != nil {
		t.Error("a cursor has no predictor")
	}
}

func TestResponseIsWhatTheDecoderYieldsFirst(t *testing.T) {
	first := map[string]any{"num": 1}
	obj := map[string]any{"a": 1}
	for _, tt := range []struct {
		body, want any
	}{
		{[]any{first, map[string]any{"num": 2}}, first},
		{[]any{}, map[string]any{}},
		{[]any{"x"}, "x"},
		{obj, obj},
		{nil, nil},
	} {
		if got := Response(tt.body); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Response(%v) = %v, want %v", tt.body, got, tt.want)
		}
	}
}
