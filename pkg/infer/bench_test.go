package infer

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"connector/pkg/record"
)

// benchRecords are n records shaped like an API's orders: scalars, nullable fields, a
// datetime, a nested customer, a list of line items, tags.
func benchRecords(n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		note := `null`
		if r.IntN(3) == 0 {
			note = `"leave at the door"`
		}
		discount := `null`
		if r.IntN(4) == 0 {
			discount = fmt.Sprintf("%.2f", r.Float64()*20)
		}
		items := ""
		for j := range 1 + r.IntN(4) {
			if j > 0 {
				items += ","
			}
			items += fmt.Sprintf(`{"sku":"SKU-%05d","quantity":%d,"unit_price":%.2f,"options":{"gift_wrap":%t,"size":%q}}`,
				r.IntN(99999), 1+r.IntN(5), r.Float64()*100, r.IntN(2) == 0, []string{"S", "M", "L"}[r.IntN(3)])
		}
		out[i] = fmt.Appendf(nil, `{"id":%d,"number":"ORD-%07d","status":%q,"total":%.2f,"currency":"EUR","discount":%s,`+
			`"created_at":"2024-%02d-%02dT%02d:%02d:%02dZ","updated_at":%d,"note":%s,`+
			`"customer":{"id":%d,"email":"c%d@example.com","name":"Customer %d","address":{"city":"Lyon","zip":"69001","country":"FR"}},`+
			`"line_items":[%s],"tags":["web","priority"],"paid":%t}`,
			i, i, []string{"open", "paid", "shipped"}[r.IntN(3)], r.Float64()*500, discount,
			1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), 1700000000+r.IntN(10000000), note,
			r.IntN(5000), i, i, items, r.IntN(2) == 0)
	}
	return out
}

// BenchmarkInferSchema infers the schema and the datetime formats of 10,000 records, each
// alone from records already decoded, and both from their JSON text (decoded as a read
// decodes it), as a test read does.
func BenchmarkInferSchema(b *testing.B) {
	raw := benchRecords(10_000)
	decoded := make([]any, len(raw))
	for i, text := range raw {
		decoded[i] = decode(b, string(text))
	}
	fromDecoded := func(i int) any { return decoded[i] }
	fromJSON := func(i int) any {
		v, err := record.Decode(raw[i])
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	run := func(b *testing.B, next func(i int) any, schema, formats bool) {
		b.ReportAllocs()
		for b.Loop() {
			s := NewSchemaInferrer([][]string{{"id"}}, [][]string{{"updated_at"}})
			var d DatetimeFormats
			for i := range raw {
				v := next(i)
				if schema {
					if err := s.Accumulate("orders", v); err != nil {
						b.Fatal(err)
					}
				}
				if formats {
					if err := d.Accumulate(v); err != nil {
						b.Fatal(err)
					}
				}
			}
			if schema {
				if _, problems, err := s.Schema("orders"); err != nil || problems != nil {
					b.Fatal(problems, err)
				}
			}
			if formats && d.Formats().Len() != 2 {
				b.Fatal(marshal(b, d.Formats()))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(raw)), "ns/record")
	}
	b.Run("schema", func(b *testing.B) { run(b, fromDecoded, true, false) })
	b.Run("datetime formats", func(b *testing.B) { run(b, fromDecoded, false, true) })
	b.Run("both from JSON", func(b *testing.B) { run(b, fromJSON, true, true) })
}
