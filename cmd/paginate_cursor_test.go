package cmd

import "testing"

// Seed, "States and transitions" (Cursor rows) and "Pagination request rules" 3 and 4.

func cursorPaginator(strategy string) string {
	return `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy: ` + strategy
}

func TestPaginateCursor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		s        pgStream
		answers  []pgAnswer
		stdout   string
		requests []string
	}{
		{
			// "a value is found → injected into the next request"; "no value → stop";
			// rule 3: no cursor on the first request. A short page does not stop a cursor.
			name: "nested body value, null stops",
			s:    pgStream{paginator: cursorPaginator(`{type: CursorPagination, cursor_value: "{{ response.meta.next_cursor }}", page_size: 2}`)},
			answers: []pgAnswer{
				pgItems(1, 1, `"meta":{"next_cursor":"c2"}`),
				pgItems(2, 2, `"meta":{"next_cursor":"c3"}`),
				pgItems(4, 1, `"meta":{"next_cursor":null}`),
			},
			stdout: pgIDs(1, 2, 3, 4),
			requests: []string{
				"GET /items?limit=2",
				"GET /items?cursor=c2&limit=2",
				"GET /items?cursor=c3&limit=2",
			},
		},
		{
			name: "missing location stops",
			s:    pgStream{paginator: cursorPaginator(`{type: CursorPagination, cursor_value: "{{ response.meta.next_cursor }}", page_size: 2}`)},
			answers: []pgAnswer{
				pgItems(1, 2, `"meta":{"next_cursor":"c2"}`),
				pgItems(3, 2),
			},
			stdout:   pgIDs(1, 2, 3, 4),
			requests: []string{"GET /items?limit=2", "GET /items?cursor=c2&limit=2"},
		},
		{
			name: "empty string stops",
			s:    pgStream{paginator: cursorPaginator(`{type: CursorPagination, cursor_value: "{{ response.next }}"}`)},
			answers: []pgAnswer{
				pgItems(1, 1, `"next":"n2"`),
				pgItems(2, 1, `"next":""`),
			},
			stdout:   pgIDs(1, 2),
			requests: []string{"GET /items", "GET /items?cursor=n2"},
		},
		{
			// rule 4: page_size only through page_size_option.
			name: "page_size without page_size_option is not sent",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", page_size: 50}
`},
			answers: []pgAnswer{
				pgItems(1, 1, `"next":"n2"`),
				pgItems(2, 1, `"next":null`),
			},
			stdout:   pgIDs(1, 2),
			requests: []string{"GET /items", "GET /items?cursor=n2"},
		},
		{
			name: "response header, absent header stops",
			s:    pgStream{paginator: cursorPaginator(`{type: CursorPagination, cursor_value: "{{ headers['X-Next-Cursor'] }}", page_size: 2}`)},
			answers: []pgAnswer{
				{body: `{"data":[{"id":1},{"id":2}]}`, header: map[string]string{"X-Next-Cursor": "h2"}},
				{body: `{"data":[{"id":3}]}`, header: map[string]string{"x-next-cursor": "h3"}},
				{body: `{"data":[{"id":4}]}`},
			},
			stdout: pgIDs(1, 2, 3, 4),
			requests: []string{
				"GET /items?limit=2",
				"GET /items?cursor=h2&limit=2",
				"GET /items?cursor=h3&limit=2",
			},
		},
		{
			// "custom source: stop condition evaluates true → stop", checked before the cursor.
			name: "stop_condition is checked before the cursor",
			s:    pgStream{paginator: cursorPaginator(`{type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ response.has_more is false }}"}`)},
			answers: []pgAnswer{
				pgItems(1, 1, `"next":"n2","has_more":true`),
				pgItems(2, 1, `"next":"n3","has_more":false`),
			},
			stdout:   pgIDs(1, 2),
			requests: []string{"GET /items", "GET /items?cursor=n2"},
		},
		{
			name: "start-after: the last record's key",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: starting_after}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy:
  type: CursorPagination
  cursor_value: "{{ last_records[-1]['id'] }}"
  stop_condition: "{{ response.has_more is false }}"
  page_size: 2
`},
			answers: []pgAnswer{
				pgItems(1, 2, `"has_more":true`),
				pgItems(3, 2, `"has_more":true`),
				pgItems(5, 1, `"has_more":false`),
			},
			stdout: pgIDs(1, 2, 3, 4, 5),
			requests: []string{
				"GET /items?limit=2",
				"GET /items?starting_after=2&limit=2",
				"GET /items?starting_after=4&limit=2",
			},
		},
		{
			name: "start-after from the raw response, for a field the record selector dropped",
			s: pgStream{
				fieldPath: "[data, '*', attributes]",
				paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}
pagination_strategy:
  type: CursorPagination
  cursor_value: "{{ response['data'][-1]['key'] }}"
  stop_condition: "{{ not response.more }}"
`},
			answers: []pgAnswer{
				{body: `{"data":[{"key":"k1","attributes":{"id":1}},{"key":"k2","attributes":{"id":2}}],"more":true}`},
				{body: `{"data":[{"key":"k3","attributes":{"id":3}}],"more":false}`},
			},
			stdout:   pgIDs(1, 2, 3),
			requests: []string{"GET /items", "GET /items?after=k2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := pgAPI(t, tt.answers...)
			pgExpect(t, pgRun(t, api, pgDef(t, tt.s)), api, tt.stdout, tt.requests)
		})
	}
}

// Rule 3 with Inject into path: the cursor is a URL and replaces the whole next URL;
// relative references resolve against the previous request URL; the stream's parameters,
// the page size and the authenticator's parameters are added only where the new URL lacks
// the key.
func TestPaginateRequestPath(t *testing.T) {
	t.Parallel()
	linkPaginator := `
type: DefaultPaginator
page_token_option: {type: RequestPath}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ headers.link.next.url }}", page_size: 2}
`
	tests := []struct {
		name     string
		s        pgStream
		answers  []pgAnswer
		stdout   string
		requests []string
	}{
		{
			name: "Link header, absolute",
			s:    pgStream{paginator: linkPaginator, fieldPath: "[]"},
			answers: []pgAnswer{
				{body: `[{"id":1},{"id":2}]`, header: map[string]string{"Link": `<$API/items?page=2&per_page=2>; rel="next", <$API/items?page=3&per_page=2>; rel="last"`}},
				{body: `[{"id":3},{"id":4}]`, header: map[string]string{"Link": `<$API/items?page=3&per_page=2>; rel="next"`}},
				{body: `[{"id":5}]`, header: map[string]string{"Link": `<$API/items?page=1&per_page=2>; rel="first"`}},
			},
			stdout: pgIDs(1, 2, 3, 4, 5),
			requests: []string{
				"GET /items?per_page=2",
				"GET /items?page=2&per_page=2",
				"GET /items?page=3&per_page=2",
			},
		},
		{
			name: "Link header, relative references",
			s:    pgStream{paginator: linkPaginator, fieldPath: "[]", path: "/v1/items"},
			answers: []pgAnswer{
				{body: `[{"id":1},{"id":2}]`, header: map[string]string{"Link": `</v1/items?page=2>; rel="next"`}},
				{body: `[{"id":3},{"id":4}]`, header: map[string]string{"Link": `<?page=3>; rel="next"`}},
				{body: `[{"id":5}]`, header: map[string]string{"Link": `<items?page=4>; rel="prev"`}},
			},
			stdout: pgIDs(1, 2, 3, 4, 5),
			requests: []string{
				"GET /v1/items?per_page=2",
				"GET /v1/items?page=2&per_page=2",
				"GET /v1/items?page=3&per_page=2",
			},
		},
		{
			name: "next URL in the body: the URL's own parameters win, missing ones are added",
			s: pgStream{
				requester: `
request_parameters: {sort: asc, fields: id}
authenticator:
  type: ApiKeyAuthenticator
  api_token: "{{ config['api_key'] }}"
  inject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}
`,
				paginator: `
type: DefaultPaginator
page_token_option: {type: RequestPath}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", page_size: 2}
`},
			answers: []pgAnswer{
				pgItems(1, 2, `"next":"/items?cursor=abc&sort=desc&limit=50"`),
				pgItems(3, 2, `"next":"$API/other/items?page=3&api_key=from-the-api"`),
				pgItems(5, 2, `"next":null`),
			},
			stdout: pgIDs(1, 2, 3, 4, 5, 6),
			requests: []string{
				"GET /items?sort=asc&fields=id&api_key=secret-key-123&limit=2",
				"GET /items?cursor=abc&sort=desc&limit=50&fields=id&api_key=secret-key-123",
				"GET /other/items?page=3&api_key=from-the-api&sort=asc&fields=id&limit=2",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := pgAPI(t, tt.answers...)
			pgExpect(t, pgRun(t, api, pgDef(t, tt.s)), api, tt.stdout, tt.requests)
		})
	}
}
