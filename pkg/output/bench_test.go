package output

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"connector/pkg/record"
)

// BenchmarkRecordOutput writes pages of 1,000 records of ~330 bytes, the API's bytes, in
// each format, to io.Discard: the fast path of a read without the read.
func BenchmarkRecordOutput(b *testing.B) {
	page := make([]record.Record, 1000)
	size := 0
	for i := range page {
		page[i].Raw = fmt.Appendf(nil, `{"id":%d,"name":"record %d","email":"user%d@example.com","tags":["a","b"],"pad":"%s","n":null}`, i, i, i, strings.Repeat("x", 200))
		size += len(page[i].Raw)
	}
	for _, format := range Formats {
		b.Run(format, func(b *testing.B) {
			out, err := NewRecordOutput(io.Discard, format, func() time.Time { return time.UnixMilli(1) })
			if err != nil {
				b.Fatal(err)
			}
			defer out.Close()
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := out.Records("books", page); err != nil {
					b.Fatal(err)
				}
				out.EndPage()
			}
		})
	}
}
