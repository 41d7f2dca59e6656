package request

import "testing"

// The URL of a request as Python's requests (urllib3's parser, then requote_uri) sends it,
// path and query; the expected texts are what requests 2.32 prepared for the same URLs.
func TestURLAsRequestsSendsIt(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://x.test/a/b", "https://x.test/a/b"},
		// calendly's path when its template failed: the CDK's request, as the API received it
		{`https://x.test/scheduled_events/{{ record['uri'] | regex_search("\/([a-zA-Z0-9-]*)$") }}/invitees`,
			`https://x.test/scheduled_events/%7B%7B%20record%5B'uri'%5D%20%7C%20regex_search(%22%5C/(%5Ba-zA-Z0-9-%5D*)$%22)%20%7D%7D/invitees`},
		{"https://x.test/a%2fb/%7euser/%41", "https://x.test/a%2Fb/~user/A"},
		{"https://x.test/50%/x", "https://x.test/50%25/x"},
		{"https://x.test/a%2F%zz", "https://x.test/a%252F%25zz"},
		{"https://x.test/é?q=é&r=[1]&s=a b&t=?/:", "https://x.test/%C3%A9?q=%C3%A9&r=%5B1%5D&s=a%20b&t=?/:"},
		{"https://x.test/(x)!*;,=+$&@:", "https://x.test/(x)!*;,=+$&@:"},
	} {
		b := New("data", "GET", tt.in)
		req, err := b.Build()
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if req.URL != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.in, req.URL, tt.want)
		}
	}
}
