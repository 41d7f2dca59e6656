package cmd

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// endlessAPI always answers a full page of 2 records, for any offset.
func endlessAPI(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		fmt.Fprintf(w, `{"data":[{"id":%d},{"id":%d}]}`, off+1, off+2)
	})
}

func TestPaginateRepeatedTokenStopsWithAnError(t *testing.T) {
	t.Parallel()
	api := pgAPI(t,
		pgItems(1, 1, `"meta":{"next":"c1"}`),
		pgItems(2, 1, `"meta":{"next":"c2"}`),
		pgItems(3, 1, `"meta":{"next":"c2"}`),
	)
	def := pgDef(t, pgStream{paginator: cursorPaginator(`{type: CursorPagination, cursor_value: "{{ response.meta.next }}"}`)})
	res := pgRun(t, api, def)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", res.Code, res.Stderr)
	}
	want := `error: stream items, page 3: pagination token "c2" repeated: the API returned the same next-page token twice in a row; stopping instead of looping (3 records written before the failure)` + "\n"
	if res.Stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", res.Stderr, want)
	}
	if res.Stdout != pgIDs(1, 2, 3) {
		t.Errorf("stdout %q: the records read before the guard tripped must be written", res.Stdout)
	}
	if got := pgSent(api); got != "GET /items\nGET /items?cursor=c1\nGET /items?cursor=c2" {
		t.Errorf("requests:\n%s", got)
	}
}

func TestPaginateRepeatedNextURL(t *testing.T) {
	t.Parallel()
	api := pgAPI(t,
		pgItems(1, 1, `"next":"/items?page=2"`),
		pgItems(2, 1, `"next":"/items?page=2"`),
	)
	def := pgDef(t, pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestPath}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}
`})
	res := pgRun(t, api, def)
	if res.Code != 1 || !strings.Contains(res.Stderr, `pagination token "/items?page=2" repeated`) {
		t.Errorf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if got := pgSent(api); got != "GET /items\nGET /items?page=2" {
		t.Errorf("requests:\n%s", got)
	}
}

func TestPaginateLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		stdout   string
		stderr   string
		requests []string
	}{
		{
			args:     []string{"--max-pages", "2"},
			stdout:   pgIDs(1, 2, 3, 4),
			stderr:   "items: stopped early by --max-pages 2 after 4 records and 2 pages\n",
			requests: []string{"GET /items?offset=0&limit=2", "GET /items?offset=2&limit=2"},
		},
		{
			args:     []string{"--max-records", "3"},
			stdout:   pgIDs(1, 2, 3),
			stderr:   "items: stopped early by --max-records 3 after 3 records and 2 pages\n",
			requests: []string{"GET /items?offset=0&limit=2", "GET /items?offset=2&limit=2"},
		},
		{
			args:     []string{"--max-records", "2"},
			stdout:   pgIDs(1, 2),
			stderr:   "items: stopped early by --max-records 2 after 2 records and 1 page\n",
			requests: []string{"GET /items?offset=0&limit=2"},
		},
		{
			args:     []string{"--max-pages", "1", "--max-records", "5"},
			stdout:   pgIDs(1, 2),
			stderr:   "items: stopped early by --max-pages 1 after 2 records and 1 page\n",
			requests: []string{"GET /items?offset=0&limit=2"},
		},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			api := endlessAPI(t)
			res := pgRun(t, api, pgDef(t, pgStream{paginator: pgOffsetPaginator}), tt.args...)
			pgExpect(t, res, api, tt.stdout, tt.requests)
			if res.Stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", res.Stderr, tt.stderr)
			}
		})
	}
}

func TestPaginateLimitNotReportedWhenTheStreamEndsFirst(t *testing.T) {
	t.Parallel()
	api := pgAPI(t, pgItems(1, 2), pgItems(3, 1))
	res := pgRun(t, api, pgDef(t, pgStream{paginator: pgOffsetPaginator}), "--max-pages", "2")
	pgExpect(t, res, api, pgIDs(1, 2, 3), []string{"GET /items?offset=0&limit=2", "GET /items?offset=2&limit=2"})
	if res.Stderr != "" {
		t.Errorf("stderr %q: the stream ended by itself on its last allowed page", res.Stderr)
	}
}

func TestTraceMaxPagesSaysSoOnStderr(t *testing.T) {
	t.Parallel()
	api := endlessAPI(t)
	res := pgRun(t, api, pgDef(t, pgStream{paginator: pgOffsetPaginator}), "paginate-trace", "--max-pages", "1")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	if want := "items: stopped early by --max-pages 1 after 2 records and 1 page\n"; res.Stderr != want {
		t.Errorf("stderr %q, want %q", res.Stderr, want)
	}
	if !strings.Contains(res.Stdout, "    stop: --max-pages 1\n") {
		t.Errorf("stdout does not show the stop:\n%s", res.Stdout)
	}
}
