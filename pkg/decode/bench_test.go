package decode

import (
	"connector/pkg/manifest"
	"fmt"
	"io"
	"strings"
	"testing"
)

func benchBody(rows int, csv bool) string {
	var b strings.Builder
	if csv {
		b.WriteString("id,name,email,score,active,note\n")
	}
	for i := 0; i < rows; i++ {
		if csv {
			fmt.Fprintf(&b, "%d,user %d,u%d@example.com,12.5,true,\"lorem, ipsum dolor sit amet consectetur\"\n", i, i, i)
		} else {
			fmt.Fprintf(&b, "{\"id\":%d,\"name\":\"user %d\",\"note\":\"lorem ipsum dolor sit amet consectetur\"}\n", i, i)
		}
	}
	return b.String()
}

func benchDecode(b *testing.B, m *manifest.Decoder, body string) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		vs := New(m, 1<<30, "--max-body").Open([]byte(body))
		for {
			if _, err := vs.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkCSV(b *testing.B)   { benchDecode(b, csvDec, benchBody(20000, true)) }
func BenchmarkJSONL(b *testing.B) { benchDecode(b, jsonl, benchBody(20000, false)) }
