package cmd

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// The partition router examples in definitions/ read the demo API: the exact records (by
// id, in order) and the number of data requests. Checked against the CDK 7.28.2 (the two
// definitions as they are, --stream author_books, concurrency 1): the same records in the
// same order and the same requests, but for the first page's page=1 / offset=0 that the
// CDK leaves out.
func TestPartitionDefinitionsReadTheDemoAPI(t *testing.T) {
	var authorBooks []int // the books of authors 1 to 250 in author order
	for a := 1; a <= demoapi.DefaultRecords; a++ {
		authorBooks = append(authorBooks, demoapi.BooksOf(demoapi.DefaultRecords, a)...)
	}
	var authors []int
	for a := 1; a <= demoapi.DefaultRecords; a++ {
		authors = append(authors, a)
	}
	tests := []struct {
		file     string
		args     []string
		ids      []int
		requests int
	}{
		// Authors 4, 7 and 60: 3 pages of 2, 2 and 1 books each for the first two, one empty
		// page for the last.
		{"list-partition-router.yaml", nil, []int{1, 51, 101, 151, 201, 2, 52, 102, 152, 202}, 7},
		{"list-partition-router.yaml", []string{"--set-json", `author_ids=["60","5"]`}, demoapi.BooksOf(demoapi.DefaultRecords, 5), 4},
		// 3 pages of authors; 3 pages of books for each of authors 1 to 50, one empty page
		// for each of the 200 others.
		{"substream-partition-router.yaml", []string{"--stream", "author_books"}, authorBooks, 3 + 50*3 + 200},
		// authors read for its own records, then again for the partitions of author_books:
		// from the run's cache (authors is named as a parent), as the CDK does.
		{"substream-partition-router.yaml", nil, append(append([]int{}, authors...), authorBooks...), 3 + 50*3 + 200},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			srv := demoapi.New(demoapi.Options{})
			ts := httptest.NewServer(srv)
			defer ts.Close()
			args := append([]string{"read", filepath.Join("..", "definitions", tt.file),
				"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url=" + ts.URL}, tt.args...)
			res := runCLI(t, "", args...)
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
			}
			var got []int
			for _, line := range strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n") {
				var rec struct{ ID int }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("record %q: %v", line, err)
				}
				got = append(got, rec.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.ids) {
				t.Errorf("record ids %v\nwant %v", got, tt.ids)
			}
			if got := srv.Stats().DataRequests; got != tt.requests {
				t.Errorf("%d data requests, want %d", got, tt.requests)
			}
		})
	}
}
