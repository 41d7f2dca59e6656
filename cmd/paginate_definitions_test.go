package cmd

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// Every pagination example in definitions/ reads the whole collection of the demo API
// (250 records per stream) in the expected number of requests.
func TestPaginationDefinitionsReadTheDemoAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		streams  int
		requests int // data requests, all streams together
	}{
		{"offset-pagination.yaml", 1, 3},
		{"offset-header-pagination.yaml", 1, 6}, // 5 full pages of 50, then an empty one
		{"offset-body-data-pagination.yaml", 1, 3},
		{"page-pagination.yaml", 2, 6},
		{"header-pagination.yaml", 1, 3},
		{"cursor-body-pagination.yaml", 1, 3},
		{"cursor-body-json-pagination.yaml", 1, 3},
		{"cursor-header-pagination.yaml", 1, 3},
		{"has-more-pagination.yaml", 1, 3},
		{"start-after-pagination.yaml", 1, 3},
		{"link-header-pagination.yaml", 2, 6},
		{"next-url-pagination.yaml", 1, 3},
		{"custom-injection-pagination.yaml", 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			srv := demoapi.New(demoapi.Options{})
			ts := httptest.NewServer(srv)
			defer ts.Close()
			res := runCLI(t, "", "read", filepath.Join("..", "definitions", tt.file),
				"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url="+ts.URL)
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
			}
			if got, want := strings.Count(res.Stdout, "\n"), 250*tt.streams; got != want {
				t.Errorf("%d records, want %d", got, want)
			}
			if got := srv.Stats().DataRequests; got != tt.requests {
				t.Errorf("%d data requests, want %d", got, tt.requests)
			}
		})
	}
}

func TestNoPaginationDefinitionMakesOneRequest(t *testing.T) {
	t.Parallel()
	srv := demoapi.New(demoapi.Options{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	res := runCLI(t, "", "read", filepath.Join("..", "definitions", "no-pagination.yaml"),
		"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url="+ts.URL)
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if got := strings.Count(res.Stdout, "\n"); got != 25 {
		t.Errorf("%d records, want the 25 of the first page", got)
	}
	if got := srv.Stats().DataRequests; got != 1 {
		t.Errorf("%d data requests, want 1", got)
	}
}
