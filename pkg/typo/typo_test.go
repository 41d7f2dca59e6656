package typo

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"page_size", "page_size", 0},
		{"page_sise", "page_size", 1}, // a substitution
		{"pgae", "page", 1},           // a swap of neighbours
		{"color", "colour", 1},        // an insertion
		{"requester", "requestr", 1},  // a deletion
		{"", "abc", 3},
		{"abc", "", 3},
		{"café", "cafe", 1}, // runes, not bytes
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // the restricted swap: no edit inside a swapped pair
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}
