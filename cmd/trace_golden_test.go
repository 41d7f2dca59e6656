package cmd

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The paginate-trace output, text and JSON, pinned in testdata/trace/. The server's URL is
// replaced by http://API so the files do not depend on the port. Refresh with
// go test ./cmd -run TestTraceGolden -update
func TestTraceGolden(t *testing.T) {
	t.Parallel()
	apiKeyHeader := `
authenticator:
  type: ApiKeyAuthenticator
  api_token: "{{ config['api_key'] }}"
  inject_into: {type: RequestOption, inject_into: header, field_name: X-API-Key}
`
	tests := []struct {
		name    string
		s       pgStream
		answers []pgAnswer
		args    []string
	}{
		{
			name: "offset",
			s: pgStream{
				requester: apiKeyHeader,
				filter:    "{{ record['id'] != 2 }}",
				paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy: {type: OffsetIncrement, page_size: 2}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 2), pgItems(5, 1)},
		},
		{
			name: "offset-exactly-full",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: header, field_name: X-Offset}
page_size_option: {type: RequestOption, inject_into: header, field_name: X-Limit}
pagination_strategy: {type: OffsetIncrement, page_size: 2}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 0)},
		},
		{
			name: "page-body-data",
			s: pgStream{method: "POST", paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: body_data, field_name: page}
page_size_option: {type: RequestOption, inject_into: body_data, field_name: per_page}
pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 1)},
		},
		{
			name: "cursor-body-json",
			s: pgStream{method: "POST", paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: body_json, field_path: [page, cursor]}
page_size_option: {type: RequestOption, inject_into: body_json, field_path: [page, size]}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.meta.next_cursor }}", page_size: 2}
`},
			answers: []pgAnswer{pgItems(1, 2, `"meta":{"next_cursor":"Y3Vyc29yOjI"}`), pgItems(3, 1, `"meta":{}`)},
		},
		{
			name: "has-more",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: starting_after}
pagination_strategy:
  type: CursorPagination
  cursor_value: "{{ last_records[-1]['id'] }}"
  stop_condition: "{{ response.has_more is false }}"
`},
			answers: []pgAnswer{pgItems(1, 2, `"has_more":true`), pgItems(3, 1, `"has_more":false`)},
		},
		{
			name: "link-relative-max-pages",
			s: pgStream{fieldPath: "[]", requester: apiKeyHeader, paginator: `
type: DefaultPaginator
page_token_option: {type: RequestPath}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ headers.link.next.url }}", page_size: 2}
`},
			answers: []pgAnswer{
				{body: `[{"id":1},{"id":2}]`, header: map[string]string{"Link": `</items?page=2&per_page=2>; rel="next"`}},
				{body: `[{"id":3},{"id":4}]`, header: map[string]string{"Link": `</items?page=3&per_page=2>; rel="next"`}},
			},
			args: []string{"--max-pages", "2"},
		},
		{
			name: "repeated-token",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ headers['X-Next-Cursor'] }}"}
`},
			answers: []pgAnswer{
				{body: `{"data":[{"id":1}]}`, header: map[string]string{"X-Next-Cursor": "abc"}},
				{body: `{"data":[{"id":2}]}`, header: map[string]string{"X-Next-Cursor": "abc"}},
			},
		},
		{
			name: "custom-injection",
			s: pgStream{
				requester: `request_parameters: {range: "{{ next_page_token['next_page_token'] or '0' }},2"}`,
				paginator: `
type: DefaultPaginator
pagination_strategy: {type: OffsetIncrement, page_size: 2}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 1)},
		},
	}
	for _, tt := range tests {
		for _, format := range []string{"text", "json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				api := pgAPI(t, tt.answers...)
				args := append([]string{"paginate-trace", "--format", format}, tt.args...)
				res := pgRun(t, api, pgDef(t, tt.s), args...)
				// The definition's warnings (a line on stderr) are TestWarningsOnEveryCommand's.
				stderr := regexp.MustCompile(`(?m)^warning: .*\n`).ReplaceAllString(res.Stderr, "")
				got := fmt.Sprintf("%s--- stderr (exit %d) ---\n%s", res.Stdout, res.Code, stderr)
				got = strings.ReplaceAll(got, api.URL, "http://API")
				ext := ".txt"
				if format == "json" {
					ext = ".jsonl"
				}
				golden(t, "trace/"+tt.name+ext, got)
			})
		}
	}
}
