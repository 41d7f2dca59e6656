package transform

import (
	"testing"

	"connector/pkg/extract"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// benchRecord is a typical API record: 20 keys, some nested.
var benchRecord = []byte(`{"id":1234567,"object":"invoice","account_country":"US","amount_due":1999,"amount_paid":1999,"amount_remaining":0,"attempt_count":1,"attempted":true,"billing_reason":"subscription_cycle","created":1704067200,"currency":"usd","customer":{"id":"cus_9s6XKzkNRiz8i3","email":"jenny@example.com","address":{"city":"Springfield","country":"US","line1":"742 Evergreen Terrace","postal_code":"49007"}},"description":null,"discounts":[],"lines":{"object":"list","data":[{"id":"il_1","amount":1999,"price":{"id":"price_1","unit_amount":1999}}],"has_more":false},"livemode":false,"metadata":{"order":"6735","channel":"web"},"paid":true,"period_end":1706745600,"status":"paid","total":19.99}`)

func benchChain(b *testing.B) (*Chain, map[string]any) {
	b.Helper()
	tmpl := func(s string) *template.Template {
		t, err := template.Compile(s, allVars)
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	c, err := New([]*manifest.Transformation{
		{Type: manifest.AddFields, Fields: []*manifest.AddedField{{Path: []string{"customer_id"}, Value: tmpl("{{ record.customer.id }}")}}},
		{Type: manifest.AddFields, Fields: []*manifest.AddedField{{Path: []string{"sync", "start"}, Value: tmpl("{{ stream_slice.start_time }}")}}},
		{Type: manifest.RemoveFields, FieldPointers: [][]string{{"customer", "address"}}},
	}, template.Globals{Config: map[string]any{}})
	if err != nil {
		b.Fatal(err)
	}
	return c, map[string]any{"config": map[string]any{}, "stream_slice": map[string]any{"start_time": "2024-01-01T00:00:00Z"}}
}

// BenchmarkApply is what a read does with each record of a stream with transformations:
// decode lazily (record.Shallow), two AddFields (from the record, from the slice) and a
// RemoveFields, encode.
func BenchmarkApply(b *testing.B) {
	c, vars := benchChain(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRecord)))
	for b.Loop() {
		o, ok := record.Shallow(benchRecord)
		if !ok {
			b.Fatal("not an object")
		}
		if err := c.Apply(o, vars); err != nil {
			b.Fatal(err)
		}
		if _, err := record.Marshal(o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShallowEncode is the lazy decode and the encode alone.
func BenchmarkShallowEncode(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRecord)))
	for b.Loop() {
		o, ok := record.Shallow(benchRecord)
		if !ok {
			b.Fatal("not an object")
		}
		if _, err := record.Marshal(o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEncode is the same record decoded and encoded with no transformation: the
// part of BenchmarkApply that any transformation costs.
func BenchmarkDecodeEncode(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRecord)))
	for b.Loop() {
		v, err := record.Decode(benchRecord)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := record.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

// readRowRecord is a record of `make bench`'s generator (internal/bench), about 300 bytes.
var readRowRecord = []byte(`{"id":"0000000042","name":"Customer 0000000042","email":"customer0000000042@example.com","active":true,` +
	`"score":12345.678,"created_at":"2024-01-15T10:30:00Z","tags":["alpha","beta","gamma"],` +
	`"address":{"street":"123 Main Street","city":"Springfield","zip":"12345","country":"US"},` +
	`"balance":98765432109876543210,"notes":"lorem ipsum dolor sit amet"}`)

// BenchmarkReadRow is the transformed row of `make bench` for one record: two AddFields
// (one from the record, one from the slice) and a RemoveFields, the record decoded lazily
// (record.Arena.ShallowAt, the members found by the page parser) and encoded as a read
// does, the chain applied as a Batch, as a page applies it.
func BenchmarkReadRow(b *testing.B) {
	tmpl := func(s string) *template.Template {
		t, err := template.Compile(s, allVars)
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	c, err := New([]*manifest.Transformation{
		{Type: manifest.AddFields, Fields: []*manifest.AddedField{
			{Path: []string{"contact"}, Value: tmpl("{{ record.name }} <{{ record.email }}>")},
			{Path: []string{"partition"}, Value: tmpl("{{ stream_slice.get('region', 'all') }}")},
		}},
		{Type: manifest.RemoveFields, FieldPointers: [][]string{{"email"}}},
	}, template.Globals{Config: map[string]any{}})
	if err != nil {
		b.Fatal(err)
	}
	batch := c.Batch(map[string]any{"config": map[string]any{}, "stream_slice": map[string]any{}})
	page, err := extract.Parse(append(append([]byte(`{"data":[`), readRowRecord...), "]}"...), []string{"data"}, extract.Want{Members: true})
	if err != nil || len(page.Records) != 1 || page.Records[0].Members == nil {
		b.Fatalf("the page parser gives %v, %v", page, err)
	}
	rec := page.Records[0]
	var arena record.Arena
	var out []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(readRowRecord)))
	n := 0
	for b.Loop() {
		if n++; n%1000 == 0 {
			arena.Reset() // a page of 1000 records is written
		}
		o, ok := arena.ShallowAt(rec.Raw, rec.Members)
		if !ok {
			b.Fatal("not an object")
		}
		if err := batch.Apply(o); err != nil {
			b.Fatal(err)
		}
		if out, err = (record.Record{Object: o}).AppendJSON(out[:0]); err != nil {
			b.Fatal(err)
		}
	}
	const want = `{"id":"0000000042","name":"Customer 0000000042","active":true,"score":12345.678,"created_at":"2024-01-15T10:30:00Z","tags":["alpha","beta","gamma"],"address":{"street":"123 Main Street","city":"Springfield","zip":"12345","country":"US"},"balance":98765432109876543210,"notes":"lorem ipsum dolor sit amet","contact":"Customer 0000000042 <customer0000000042@example.com>","partition":"all"}`
	if string(out) != want {
		b.Fatalf("got  %s\nwant %s", out, want)
	}
}
