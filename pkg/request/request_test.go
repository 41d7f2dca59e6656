package request

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

func TestJoinURL(t *testing.T) {
	for _, tt := range []struct{ base, path, want string }{
		{"https://api.test", "", "https://api.test"},
		{"https://api.test", "items", "https://api.test/items"},
		{"https://api.test/", "/items", "https://api.test/items"},
		{"https://api.test/v1//", "//items/", "https://api.test/v1/items/"},
		{"https://api.test/v1?key=a&x=1", "/items", "https://api.test/v1/items?key=a&x=1"},
		{"https://api.test/v1", "https://other.test/next?page=2", "https://other.test/next?page=2"},
		{"https://api.test/v1", "http://other.test", "http://other.test"},
		{"https://api.test/v1?key=a", "items?page=2", "https://api.test/v1/items?page=2&key=a"},
		// What the CDK 7.28.2 requests for the same url_base and path: Python's
		// urljoin(url_base.rstrip-less + "/", path.lstrip("/")), printed by python3.11.
		{"https://api.example.com", "items", "https://api.example.com/items"},
		{"https://api.example.com/", "/items", "https://api.example.com/items"},
		{"https://api.example.com/v1", "items", "https://api.example.com/v1/items"},
		{"https://api.example.com/v1/", "/items", "https://api.example.com/v1/items"},
		{"https://api.paperform.co//v1", "forms", "https://api.paperform.co/v1/forms"},
		{"https://api-ssl.bitly.com", "/v4/groups//g1/bitlinks", "https://api-ssl.bitly.com/v4/groups/g1/bitlinks"},
		{"https://x.com/api", "https://y.com/z", "https://y.com/z"},
		{"https://x.com/api", "//other.com/p", "https://x.com/api/other.com/p"},
		{"https://x.com/api", "", "https://x.com/api"},
		{"https://x.com/api/", "", "https://x.com/api/"},
		{"https://x.com/a/b", "../c", "https://x.com/a/c"},
		{"https://x.com/a/b", "./c/.", "https://x.com/a/b/c/"},
		{"https://x.com/a", "c/..", "https://x.com/a/"},
		{"https://x.com/a", "items?x=1&y=2", "https://x.com/a/items?x=1&y=2"},
		{"https://x.com/a", "?q=1", "https://x.com/a/?q=1"},
		{"https://x.com", "a/b/", "https://x.com/a/b/"},
		{"http://127.0.0.1:8787/v1/public", "books", "http://127.0.0.1:8787/v1/public/books"},
		{"https://x.com/a", "c/../../../d", "https://x.com/d"},
		{"https://x.com/a", "x:y", "x:y"},
		{"https://x.com/a", "http:relative", "http:relative"},
		{"https://x.com/a", "https:relative", "https://x.com/a/relative"},
		{"https://x.com/a", "items#frag", "https://x.com/a/items#frag"},
	} {
		if got := JoinURL(tt.base, tt.path); got != tt.want {
			t.Errorf("JoinURL(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

// built is what a test compares of a built request.
type built struct {
	Method, URL string
	Header      http.Header
	Body        string
	Secret      map[string]bool
}

func build(t *testing.T, b *Builder) built {
	t.Helper()
	req, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return built{req.Method, req.URL, req.Header, string(req.Body), req.Secret}
}

func TestBuild(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(b *Builder) error
		url   string
		want  built
	}{
		{
			name: "parameters in the order set, escaped, a list repeating its key",
			url:  "https://api.test/items",
			setup: func(b *Builder) error {
				return first(
					b.SetParam("q", []string{"a b&c=d/é"}, "the requester"),
					b.SetParam("id", []string{"1", "2"}, "the requester"),
					b.SetParam("limit", []string{"100"}, "the paginator"),
				)
			},
			want: built{Method: "GET", URL: "https://api.test/items?q=a+b%26c%3Dd%2F%C3%A9&id=1&id=2&limit=100", Header: http.Header{}},
		},
		{
			name: "parameters after the URL's own query; a key in both is sent twice",
			url:  "https://api.test/items?a=1&sort=asc",
			setup: func(b *Builder) error {
				return first(b.SetParam("sort", []string{"desc"}, "the requester"), b.SetParam("b", []string{"2"}, "the requester"))
			},
			want: built{Method: "GET", URL: "https://api.test/items?a=1&sort=asc&sort=desc&b=2", Header: http.Header{}},
		},
		{
			name: "KeepURLQuery: the URL's own key wins (RequestPath), the others are added",
			url:  "https://api.test/items?cursor=c2&limit=50",
			setup: func(b *Builder) error {
				b.KeepURLQuery = true
				return first(b.SetParam("limit", []string{"100"}, "the paginator"), b.SetParam("q", []string{"x"}, "the requester"))
			},
			want: built{Method: "GET", URL: "https://api.test/items?cursor=c2&limit=50&q=x", Header: http.Header{}},
		},
		{
			name: "KeepURLQuery with every key in the URL leaves it as it is",
			url:  "https://api.test/items?limit=50",
			setup: func(b *Builder) error {
				b.KeepURLQuery = true
				return b.SetParam("limit", []string{"100"}, "the paginator")
			},
			want: built{Method: "GET", URL: "https://api.test/items?limit=50", Header: http.Header{}},
		},
		{
			name: "headers; the authenticator's are marked secret",
			url:  "https://api.test/items",
			setup: func(b *Builder) error {
				return first(
					b.SetHeader("x-api-key", "k-123", "the authenticator"),
					b.SetHeader("Accept", "application/json", "the requester"),
				)
			},
			want: built{Method: "GET", URL: "https://api.test/items",
				Header: http.Header{"X-Api-Key": {"k-123"}, "Accept": {"application/json"}},
				Secret: map[string]bool{"X-Api-Key": true}},
		},
		{
			name: "a form body, escaped, a list repeating its key",
			url:  "https://api.test/token",
			setup: func(b *Builder) error {
				b.Method = "POST"
				return first(
					b.SetForm("grant_type", []string{"refresh_token"}, "the OAuth authenticator"),
					b.SetForm("scope", []string{"read write", "a&b"}, "the OAuth authenticator"),
				)
			},
			want: built{Method: "POST", URL: "https://api.test/token",
				Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
				Body:   "grant_type=refresh_token&scope=read+write&scope=a%26b"},
		},
		{
			name: "a Content-Type set by a header is kept",
			url:  "https://api.test/token",
			setup: func(b *Builder) error {
				return first(
					b.SetHeader("content-type", "application/x-www-form-urlencoded; charset=utf-8", "the requester"),
					b.SetForm("a", []string{"1"}, "the requester"),
				)
			},
			want: built{Method: "GET", URL: "https://api.test/token",
				Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"}},
				Body:   "a=1"},
		},
		{
			name: "a JSON body: keys in the order set, nested paths, numbers as spelled, no HTML escaping",
			url:  "https://api.test/search",
			setup: func(b *Builder) error {
				return first(
					b.SetJSON([]string{"query"}, "<a & b>", "the requester"),
					b.SetJSON([]string{"page", "size"}, 100, "the paginator"),
					b.SetJSON([]string{"amount"}, json.Number("1.50"), "the requester"),
					b.SetJSON([]string{"page", "after"}, json.Number("12345678901234567890"), "the paginator"),
					b.SetJSON([]string{"ratio"}, 0.25, "the requester"),
					b.SetJSON([]string{"big"}, 1e21, "the requester"),
					b.SetJSON([]string{"tags"}, []any{"x", true, nil}, "the requester"),
					b.SetJSON([]string{"filter"}, map[string]any{"z": 1, "a": "é"}, "the requester"),
				)
			},
			want: built{Method: "GET", URL: "https://api.test/search",
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   `{"query":"<a & b>","page":{"size":100,"after":12345678901234567890},"amount":1.50,"ratio":0.25,"big":1e+21,"tags":["x",true,null],"filter":{"a":"é","z":1}}`},
		},
		{
			name: "a nested path through a value that is not an object replaces it",
			url:  "https://api.test/search",
			setup: func(b *Builder) error {
				return first(
					b.SetJSON([]string{"page"}, "first", "the requester"),
					b.SetJSON([]string{"page", "size"}, 10, "the paginator"),
				)
			},
			want: built{Method: "GET", URL: "https://api.test/search",
				Header: http.Header{"Content-Type": {"application/json"}},
				Body:   `{"page":{"size":10}}`},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := New("data", "GET", tt.url)
			if err := tt.setup(b); err != nil {
				t.Fatal(err)
			}
			if got := build(t, b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("built\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// first returns the first error of a sequence of calls.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Two sources setting the same place is an error naming both, whatever the case of a header.
func TestConflictsNameBothSources(t *testing.T) {
	for _, tt := range []struct {
		name  string
		twice func(b *Builder) error
		want  string
	}{
		{"parameter", func(b *Builder) error {
			return first(b.SetParam("offset", []string{"0"}, "the requester"), b.SetParam("offset", []string{"10"}, "the paginator"))
		}, `request parameter "offset" is set by both the requester and the paginator; remove one of them`},
		{"header in another case", func(b *Builder) error {
			return first(b.SetHeader("Authorization", "Bearer x", "the authenticator"), b.SetHeader("authorization", "y", "the requester"))
		}, `header "authorization" is set by both the authenticator and the requester; remove one of them`},
		{"form field", func(b *Builder) error {
			return first(b.SetForm("page", []string{"1"}, "the requester"), b.SetForm("page", []string{"2"}, "the paginator"))
		}, `body_data field "page" is set by both the requester and the paginator; remove one of them`},
		{"nested JSON property", func(b *Builder) error {
			return first(b.SetJSON([]string{"page", "size"}, 1, "the requester"), b.SetJSON([]string{"page", "size"}, 2, "the paginator"))
		}, `body_json field "page.size" is set by both the requester and the paginator; remove one of them`},
		{"empty JSON path", func(b *Builder) error {
			return b.SetJSON(nil, 1, "the paginator")
		}, `empty body_json field path from the paginator`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.twice(New("data", "GET", "https://api.test/"))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
	// A parameter and a header of the same name are different places.
	b := New("data", "GET", "https://api.test/")
	if err := first(b.SetParam("page", []string{"1"}, "the requester"), b.SetHeader("page", "1", "the paginator"),
		b.SetForm("page", []string{"1"}, "the paginator")); err != nil {
		t.Errorf("different places: %v", err)
	}
	if !b.HasParam("page") || b.HasParam("Page") || b.HasParam("other") {
		t.Errorf("HasParam: page %v, Page %v, other %v", b.HasParam("page"), b.HasParam("Page"), b.HasParam("other"))
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		url   string
		setup func(b *Builder) error
		want  string
	}{
		{"no scheme", "api.test/items", nil, `invalid URL "api.test/items": no scheme (write http:// or https://)`},
		{"another scheme", "ftp://api.test/items", nil, `invalid URL "ftp://api.test/items": unsupported scheme "ftp" (only http and https)`},
		{"no host", "https:///items", nil, `invalid URL "https:///items": no host`},
		{"unparsable", "https://api.test:port/items", nil, `invalid URL "https://api.test:port/items": parse "https://api.test:port/items": invalid port ":port" after host`},
		{"a form and a JSON body", "https://api.test/", func(b *Builder) error {
			return first(b.SetForm("a", []string{"1"}, "the requester"), b.SetForm("b", []string{"2"}, "the requester"),
				b.SetJSON([]string{"c"}, 3, "the paginator"), b.SetJSON([]string{"d", "e"}, 4, "the paginator"))
		}, `the request has both body_data fields (a, b) and body_json properties (c, d); a body is either form-encoded or JSON`},
		{"a value JSON cannot hold", "https://api.test/", func(b *Builder) error {
			return b.SetJSON([]string{"c"}, make(chan int), "the requester")
		}, `cannot encode chan int as JSON: json: unsupported type: chan int`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := New("data", "GET", tt.url)
			if tt.setup != nil {
				if err := tt.setup(b); err != nil {
					t.Fatal(err)
				}
			}
			req, err := b.Build()
			if err == nil || err.Error() != tt.want {
				t.Errorf("Build() = %+v, %v\nwant error %s", req, err, tt.want)
			}
		})
	}
}
