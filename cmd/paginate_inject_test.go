package cmd

import (
	"strings"
	"testing"
)

// Each injection place of page_token_option and page_size_option (RequestPath is in
// paginate_cursor_test.go), and custom injection through next_page_token.
func TestPaginateInjectionPlaces(t *testing.T) {
	t.Parallel()
	offset := func(place, token, size string) string {
		return `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: ` + place + `, ` + token + `}
page_size_option: {type: RequestOption, inject_into: ` + place + `, ` + size + `}
pagination_strategy: {type: OffsetIncrement, page_size: 2}
`
	}
	tests := []struct {
		name     string
		s        pgStream
		headers  []string
		requests []string
	}{
		{
			name: "request_parameter",
			s:    pgStream{paginator: offset("request_parameter", "field_name: offset", "field_name: limit")},
			requests: []string{
				"GET /items?offset=0&limit=2",
				"GET /items?offset=2&limit=2",
			},
		},
		{
			name:    "header",
			s:       pgStream{paginator: offset("header", "field_name: X-Offset", "field_name: X-Limit")},
			headers: []string{"X-Offset", "X-Limit"},
			requests: []string{
				"GET /items | X-Offset: 0 | X-Limit: 2",
				"GET /items | X-Offset: 2 | X-Limit: 2",
			},
		},
		{
			name:    "body_data",
			s:       pgStream{method: "POST", paginator: offset("body_data", "field_name: offset", "field_name: limit")},
			headers: []string{"Content-Type"},
			requests: []string{
				"POST /items | Content-Type: application/x-www-form-urlencoded | body: offset=0&limit=2",
				"POST /items | Content-Type: application/x-www-form-urlencoded | body: offset=2&limit=2",
			},
		},
		{
			name:    "body_json, numbers stay numbers",
			s:       pgStream{method: "POST", paginator: offset("body_json", "field_name: offset", "field_name: limit")},
			headers: []string{"Content-Type"},
			requests: []string{
				`POST /items | Content-Type: application/json | body: {"offset":0,"limit":2}`,
				`POST /items | Content-Type: application/json | body: {"offset":2,"limit":2}`,
			},
		},
		{
			name: "body_json field_path, merged with the requester's body",
			s: pgStream{
				method:    "POST",
				requester: `request_body_json: {filter: active}`,
				paginator: offset("body_json", "field_path: [page, offset]", "field_path: [page, limit]"),
			},
			headers: []string{"Content-Type"},
			requests: []string{
				`POST /items | Content-Type: application/json | body: {"filter":"active","page":{"offset":0,"limit":2}}`,
				`POST /items | Content-Type: application/json | body: {"filter":"active","page":{"offset":2,"limit":2}}`,
			},
		},
		{
			name: "token and page size in different places",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: header, field_name: X-Page}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
`},
			headers: []string{"X-Page"},
			requests: []string{
				"GET /items?per_page=2 | X-Page: 1",
				"GET /items?per_page=2 | X-Page: 2",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := pgAPI(t, pgItems(1, 2), pgItems(3, 1))
			pgExpect(t, pgRun(t, api, pgDef(t, tt.s)), api, pgIDs(1, 2, 3), tt.requests, tt.headers...)
		})
	}
}

func TestPaginateCursorInjectionPlaces(t *testing.T) {
	t.Parallel()
	cursor := func(place, name string) string {
		return `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: ` + place + `, ` + name + `}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}
`
	}
	tests := []struct {
		name     string
		s        pgStream
		headers  []string
		requests []string
	}{
		{"header", pgStream{paginator: cursor("header", "field_name: X-Cursor")}, []string{"X-Cursor"},
			[]string{"GET /items", "GET /items | X-Cursor: c/2=?"}},
		{"request_parameter is query-escaped", pgStream{paginator: cursor("request_parameter", "field_name: cursor")}, nil,
			[]string{"GET /items", "GET /items?cursor=c%2F2%3D%3F"}},
		{"body_data", pgStream{method: "POST", paginator: cursor("body_data", "field_name: cursor")}, nil,
			[]string{"POST /items", "POST /items | body: cursor=c%2F2%3D%3F"}},
		{"body_json nested", pgStream{method: "POST", paginator: cursor("body_json", "field_path: [page, after]")}, nil,
			[]string{"POST /items", `POST /items | body: {"page":{"after":"c/2=?"}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := pgAPI(t, pgItems(1, 1, `"next":"c/2=?"`), pgItems(2, 1))
			pgExpect(t, pgRun(t, api, pgDef(t, tt.s)), api, pgIDs(1, 2), tt.requests, tt.headers...)
		})
	}
}

// Custom injection: no page_token_option; the token reaches the request only through
// next_page_token in the requester's templates (none on the first request).
func TestPaginateCustomInjection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		s        pgStream
		answers  []pgAnswer
		headers  []string
		requests []string
	}{
		{
			name: "combined offset and limit parameter (the seed's shape)",
			s: pgStream{
				requester: `request_parameters: {range: "{{ next_page_token['next_page_token'] or '0' }},2"}`,
				paginator: `
type: DefaultPaginator
pagination_strategy: {type: OffsetIncrement, page_size: 2}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 2), pgItems(5, 1)},
			requests: []string{
				"GET /items?range=0%2C2",
				"GET /items?range=2%2C2",
				"GET /items?range=4%2C2",
			},
		},
		{
			name: "cursor in the URL path, prefixed header, JSON body",
			s: pgStream{
				method: "POST",
				path:   "/items/{{ next_page_token['next_page_token'] or 'start' }}",
				requester: `
request_headers: {X-Continue: "{% if next_page_token %}token {{ next_page_token.next_page_token }}{% endif %}"}
request_body_json: {after: "{{ next_page_token['next_page_token'] }}", size: 2}
`,
				paginator: `
type: DefaultPaginator
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", page_size: 2}
`},
			answers: []pgAnswer{pgItems(1, 2, `"next":"n2"`), pgItems(3, 1, `"next":"n3"`), pgItems(4, 1)},
			headers: []string{"X-Continue"},
			requests: []string{
				`POST /items/start?limit=2 | body: {"size":2}`,
				`POST /items/n2?limit=2 | X-Continue: token n2 | body: {"after":"n2","size":2}`,
				`POST /items/n3?limit=2 | X-Continue: token n3 | body: {"after":"n3","size":2}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := pgAPI(t, tt.answers...)
			res := pgRun(t, api, pgDef(t, tt.s))
			if res.Code != 0 {
				t.Fatalf("exit %d: %s", res.Code, res.Stderr)
			}
			if got := pgSent(api, tt.headers...); got != strings.Join(tt.requests, "\n") {
				t.Errorf("requests:\n%s\nwant:\n%s", got, strings.Join(tt.requests, "\n"))
			}
		})
	}
}
