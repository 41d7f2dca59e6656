package redact

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkPlaceholdersPage masks a page of 1,000 records as a recording does (the page of
// cmd's BenchmarkReadRecord).
func BenchmarkPlaceholdersPage(b *testing.B) {
	var r Redactor
	r.AddAs("api_token", "bench-token")
	var sb strings.Builder
	sb.WriteString(`{"data":[`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"name":"Customer %d","email":"customer%d@example.com","active":true,`+
			`"score":12345.678,"created_at":"2024-01-15T10:30:00Z","tags":["alpha","beta","gamma"],`+
			`"address":{"street":"123 Main Street","city":"Springfield","zip":"12345","country":"US"},`+
			`"balance":98765432109876543210,"notes":"lorem ipsum dolor sit amet"}`, i, i, i)
	}
	sb.WriteString(`],"next":"1000"}`)
	page := sb.String()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		r.Placeholders(page)
	}
}
