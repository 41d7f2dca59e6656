package transform

import (
	"slices"
	"testing"
)

// The expected values in this file come from running the Python library the CDK uses, dpath
// 2.x (with CDK 7.28.2's ALLOW_EMPTY_STRING_KEYS = True), and Python 3.11's fnmatchcase.

func TestFnmatchAsPython(t *testing.T) {
	names := []string{"abc", "", "a", "ab", "ac", "b", "x", "A", "é", "[", "[a", "a]", "]", "-", "!", "^", "\\", "*", "a*", "a.c", "a\nb"}
	// For each pattern, the names fnmatch.fnmatchcase accepts.
	tests := []struct {
		pat  string
		want []string
	}{
		{"*", []string{"abc", "", "a", "ab", "ac", "b", "x", "A", "é", "[", "[a", "a]", "]", "-", "!", "^", "\\", "*", "a*", "a.c", "a\nb"}},
		{"a*", []string{"abc", "a", "ab", "ac", "a]", "a*", "a.c", "a\nb"}},
		{"*c", []string{"abc", "ac", "a.c"}},
		{"?", []string{"a", "b", "x", "A", "é", "[", "]", "-", "!", "^", "\\", "*"}},
		{"??", []string{"ab", "ac", "[a", "a]", "a*"}},
		{"a?c", []string{"abc", "a.c"}},
		{"[a-c]", []string{"a", "b"}},
		{"[!x]", []string{"a", "b", "A", "é", "[", "]", "-", "!", "^", "\\", "*"}},
		{"[!a-c]", []string{"x", "A", "é", "[", "]", "-", "!", "^", "\\", "*"}},
		{"[", []string{"["}},
		{"[a", []string{"[a"}},
		{"a]", []string{"a]"}},
		{"[]]", []string{"]"}},
		{"[!]]", []string{"a", "b", "x", "A", "é", "[", "-", "!", "^", "\\", "*"}},
		{"[]a]", []string{"a", "]"}},
		{"[a-]", []string{"a", "-"}},
		{"[-a]", []string{"a", "-"}},
		{"[c-a]", []string{}},
		{"[!]", []string{}},
		{"[^a]", []string{"a", "^"}},
		{"[\\]", []string{"\\"}},
		{"*[b]*", []string{"abc", "ab", "b", "a\nb"}},
		{"[*]", []string{"*"}},
		{"a**", []string{"abc", "a", "ab", "ac", "a]", "a*", "a.c", "a\nb"}},
		{"", []string{""}},
		{"[é]", []string{"é"}},
		{"?*?", []string{"abc", "ab", "ac", "[a", "a]", "a*", "a.c", "a\nb"}},
		{"a[!b]c", []string{"a.c"}},
		{"a[b-b]", []string{"ab"}},
		{"[a-c-e]", []string{"a", "b", "-"}},
		{"[!!]", []string{"a", "b", "x", "A", "é", "[", "]", "-", "^", "\\", "*"}},
		{"[[]", []string{"["}},
		{"a?b", []string{"a\nb"}},
	}
	for _, tt := range tests {
		var got []string
		for _, n := range names {
			if fnmatch(n, tt.pat) {
				got = append(got, n)
			}
		}
		if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("fnmatch(_, %q) accepts %q; Python accepts %q", tt.pat, got, tt.want)
		}
	}
}

// TestMatchAsDpath: dpath.segments.match, with "**" standing for one segment less or any
// number more, list indices compared as numbers (a negative one counting from the end).
func TestMatchAsDpath(t *testing.T) {
	tests := []struct {
		path []step
		glob []string
		want bool
	}{
		{[]step{{key: "a"}}, []string{"a"}, true},
		{[]step{{key: "a"}}, []string{"*"}, true},
		{[]step{{key: "a"}, {key: "b"}}, []string{"*"}, false},
		{[]step{{key: "a"}, {key: "b"}}, []string{"**"}, true},
		{[]step{{key: "a"}}, []string{"**"}, true},
		{[]step{{key: "a"}, {key: "b"}, {key: "c"}}, []string{"a", "**"}, true},
		{[]step{{key: "a"}}, []string{"a", "**"}, true},
		{[]step{{key: "a"}, {key: "b"}, {key: "c"}}, []string{"**", "c"}, true},
		{[]step{{key: "c"}}, []string{"**", "c"}, true},
		{[]step{{key: "a"}, {key: "b"}, {key: "c"}, {key: "d"}}, []string{"a", "**", "d"}, true},
		{[]step{{key: "a"}, {key: "d"}}, []string{"a", "**", "d"}, true},
		{[]step{{key: "a"}, {key: "x"}, {key: "d"}}, []string{"a", "**", "d"}, true},
		{[]step{{key: "a"}, {key: "d"}}, []string{"a", "**", "x", "d"}, false},
		{[]step{{key: "a"}, {key: "b"}}, []string{"a", "**", "c", "d"}, false},
		{[]step{{key: "a"}, {index: 0, isIdx: true, n: 3}}, []string{"a", "0"}, true},
		{[]step{{key: "a"}, {index: 0, isIdx: true, n: 3}}, []string{"a", "*"}, true},
		{[]step{{key: "a"}, {index: 2, isIdx: true, n: 3}}, []string{"a", "-1"}, true},
		{[]step{{key: "a"}, {index: 0, isIdx: true, n: 3}}, []string{"a", "-3"}, true},
		{[]step{{key: "a"}, {index: 0, isIdx: true, n: 3}}, []string{"a", "-4"}, false},
		{[]step{{key: "a"}, {index: 1, isIdx: true, n: 3}}, []string{"a", "+1"}, true},
		{[]step{{key: "a"}, {index: 1, isIdx: true, n: 3}}, []string{" a", " 1 "}, false},
		{[]step{{key: "a"}, {index: 1, isIdx: true, n: 3}}, []string{"a", "01"}, true},
		{[]step{{key: "a"}, {index: 1, isIdx: true, n: 3}}, []string{"a", "[0-1]"}, true},
		{[]step{{key: "a"}, {index: 1, isIdx: true, n: 3}}, []string{"a", "?"}, true},
		{[]step{{key: "a"}, {index: 12, isIdx: true, n: 13}}, []string{"a", "1*"}, true},
		{[]step{{key: "a"}, {key: "0"}}, []string{"a", "0"}, true},
		{[]step{{key: "a"}, {key: "0"}}, []string{"a", "00"}, false},
		{[]step{{key: "a"}, {index: 0, isIdx: true, n: 3}}, []string{"a", "x"}, false},
		{[]step{{key: "a"}, {index: 1, isIdx: true, n: 3}}, []string{"a", "1_0"}, false},
	}
	for _, tt := range tests {
		if got := match(tt.path, tt.glob); got != tt.want {
			t.Errorf("match(%v, %q) = %v; dpath says %v", tt.path, tt.glob, got, tt.want)
		}
	}
}
