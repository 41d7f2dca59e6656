package cmd

import "testing"

// Seed, "States and transitions" (Offset Increment and Page Increment rows) and "Pagination
// request rules" 1, 2 and 4: the exact requests an API receives, page by page.

const pgOffsetPaginator = `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy: {type: OffsetIncrement, page_size: 2}
`

func TestPaginateOffsetIncrement(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		s         pgStream
		answers   []pgAnswer
		stdout    string
		requests  []string
		extraArgs []string
	}{
		{
			// rows "≥ limit → offset + records received" and "fewer than the limit → stop";
			// rule 1: offset 0 first, then previous offset + records received.
			name:    "full pages go on, a short page stops",
			s:       pgStream{paginator: pgOffsetPaginator},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 2), pgItems(5, 1)},
			stdout:  pgIDs(1, 2, 3, 4, 5),
			requests: []string{
				"GET /items?offset=0&limit=2",
				"GET /items?offset=2&limit=2",
				"GET /items?offset=4&limit=2",
			},
		},
		{
			name:    "an exactly full last page costs one more, empty, request",
			s:       pgStream{paginator: pgOffsetPaginator},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 2), pgItems(0, 0)},
			stdout:  pgIDs(1, 2, 3, 4),
			requests: []string{
				"GET /items?offset=0&limit=2",
				"GET /items?offset=2&limit=2",
				"GET /items?offset=4&limit=2",
			},
		},
		{
			name:    "more records than the limit advance the offset by what was received",
			s:       pgStream{paginator: pgOffsetPaginator},
			answers: []pgAnswer{pgItems(1, 3), pgItems(4, 1)},
			stdout:  pgIDs(1, 2, 3, 4),
			requests: []string{
				"GET /items?offset=0&limit=2",
				"GET /items?offset=3&limit=2",
			},
		},
		{
			name: "records are counted as extracted, before the record filter",
			s:    pgStream{paginator: pgOffsetPaginator, filter: "{{ record['id'] != 2 and record['id'] != 3 }}"},
			// page 1 keeps 1 of 2 records, page 2 keeps 1 of 2: the offset still moves by 2.
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 2), pgItems(5, 1)},
			stdout:  pgIDs(1, 4, 5),
			requests: []string{
				"GET /items?offset=0&limit=2",
				"GET /items?offset=2&limit=2",
				"GET /items?offset=4&limit=2",
			},
		},
		{
			name:    "a page whose records are all filtered out still counts",
			s:       pgStream{paginator: pgOffsetPaginator, filter: "{{ record['id'] > 2 }}"},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 1)},
			stdout:  pgIDs(3),
			requests: []string{
				"GET /items?offset=0&limit=2",
				"GET /items?offset=2&limit=2",
			},
		},
		{
			// rule 4: the limit is injected only when its injection is enabled.
			name: "no page_size_option: the limit is not sent but still decides",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
pagination_strategy: {type: OffsetIncrement, page_size: 2}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 1)},
			stdout:  pgIDs(1, 2, 3),
			requests: []string{
				"GET /items?offset=0",
				"GET /items?offset=2",
			},
		},
		{
			name: "inject_on_first_request: false leaves the offset out of the first request only",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy: {type: OffsetIncrement, page_size: 2, inject_on_first_request: false}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 1)},
			stdout:  pgIDs(1, 2, 3),
			requests: []string{
				"GET /items?limit=2",
				"GET /items?offset=2&limit=2",
			},
		},
		{
			name: "without a page_size the first empty page stops",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
pagination_strategy: {type: OffsetIncrement}
`},
			answers: []pgAnswer{pgItems(1, 3), pgItems(4, 1), pgItems(0, 0)},
			stdout:  pgIDs(1, 2, 3, 4),
			requests: []string{
				"GET /items?offset=0",
				"GET /items?offset=3",
				"GET /items?offset=4",
			},
		},
		{
			name: "page_size from the testing values",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
pagination_strategy: {type: OffsetIncrement, page_size: "{{ config['page_size'] }}"}
`},
			answers:   []pgAnswer{pgItems(1, 3), pgItems(4, 2)},
			stdout:    pgIDs(1, 2, 3, 4, 5),
			extraArgs: []string{"--set", "page_size=3"},
			requests: []string{
				"GET /items?offset=0&limit=3",
				"GET /items?offset=3&limit=3",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := pgAPI(t, tt.answers...)
			res := pgRun(t, api, pgDef(t, tt.s), tt.extraArgs...)
			pgExpect(t, res, api, tt.stdout, tt.requests)
		})
	}
}

func TestPaginatePageIncrement(t *testing.T) {
	t.Parallel()
	page := func(strategy string) pgStream {
		return pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
pagination_strategy: ` + strategy}
	}
	tests := []struct {
		name     string
		s        pgStream
		answers  []pgAnswer
		stdout   string
		requests []string
	}{
		{
			// rows "≥ page size → page + 1" and "fewer → stop"; rule 2: the start page first.
			name:    "starts from start_from_page and adds 1 per full page",
			s:       page("{type: PageIncrement, page_size: 2, start_from_page: 1}"),
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 2), pgItems(5, 1)},
			stdout:  pgIDs(1, 2, 3, 4, 5),
			requests: []string{
				"GET /items?page=1&per_page=2",
				"GET /items?page=2&per_page=2",
				"GET /items?page=3&per_page=2",
			},
		},
		{
			name:    "start_from_page defaults to 0; an exactly full last page costs an empty request",
			s:       page("{type: PageIncrement, page_size: 2}"),
			answers: []pgAnswer{pgItems(1, 2), pgItems(0, 0)},
			stdout:  pgIDs(1, 2),
			requests: []string{
				"GET /items?page=0&per_page=2",
				"GET /items?page=1&per_page=2",
			},
		},
		{
			name:    "a page larger than the page size goes on",
			s:       page("{type: PageIncrement, page_size: 2, start_from_page: 5}"),
			answers: []pgAnswer{pgItems(1, 3), pgItems(4, 1)},
			stdout:  pgIDs(1, 2, 3, 4),
			requests: []string{
				"GET /items?page=5&per_page=2",
				"GET /items?page=6&per_page=2",
			},
		},
		{
			name:    "inject_on_first_request: false",
			s:       page("{type: PageIncrement, page_size: 2, start_from_page: 1, inject_on_first_request: false}"),
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 0)},
			stdout:  pgIDs(1, 2),
			requests: []string{
				"GET /items?per_page=2",
				"GET /items?page=2&per_page=2",
			},
		},
		{
			// rule 4 for the page size.
			name: "no page_size_option: the page size is not sent",
			s: pgStream{paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
`},
			answers: []pgAnswer{pgItems(1, 2), pgItems(3, 1)},
			stdout:  pgIDs(1, 2, 3),
			requests: []string{
				"GET /items?page=1",
				"GET /items?page=2",
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

func TestPaginateNoPagination(t *testing.T) {
	t.Parallel()
	for name, pag := range map[string]string{
		"explicit NoPagination": "type: NoPagination",
		"no paginator":          "",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			api := pgAPI(t, pgItems(1, 100, `"next":"/items?page=2"`))
			def := pgDef(t, pgStream{paginator: pag, requester: "request_parameters: {limit: '100'}"})
			res := pgRun(t, api, def, "--format", "envelope")
			if res.Code != 0 {
				t.Fatalf("exit %d: %s", res.Code, res.Stderr)
			}
			if got := pgSent(api); got != "GET /items?limit=100" {
				t.Errorf("requests:\n%s", got)
			}
		})
	}
}
