package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// definition is a one-stream connector with Bearer auth against the generator, paginating in
// the given mode (offset, page or cursor) with pageSize records per page.
func definition(mode string, pageSize int) string {
	var paginator string
	switch mode {
	case "offset":
		paginator = fmt.Sprintf(`
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy: {type: OffsetIncrement, page_size: %d}`, pageSize)
	case "page":
		paginator = fmt.Sprintf(`
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
        pagination_strategy: {type: PageIncrement, page_size: %d, start_from_page: 1}`, pageSize)
	case "cursor":
		paginator = fmt.Sprintf(`
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy:
          type: CursorPagination
          cursor_value: "{{ response.next }}"
          page_size: %d`, pageSize)
	}
	return fmt.Sprintf(`version: 6.5.0
type: DeclarativeSource
check:
  type: CheckStream
  stream_names: [items]
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /%s
        http_method: GET
        authenticator:
          type: BearerAuthenticator
          api_token: "{{ config['api_token'] }}"
      record_selector:
        type: RecordSelector
        extractor:
          type: DpathExtractor
          field_path: [data]
      paginator:
        type: DefaultPaginator%s
spec:
  type: Spec
  connection_specification:
    type: object
    $schema: http://json-schema.org/draft-07/schema#
    required: [base_url, api_token]
    properties:
      base_url: {type: string}
      api_token: {type: string, airbyte_secret: true}
`, mode, paginator)
}

// partitioned is a parent stream of `parents` records, 100 per page, and a child stream with
// one page per parent record (SubstreamPartitionRouter, the parent's id as a query
// parameter).
const partitioned = `version: 6.5.0
type: DeclarativeSource
definitions:
  requester:
    type: HttpRequester
    url_base: "{{ config['base_url'] }}"
    authenticator:
      type: BearerAuthenticator
      api_token: "{{ config['api_token'] }}"
  selector:
    type: RecordSelector
    extractor: {type: DpathExtractor, field_path: [data]}
  parents:
    type: DeclarativeStream
    name: parents
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /parents}
      record_selector: {$ref: "#/definitions/selector"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy: {type: OffsetIncrement, page_size: 100}
streams:
  - "#/definitions/parents"
  - type: DeclarativeStream
    name: children
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /children}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            stream: "#/definitions/parents"
            parent_key: id
            partition_field: parent_id
            request_option: {type: RequestOption, inject_into: request_parameter, field_name: parent}
`

// daily is one stream sliced by day (DatetimeBasedCursor, step P1D) over the generator's
// 365 days, the window in since and until, one page per slice.
const daily = `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: daily
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /daily
        authenticator:
          type: BearerAuthenticator
          api_token: "{{ config['api_token'] }}"
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2023-01-01T00:00:00Z"
      end_datetime: "2023-12-31T23:59:59Z"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
      end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}
`

// transformed is the offset definition with two AddFields (one from the record, one from
// the slice) and one RemoveFields on every record.
func transformed(pageSize int) string {
	return strings.Replace(definition("offset", pageSize), "    retriever:\n", `    transformations:
      - type: AddFields
        fields:
          - {type: AddedFieldDefinition, path: [contact], value: "{{ record.name }} <{{ record.email }}>"}
          - {type: AddedFieldDefinition, path: [partition], value: "{{ stream_slice.get('region', 'all') }}"}
      - type: RemoveFields
        field_pointers: [[email]]
    retriever:
`, 1)
}

// files writes the five definitions and a testing values file for base into dir.
func files(dir, base string, pageSize int) (defs map[string]string, values string, err error) {
	defs = map[string]string{}
	for _, mode := range []string{"offset", "page", "cursor", "partitioned", "daily", "transformed"} {
		path := filepath.Join(dir, mode+".yaml")
		var text string
		switch mode {
		case "transformed":
			text = transformed(pageSize)
		case "partitioned":
			text = partitioned
		case "daily":
			text = daily
		default:
			text = definition(mode, pageSize)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return nil, "", err
		}
		defs[mode] = path
	}
	values = filepath.Join(dir, "values-"+filepath.Base(base)+".yaml")
	text := fmt.Sprintf("base_url: %s\napi_token: %s\n", base, token)
	if err := os.WriteFile(values, []byte(text), 0o600); err != nil {
		return nil, "", err
	}
	return defs, values, nil
}
