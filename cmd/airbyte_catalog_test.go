package cmd

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// airbyte catalog writes the configured catalog that airbyte read takes: the streams of
// discover, incremental where asked and supported, and a read through it works.
func TestAirbyteCatalog(t *testing.T) {
	def := filepath.Join("..", "definitions", "incremental-datetime.yaml")
	res := runCLI(t, "", "airbyte", "catalog", def, "--incremental")
	want := `{
  "streams": [
    {
      "stream": {
        "name": "events",
        "json_schema": {},
        "supported_sync_modes": [
          "full_refresh",
          "incremental"
        ],
        "source_defined_cursor": true,
        "default_cursor_field": [
          "updated_at"
        ],
        "source_defined_primary_key": [
          [
            "id"
          ]
        ],
        "is_resumable": true,
        "is_file_based": false
      },
      "sync_mode": "incremental",
      "destination_sync_mode": "append_dedup",
      "cursor_field": [
        "updated_at"
      ],
      "primary_key": [
        [
          "id"
        ]
      ]
    }
  ]
}
`
	if res.Code != 0 || res.Stdout != want {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", res.Code, res.Stdout, want, res.Stderr)
	}
	full := runCLI(t, "", "airbyte", "catalog", "--manifest-path", def)
	if !strings.Contains(full.Stdout, `"sync_mode": "full_refresh",`) || !strings.Contains(full.Stdout, `"destination_sync_mode": "overwrite",`) || strings.Contains(full.Stdout, `"cursor_field"`) {
		t.Errorf("without --incremental:\n%s", full.Stdout)
	}

	demo := httptest.NewServer(demoapi.Handler(demoapi.Options{}))
	t.Cleanup(demo.Close)
	config := writeFile(t, "config.json", `{"base_url":"`+demo.URL+`","start_date":"2024-01-01T00:00:00Z","end_date":"2024-02-29T23:59:59Z"}`)
	catalog := writeFile(t, "catalog.json", res.Stdout)
	read := runCLI(t, "", "airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", catalog)
	if read.Code != 0 || !strings.Contains(read.Stdout, `"type":"RECORD"`) || !strings.Contains(read.Stdout, `"type":"STATE"`) {
		t.Errorf("airbyte read with the catalog: exit %d\n%.2000s\nstderr: %s", read.Code, read.Stdout, read.Stderr)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"airbyte", "catalog"}, 2, "error: airbyte catalog needs a definition: DEF or --manifest-path DEF\nRun 'connector airbyte catalog --help' for usage.\n"},
		{[]string{"airbyte", "catalog", def, "--stream", "evnts"}, 2, "error: unknown stream \"evnts\"; the definition has: events\n"},
	} {
		res := runCLI(t, "", tt.args...)
		if res.Code != tt.code || res.Stderr != tt.want {
			t.Errorf("%v: exit %d, stderr %q, want %d, %q", tt.args, res.Code, res.Stderr, tt.code, tt.want)
		}
	}
}
