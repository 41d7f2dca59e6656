package paginate

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseLink(t *testing.T) {
	base, _ := url.Parse("https://api.example.com/v1/items?page=2")
	tests := []struct {
		name   string
		values []string
		want   map[string]any
	}{
		{"GitHub style", []string{`<https://api.example.com/v1/items?page=3>; rel="next", <https://api.example.com/v1/items?page=9>; rel="last"`},
			map[string]any{
				"next": map[string]any{"url": "https://api.example.com/v1/items?page=3", "rel": "next"},
				"last": map[string]any{"url": "https://api.example.com/v1/items?page=9", "rel": "last"},
			}},
		{"relative references resolved against the request URL", []string{`</v1/items?page=3>; rel="next", <?page=1>; rel=first`},
			map[string]any{
				"next":  map[string]any{"url": "https://api.example.com/v1/items?page=3", "rel": "next"},
				"first": map[string]any{"url": "https://api.example.com/v1/items?page=1", "rel": "first"},
			}},
		{"several header lines", []string{`<a?p=3>; rel="next"`, `<a?p=1>; rel="prev"`},
			map[string]any{
				"next": map[string]any{"url": "https://api.example.com/v1/a?p=3", "rel": "next"},
				"prev": map[string]any{"url": "https://api.example.com/v1/a?p=1", "rel": "prev"},
			}},
		{"several relations in one link, relation case folded", []string{`<https://x.test/p2>; REL="Next Last"`},
			map[string]any{
				"next": map[string]any{"url": "https://x.test/p2", "rel": "Next Last"},
				"last": map[string]any{"url": "https://x.test/p2", "rel": "Next Last"},
			}},
		{"commas and semicolons inside the URL and quoted parameters", []string{`<https://x.test/p?ids=1,2;3>; rel="next"; title="a, b; c", <https://x.test/z>; rel="last"`},
			map[string]any{
				"next": map[string]any{"url": "https://x.test/p?ids=1,2;3", "rel": "next", "title": "a, b; c"},
				"last": map[string]any{"url": "https://x.test/z", "rel": "last"},
			}},
		{"escaped quote in a parameter", []string{`<https://x.test/2>; rel="next"; title="say \"hi\""`},
			map[string]any{"next": map[string]any{"url": "https://x.test/2", "rel": "next", "title": `say "hi"`}}},
		{"whitespace around everything", []string{`  < https://x.test/2 >  ;  rel = next  `},
			map[string]any{"next": map[string]any{"url": "https://x.test/2", "rel": "next"}}},
		{"first link of a relation wins", []string{`<https://x.test/a>; rel="next", <https://x.test/b>; rel="next"`},
			map[string]any{"next": map[string]any{"url": "https://x.test/a", "rel": "next"}}},
		{"a link without rel is listed under its URL", []string{`<https://x.test/a>`},
			map[string]any{"https://x.test/a": map[string]any{"url": "https://x.test/a"}}},
		{"malformed parts are skipped", []string{`garbage, <https://x.test/a; rel="next", <https://x.test/b>; rel="last", ; rel="x"`},
			map[string]any{"last": map[string]any{"url": "https://x.test/b", "rel": "last"}}},
		{"empty header", []string{""}, map[string]any{}},
		{"no header", nil, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseLink(tt.values, base)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLink(%q)\n got %#v\nwant %#v", tt.values, got, tt.want)
			}
		})
	}
}

func TestParseLinkWithoutBaseKeepsRelativeURLs(t *testing.T) {
	got := ParseLink([]string{`</items?page=2>; rel="next"`}, nil)
	next, _ := got["next"].(map[string]any)
	if next["url"] != "/items?page=2" {
		t.Errorf("next = %#v", got["next"])
	}
}

func TestHeadersGet(t *testing.T) {
	h := NewHeaders(http.Header{
		"X-Next-Cursor": {"c2", "ignored"},
		"Link":          {`</items?page=2>; rel="next"`},
		"weird_name":    {"w"}, // not canonical: as a server might send it
	}, "http://api.test/items?page=1")
	for key, want := range map[string]any{
		"X-Next-Cursor": "c2",
		"x-next-cursor": "c2",
		"WEIRD_NAME":    "w",
	} {
		if got, ok := h.Get(key); !ok || got != want {
			t.Errorf("Get(%q) = %v, %v; want %v", key, got, ok, want)
		}
	}
	if _, ok := h.Get("X-Missing"); ok {
		t.Error("Get(X-Missing) found a value")
	}
	link, ok := h.Get("link")
	next, _ := link.(map[string]any)["next"].(map[string]any)
	if !ok || next["url"] != "http://api.test/items?page=2" {
		t.Errorf("Get(link) = %#v", link)
	}
	if got := strings.Join(h.Keys(), ","); got != "Link,X-Next-Cursor,weird_name" {
		t.Errorf("Keys() = %s", got)
	}
	if _, ok := NewHeaders(http.Header{}, "http://api.test/").Get("Link"); ok {
		t.Error("Get(Link) without a Link header found a value")
	}
}

// FuzzParseLink: any header value parses without panicking, every entry has a url, and
// every relation listed is one the link declares.
func FuzzParseLink(f *testing.F) {
	for _, s := range []string{
		`<https://api.example.com/items?page=3>; rel="next", <https://api.example.com/items?page=9>; rel="last"`,
		`</items?page=2>; rel=next`,
		`<a>; rel="next prev"; title="x, y; z"`,
		`<a>; title="un\"terminated`,
		`<<a>>; rel=next,,<b`,
		`<%zz>; rel=next`,
		`<https://[::1`, "", ",", ";", `"`, `\`,
	} {
		f.Add(s)
	}
	base, _ := url.Parse("https://api.example.com/v1/items?page=2")
	f.Fuzz(func(t *testing.T, v string) {
		got := ParseLink([]string{v}, base)
		for key, e := range got {
			link, ok := e.(map[string]any)
			if !ok {
				t.Fatalf("entry %q is %T", key, e)
			}
			u, ok := link["url"].(string)
			if !ok {
				t.Fatalf("entry %q has no url: %#v", key, link)
			}
			rel, _ := link["rel"].(string)
			if rel == "" {
				if key != u {
					t.Fatalf("link without rel listed under %q, not its url %q", key, u)
				}
				continue
			}
			if !contains(strings.Fields(strings.ToLower(rel)), key) {
				t.Fatalf("entry %q is not one of the relations %q", key, rel)
			}
		}
		if utf8.ValidString(v) && !strings.Contains(v, "<") && len(got) != 0 {
			t.Fatalf("links found in %q, which has no <", v)
		}
	})
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
