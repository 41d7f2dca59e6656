package extract

import (
	"bytes"
	"fmt"
	"testing"
)

// benchPage is a page like the ones internal/bench serves: 1000 records of about 350 bytes.
func benchPage(pretty bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"data":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		if pretty {
			b.WriteString("\n  ")
		}
		fmt.Fprintf(&b, `{"id":"%010d","name":"Customer %010d","email":"customer%010d@example.com","active":true,`+
			`"score":12345.678,"created_at":"2024-01-15T10:30:00Z","tags":["alpha","beta","gamma"],`+
			`"address":{"street":"123 Main Street","city":"Springfield","zip":"12345","country":"US"},`+
			`"balance":98765432109876543210,"notes":"lorem ipsum dolor sit amet \"quoted\" caf\u00e9"}`, i, i, i)
	}
	b.WriteString(`],"next":"c1000"}`)
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	for _, tt := range []struct {
		name   string
		pretty bool
		want   Want
		path   []string
	}{
		{"records", false, Want{}, []string{"data"}},
		{"pretty", true, Want{}, []string{"data"}},
		{"body", false, Want{Body: true}, []string{"data"}},
		{"values", false, Want{Values: true}, []string{"data"}},
		// A body that is a list of the records, read with an empty path and with a path
		// followed inside each element.
		{"toplevel", false, Want{}, nil},
		{"toplevel-path", false, Want{}, []string{"address"}},
	} {
		body := benchPage(tt.pretty)
		if tt.path == nil || tt.path[0] != "data" {
			body = body[len(`{"data":`) : len(body)-len(`,"next":"c1000"}`)]
		}
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(body, tt.path, tt.want); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
