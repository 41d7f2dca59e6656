package cmd

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchPages serves total records in pages of size, pre-rendered, with offset/limit, page
// and cursor parameters (the cursor is the offset as text; "next" is null on the last page).
func benchPages(b *testing.B, total, size int) *httptest.Server {
	b.Helper()
	var pages [][]byte
	for start := 0; start <= total; start += size {
		var sb strings.Builder
		sb.WriteString(`{"data":[`)
		for i := start; i < min(start+size, total); i++ {
			if i > start {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"id":%d,"name":"Customer %d","email":"customer%d@example.com","active":true,`+
				`"score":12345.678,"created_at":"2024-01-15T10:30:00Z","tags":["alpha","beta","gamma"],`+
				`"address":{"street":"123 Main Street","city":"Springfield","zip":"12345","country":"US"},`+
				`"balance":98765432109876543210,"notes":"lorem ipsum dolor sit amet"}`, i, i, i)
		}
		next := "null"
		if start+size < total {
			next = strconv.Quote(strconv.Itoa(start + size))
		}
		sb.WriteString(`],"next":` + next + `}`)
		pages = append(pages, []byte(sb.String()))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer bench-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		n, _ := strconv.Atoi(q.Get("offset") + q.Get("cursor"))
		if p := q.Get("page"); p != "" {
			k, _ := strconv.Atoi(p)
			n = (k - 1) * size
		}
		w.Write(pages[min(n/size, len(pages)-1)])
	}))
	b.Cleanup(srv.Close)
	return srv
}

// benchFile writes content to name in a fresh temporary folder.
func benchFile(b *testing.B, name, content string) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchDefinition(b *testing.B, paginator string) string {
	return benchFile(b, "def.yaml", `version: 6.5.0
streams:
  - name: items
`+benchTransformations[b.Name()]+`    retriever:
      requester:
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator: {type: BearerAuthenticator, api_token: "{{ config['api_token'] }}"}
      record_selector:
        extractor: {field_path: [data]}
      paginator:
        type: DefaultPaginator
`+paginator+`
spec:
  connection_specification:
    type: object
    properties:
      base_url: {type: string}
      api_token: {type: string, airbyte_secret: true}
`)
}

const (
	benchOffset = `        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy: {type: OffsetIncrement, page_size: 1000}`
	benchCursor = `        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", page_size: 1000}`
)

// benchmarkRead reads 100,000 records in pages of 1,000 in-process, output discarded:
//
//	go test ./cmd -run '^$' -bench BenchmarkRead -cpuprofile cpu.out
func benchmarkRead(b *testing.B, paginator string, extra ...string) {
	const total = 100_000
	srv := benchPages(b, total, 1000)
	def := benchDefinition(b, paginator)
	vals := benchFile(b, "values.yaml", "base_url: "+srv.URL+"\napi_token: bench-token\n")
	args := append([]string{"read", def, "--testing-values", vals}, extra...)
	b.SetBytes(int64(total * 330))
	b.ResetTimer()
	for b.Loop() {
		if code := Execute(context.Background(), args, Env{}); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

func BenchmarkReadOffset(b *testing.B) { benchmarkRead(b, benchOffset) }

func BenchmarkReadCursor(b *testing.B) { benchmarkRead(b, benchCursor) }

// BenchmarkReadRecord is BenchmarkReadOffset with every exchange recorded (--record): the
// same 100,000 records, 33 MB of bodies masked and written to a HAR file. The file goes to
// memory (/dev/shm) where there is one: the figure is what recording costs the read, not
// how fast the disk of the machine is at that moment.
func BenchmarkReadRecord(b *testing.B) {
	dir := b.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "connector-bench-"); err == nil {
		b.Cleanup(func() { os.RemoveAll(shm) })
		dir = shm
	}
	benchmarkRead(b, benchOffset, "--record", filepath.Join(dir, "rec.har"))
}

// benchTransformations are the transformations of a benchmark's stream, by its name.
var benchTransformations = map[string]string{
	"BenchmarkReadTransformed": `    transformations:
      - type: AddFields
        fields:
          - {type: AddedFieldDefinition, path: [contact], value: "{{ record.name }} <{{ record.email }}>"}
          - {type: AddedFieldDefinition, path: [partition], value: "{{ stream_slice.get('region', 'all') }}"}
      - type: RemoveFields
        field_pointers: [[email]]
`,
}

// BenchmarkReadTransformed is BenchmarkReadOffset with the transformations of `make
// bench`'s transformed row: two AddFields (from the record, from the slice), a RemoveFields.
func BenchmarkReadTransformed(b *testing.B) { benchmarkRead(b, benchOffset) }
