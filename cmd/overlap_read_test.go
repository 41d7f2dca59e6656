package cmd

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A default read (no --prefetch) sends the next request of an offset or page-number
// pagination as soon as the page's records are counted, before the page is validated; it
// still sends exactly the requests, in the order, of a read that waits for each page.
func TestReadRequestsExactlyThePagesItNeeds(t *testing.T) {
	t.Parallel()
	const size = 3
	for _, tt := range []struct {
		name    string
		stream  pagedStream
		args    []string
		offsets []int // of the requests, in order
	}{
		{"empty first page", pagedStream{total: 0}, nil, []int{0}},
		{"one record", pagedStream{total: 1}, nil, []int{0}},
		{"exactly full last page", pagedStream{total: 3 * size}, nil, []int{0, 3, 6, 9}},
		{"short last page", pagedStream{total: 2*size + 1}, nil, []int{0, 3, 6}},
		{"short page in the middle", pagedStream{sizes: []int{3, 2, 3}}, nil, []int{0, 3}},
		{"more records than the limit", pagedStream{sizes: []int{4, 3, 1}}, nil, []int{0, 4, 7}},
		{"--max-records on a page boundary", pagedStream{total: 30}, []string{"--max-records", "6"}, []int{0, 3}},
		{"--max-records inside a page", pagedStream{total: 30}, []string{"--max-records", "7"}, []int{0, 3, 6}},
		{"--max-pages", pagedStream{total: 30}, []string{"--max-pages", "2"}, []int{0, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := pagedAPI(t, map[string]pagedStream{"items": tt.stream})
			def := pagedDefinition(t, api.URL, "offset", size, []string{"items"}, "")
			vals := writeFile(t, "values.yaml", "{}\n")
			res := runCLI(t, "", append([]string{"read", def, "--testing-values", vals}, tt.args...)...)
			if res.Code != 0 {
				t.Fatalf("exit %d: %s", res.Code, res.Stderr)
			}
			var got, want []string
			for _, r := range api.requests() {
				got = append(got, r.URL)
			}
			for _, o := range tt.offsets {
				want = append(want, fmt.Sprintf("/items?offset=%d&limit=%d", o, size))
			}
			if !slices.Equal(got, want) {
				t.Errorf("requests\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
