package extract

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// countBoth runs Count with each way of counting (64-byte blocks when this machine has them,
// and bytes) and fails the test when they disagree.
func countBoth(t testing.TB, body []byte, path []string) (int, bool) {
	t.Helper()
	n, ok := Count(body, path)
	if useBlocks {
		saved := useBlocks
		useBlocks = false
		bn, bok := Count(body, path)
		useBlocks = saved
		if n != bn || ok != bok {
			t.Fatalf("Count(%q): blocks say %d, %v; bytes say %d, %v", body, n, ok, bn, bok)
		}
	}
	return n, ok
}

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		name string
		body string
		path []string
		n    int
		ok   bool
	}{
		{"top-level list", `[{"a":1},{"a":2},{"a":3}]`, nil, 3, true},
		{"empty list", ` [ ] `, nil, 0, true},
		{"one record", `{"data":[{"id":1}]}`, []string{"data"}, 1, true},
		{"scalars count too", `{"data":[1,"two",null,true,[3,4]]}`, []string{"data"}, 5, true},
		{"nested lists and objects", `{"data":[{"a":[1,2,{"b":[3]}]},[[],[{}]],{}]}`, []string{"data"}, 3, true},
		{"brackets and commas in strings", `{"data":[{"a":"x,]}{["},"[,]"]}`, []string{"data"}, 2, true},
		{"escaped quotes", `{"data":[{"a":"say \"hi\", ]"},{"b":"\\"},{"c":"\\\"]"}]}`, []string{"data"}, 3, true},
		{"whitespace", "{ \"data\" :\n [ {\"a\" : 1} ,\n\t{\"a\":2}\n ] }", []string{"data"}, 2, true},
		{"the path after other members", `{"meta":{"data":[1]},"x":[1,2,"]"],"y":"data","data":[1,2]}`, []string{"data"}, 2, true},
		{"members after the list", `{"data":[1,2],"next":[3,4,5]}`, []string{"data"}, 2, true},
		{"a deeper path", `{"a":{"b":[{"x":1},{"x":2}]}}`, []string{"a", "b"}, 2, true},
		{"a missing path", `{"other":[1]}`, []string{"data"}, 0, false},
		{"an object at the path", `{"data":{"id":1}}`, []string{"data"}, 0, false},
		{"null at the path", `{"data":null}`, []string{"data"}, 0, false},
		{"a wildcard", `{"data":[1]}`, []string{"*"}, 0, false},
		{"a body cut short", `{"data":[{"a":1},{"a":`, []string{"data"}, 0, false},
		{"a string never closed", `{"data":[{"a":"1]}`, []string{"data"}, 0, false},
		{"empty", ``, nil, 0, false},
		// A key written twice: Parse keeps the last value, as Python's json does.
		{"the key again after the list", `{"data":[1,2,3],"data":[4]}`, []string{"data"}, 0, false},
		{"the key again after other members", `{"data":[1],"x":{"data":[5]},"y":"data","data":null}`, []string{"data"}, 0, false},
		{"a key with escapes after the list", `{"data":[1],"d\u0061ta":[1,2]}`, []string{"data"}, 0, false},
		{"the list after a key with escapes", `{"d\u0061ta":[1,2],"data":[1]}`, []string{"data"}, 1, true},
		{"an outer key again", `{"a":{"b":[1,2]},"a":{"b":[3]}}`, []string{"a", "b"}, 0, false},
		{"other keys after, at every level", `{"a":{"b":[1,2],"c":[{"b":[]}]},"d":{"a":1}}`, []string{"a", "b"}, 2, true},
		{"too deep after the list", `{"data":[1],"x":` + arrays(MaxDepth) + `}`, []string{"data"}, 0, false},
		{"cut short after the list", `{"data":[1],"next":"c`, []string{"data"}, 0, false},
		{"no closing brace after the list", `{"data":[1]`, []string{"data"}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := countBoth(t, []byte(tt.body), tt.path)
			if n != tt.n || ok != tt.ok {
				t.Errorf("Count = %d, %v; want %d, %v", n, ok, tt.n, tt.ok)
			}
		})
	}
}

// Escapes, strings and brackets placed at every offset around the 64-byte block boundaries
// (and runs of backslashes crossing them) are counted as by the byte-at-a-time walk and by
// Parse.
func TestCountAcrossBlockBoundaries(t *testing.T) {
	elements := []string{
		`"\\"`, `"\\\\"`, `"\\\""`, `"a\"],[b"`, `{"k":"\\\\\\\"}"}`,
		`"` + strings.Repeat(`\\`, 40) + `"`, `"` + strings.Repeat(`\"`, 33) + `"`,
		`[1,[2,[3]]]`, `{"x":{"y":"}"}}`, `-1.5e3`, `null`,
	}
	for pad := range 140 {
		var b strings.Builder
		b.WriteString(`{"pad":"` + strings.Repeat("p", pad) + `","data":[`)
		for i, e := range elements {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(strings.Repeat(" ", i%3))
			b.WriteString(e)
		}
		b.WriteString(`],"after":[1,2]}`)
		body := []byte(b.String())
		page, err := Parse(body, []string{"data"}, Want{})
		if err != nil {
			t.Fatalf("pad %d: the test body is not valid: %v", pad, err)
		}
		n, ok := countBoth(t, body, []string{"data"})
		if !ok || n != len(page.Records) || n != len(elements) {
			t.Fatalf("pad %d: Count = %d, %v; Parse found %d records, want %d", pad, n, ok, len(page.Records), len(elements))
		}
	}
}

// FuzzCount: for any input that Parse accepts, the two ways of counting agree, a count is
// the number of records Parse finds, and when the input is a list of records at a path no
// key repeats, Count does count it, whether the list is the body or sits at a path. With a
// key of the path repeated, Count may only say it cannot tell. On other input Count's
// answer means nothing, but it must not fail.
func FuzzCount(f *testing.F) {
	for _, s := range []string{`[]`, `[1,2]`, `[{"a":"\\\""},[{}],"x,y"]`, `["` + strings.Repeat(`\\`, 70) + `"]`, `[{"a":[1,{"b":"]"}]}]`,
		arrays(MaxDepth - 1), arrays(MaxDepth), arrays(MaxDepth + 1), "[" + objects(MaxDepth-2) + "]", "[" + objects(MaxDepth-1) + "]",
		`[1,{"a":` + arrays(MaxDepth) + `}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tc := range []struct {
			body string
			path []string
			sure bool // a list at the path must be counted
		}{
			{s, nil, true},
			{`{"x":1,"data":` + s + `}`, []string{"data"}, true},
			{`{"data":` + s + `,"data":[1,2]}`, []string{"data"}, false},
			{`{"data":[1],"data":` + s + `}`, []string{"data"}, false},
			{`{"a":{"data":` + s + `},"a":{"data":[]},"z":` + s + `}`, []string{"a", "data"}, false},
		} {
			body := []byte(tc.body)
			page, err := Parse(body, tc.path, Want{})
			var de *DepthError
			if errors.As(err, &de) {
				// Everything before the level too many is valid JSON, which Count walks
				// as Parse does: it meets that level too and must not count.
				if n, ok := countBoth(t, body, tc.path); ok {
					t.Fatalf("Count(%q) = %d, true; Parse: %v", body, n, err)
				}
				continue
			}
			if err != nil {
				Count(body, tc.path)
				if useBlocks {
					useBlocks = false
					Count(body, tc.path)
					useBlocks = true
				}
				continue
			}
			n, ok := countBoth(t, body, tc.path)
			if ok && n != len(page.Records) {
				t.Fatalf("Count(%q) = %d, true; Parse found %d records", body, n, len(page.Records))
			}
			if !tc.sure || !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "[") {
				continue
			}
			if !ok {
				t.Fatalf("Count(%q) cannot tell; Parse found %d records", body, len(page.Records))
			}
		}
	})
}

func BenchmarkCount(b *testing.B) {
	body := benchPage(false)
	for _, blocks := range []bool{true, false} {
		if blocks && !useBlocks {
			continue
		}
		b.Run(fmt.Sprintf("blocks=%v", blocks), func(b *testing.B) {
			saved := useBlocks
			useBlocks = blocks
			defer func() { useBlocks = saved }()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if n, ok := Count(body, []string{"data"}); !ok || n != 1000 {
					b.Fatal(n, ok)
				}
			}
		})
	}
}
