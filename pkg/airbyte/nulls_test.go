package airbyte

import (
	"encoding/json"
	"strings"
	"testing"
)

// The CDK's RECORD data: null members of the top-level object are left out, nested ones
// kept, everything else byte for byte.
func TestDropTopNulls(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":1,"b":2}`, `{"a":1,"b":2}`},
		{`{"a":null}`, `{}`},
		{`{"a":null,"b":1}`, `{"b":1}`},
		{`{"a":1,"b":null}`, `{"a":1}`},
		{`{"a":1,"b":null,"c":3}`, `{"a":1,"c":3}`},
		{`{"a":null,"b":null,"c":{"d":null},"e":[null]}`, `{"c":{"d":null},"e":[null]}`},
		{`{"null":"null","n":"a \"null\" b","x":nullx}`, `{"null":"null","n":"a \"null\" b","x":nullx}`},
		{`{"s":"}{\\","z":null,"o":{"p":"]"},"q":1.5e3}`, `{"s":"}{\\","o":{"p":"]"},"q":1.5e3}`},
		{`{ "a" : null , "b" : [1, {"c": null}] }`, `{"b" : [1, {"c": null}]}`},
		{`{"a":nul`, `{"a":nul`},
		{`[null]`, `[null]`},
		{`null`, `null`},
		{`{"a":"é","b":null,"c":true,"d":false}`, `{"a":"é","c":true,"d":false}`},
	}
	for _, tc := range cases {
		buf := []byte(tc.in)
		if got := string(dropTopNulls(buf)); got != tc.want {
			t.Errorf("dropTopNulls(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzDropTopNulls: for any JSON object, the result is valid JSON, equal to the input
// decoded with its top-level nulls deleted.
func FuzzDropTopNulls(f *testing.F) {
	for _, s := range []string{`{"a":null,"b":{"c":null},"d":[1,null]}`, `{}`, `{"x":"null"}`, `{"a" :null, "b":"\"}"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want map[string]any
		if json.Unmarshal([]byte(s), &want) != nil || want == nil || topKeys(s) != len(want) {
			return // not an object, or a key given twice (the last wins, null or not)
		}
		for k, v := range want {
			if v == nil {
				delete(want, k)
			}
		}
		out := dropTopNulls([]byte(s))
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("dropTopNulls(%q) = %q: %v", s, out, err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Fatalf("dropTopNulls(%q) = %q, want %s", s, out, b)
		}
	})
}

// topKeys counts the members of the top-level object of s.
func topKeys(s string) int {
	dec := json.NewDecoder(strings.NewReader(s))
	n, depth, key := 0, 0, true
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		switch tok.(type) {
		case json.Delim:
			switch tok {
			case json.Delim('{'), json.Delim('['):
				if depth == 1 {
					key = true
				}
				depth++
			default:
				depth--
				if depth == 1 {
					key = true
				}
			}
			continue
		}
		if depth == 1 {
			if key {
				n++
			}
			key = !key
		}
	}
}
