package decode

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"connector/pkg/manifest"
)

func gz(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func zipOf(t testing.TB, files ...string) string {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		f, err := w.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(files[i+1]))
	}
	w.Close()
	return b.String()
}

var (
	jsonl    = &manifest.Decoder{Type: manifest.JSONLDecoder}
	csvDec   = &manifest.Decoder{Type: manifest.CSVDecoder, Encoding: "utf-8", Delimiter: ','}
	xmlDec   = &manifest.Decoder{Type: manifest.XMLDecoder}
	iterable = &manifest.Decoder{Type: manifest.IterableDecoder}
)

func gzipOf(inner *manifest.Decoder) *manifest.Decoder {
	return &manifest.Decoder{Type: manifest.GzipDecoder, Inner: inner}
}

func zipped(inner *manifest.Decoder) *manifest.Decoder {
	return &manifest.Decoder{Type: manifest.ZipfileDecoder, Inner: inner}
}

// readAll decodes body and returns one value a line, or the error.
func readAll(m *manifest.Decoder, body string, limit int64) (string, error) {
	vs := New(m, limit, "--max-body").Open([]byte(body))
	var out []string
	for {
		v, err := vs.Next()
		if err == io.EOF {
			return strings.Join(out, "\n"), nil
		}
		if err != nil {
			return strings.Join(out, "\n"), err
		}
		out = append(out, string(v))
	}
}

// The CSV sample of the comparison with the CDK: quotes, doubled quotes, a line break in a
// quoted cell, CRLF line ends, a blank line, a short row, a long row, Python's lenient
// quotes (a"b, "ab"c) and an unterminated quote at the end.
const csvSample = "id,name,note,amount\r\n" +
	"1,Alice,\"has, comma\",10.5\r\n" +
	"2,Bob,\"say \"\"hi\"\"\",\r\n" +
	"\r\n" +
	"3,Zoë,\"multi\r\nline\",7\r\n" +
	"4,short\r\n" +
	"5,long,x,1,extra1,extra2\r\n" +
	"6, spaced ,a\"b,\"ab\"c\r\n" +
	"7,,,\n" +
	"8,last,\"unterminated"

// csvSampleCDK is what the Airbyte CDK 7.28.2 (CsvDecoder, run with run-cdk on the same body)
// emits for csvSample. Row 5's extra cells are under DictReader's None key, which the CDK
// writes as "null".
const csvSampleCDK = `{"id":"1","name":"Alice","note":"has, comma","amount":"10.5"}
{"id":"2","name":"Bob","note":"say \"hi\"","amount":""}
{"id":"3","name":"Zoë","note":"multi\nline","amount":"7"}
{"id":"4","name":"short","note":null,"amount":null}
{"id":"5","name":"long","note":"x","amount":"1","null":["extra1","extra2"]}
{"id":"6","name":" spaced ","note":"a\"b","amount":"abc"}
{"id":"7","name":"","note":"","amount":""}
{"id":"8","name":"last","note":"unterminated","amount":null}`

const xmlSample = `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<root xmlns:ns="http://example.com/ns" version="2">
  <location id="123">
      San Francisco
  </location>
  <item id="1" category="books">
    <name>Book Title 1</name>
    <price>10.99</price>
  </item>
  <item id="2" category="electronics">
    <name>Gadget &amp; Co</name>
    <price>299.99</price>
    <description><![CDATA[A <useful> gadget]]></description>
    <!-- inner comment -->
  </item>
  <empty/>
  <blank>   </blank>
  <ns:tagged ns:attr="v">t</ns:tagged>
  <mixed>before<b>bold</b>after</mixed>
  <single><item>only</item></single>
  <attrs_only a="1" b="2"/>
  <num>  42  </num>
</root>`

// xmlSampleCDK is the CDK 7.28.2's XmlDecoder (xmltodict) output for xmlSample.
const xmlSampleCDK = `{"root":{"@xmlns:ns":"http://example.com/ns","@version":"2","location":{"@id":"123","#text":"San Francisco"},"item":[{"@id":"1","@category":"books","name":"Book Title 1","price":"10.99"},{"@id":"2","@category":"electronics","name":"Gadget & Co","price":"299.99","description":"A <useful> gadget"}],"empty":null,"blank":null,"ns:tagged":{"@ns:attr":"v","#text":"t"},"mixed":{"b":"bold","#text":"beforeafter"},"single":{"item":"only"},"attrs_only":{"@a":"1","@b":"2"},"num":"42"}}`

// TestDecodeLikeTheCDK compares the values of each decoder with what the Airbyte CDK 7.28.2
// gives for the same body (recorded once with run-cdk; field_path [] so the values are the
// records). JSON lines are the lines as sent: the extractor reads them (see cmd's tests).
func TestDecodeLikeTheCDK(t *testing.T) {
	tests := []struct {
		name string
		dec  *manifest.Decoder
		body string
		want string
	}{
		{"csv", csvDec, csvSample, csvSampleCDK},
		{"csv with ; and set_values_to_none", &manifest.Decoder{Type: manifest.CSVDecoder, Encoding: "utf-8", Delimiter: ';', SetValuesToNone: []string{"", "NA"}},
			"a;b;c\nNA;;x\n1;NA;\n",
			`{"a":null,"b":null,"c":"x"}` + "\n" + `{"a":"1","b":null,"c":null}`},
		{"csv tab-delimited latin-1", &manifest.Decoder{Type: manifest.CSVDecoder, Encoding: "latin-1", Delimiter: '\t'},
			"col\tval\xe9\n\xff\t\xfc\n", `{"col":"ÿ","valé":"ü"}`},
		{"csv duplicate header, blank lines at the end", csvDec, "k,k,v\n1,2,3\n\n\n", `{"k":"2","v":"3"}`},
		{"csv utf-8 keeps a byte order mark", csvDec, "\ufeffid,x\n1,2\n", "{\"\ufeffid\":\"1\",\"x\":\"2\"}"},
		{"csv utf-8-sig drops it", &manifest.Decoder{Type: manifest.CSVDecoder, Encoding: "utf-8-sig", Delimiter: ','}, "\ufeffid,x\n1,2\n", `{"id":"1","x":"2"}`},
		{"csv header only", csvDec, "a,b\n", ""},
		{"csv empty", csvDec, "", ""},
		{"xml", xmlDec, xmlSample, xmlSampleCDK},
		{"iterable", iterable, "first line\n\nthird \xc3\xa9\r\nfourth\rfifth\n",
			`{"record":"first line"}` + "\n" + `{"record":""}` + "\n" + `{"record":"third é"}` + "\n" + `{"record":"fourth"}` + "\n" + `{"record":"fifth"}`},
		{"gzip of csv", gzipOf(csvDec), gz(t, csvSample), csvSampleCDK},
		{"gzip passes plain content through", gzipOf(csvDec), csvSample, csvSampleCDK},
		{"gzip of json", gzipOf(&manifest.Decoder{Type: manifest.JSONDecoder}), gz(t, `[{"id":1},{"id":2,"v":[1,2]}]`), `[{"id":1},{"id":2,"v":[1,2]}]`},
		{"zip of json lines, in the zip's order", zipped(jsonl), zipOf(t, "b.jsonl", "{\"f\":\"b\",\"n\":1}\n{\"f\":\"b\",\"n\":2}\n", "a.jsonl", "{\"f\":\"a\",\"n\":3}\n"),
			`{"f":"b","n":1}` + "\n" + `{"f":"b","n":2}` + "\n" + `{"f":"a","n":3}`},
		{"zip of csv", zipped(csvDec), zipOf(t, "one.csv", "x,y\n1,2\n", "two.csv", "x,y\n3,4\n5,6\n"),
			`{"x":"1","y":"2"}` + "\n" + `{"x":"3","y":"4"}` + "\n" + `{"x":"5","y":"6"}`},
		{"zip of gzip of csv", zipped(gzipOf(csvDec)), zipOf(t, "g.csv.gz", gz(t, "x,y\n7,8\n")), `{"x":"7","y":"8"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(tt.dec, tt.body, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestJSONLines checks that lines are split at "\n" only, blank lines are skipped, and a
// line of the body in memory is the body's own bytes.
func TestJSONLines(t *testing.T) {
	body := "{\"a\":1}\n\n  \r\n{\"b\":\"x\\u00e9\"}\r\n[1,2]"
	for _, m := range []*manifest.Decoder{jsonl, gzipOf(jsonl)} {
		in := body
		if m.Type == manifest.GzipDecoder {
			in = gz(t, body)
		}
		got, err := readAll(m, in, 1<<20)
		want := "{\"a\":1}\n{\"b\":\"x\\u00e9\"}\r\n[1,2]"
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", m.Type, got, err, want)
		}
	}
}

// TestDecodeErrors checks the errors of bodies a decoder cannot read, and of expansions
// beyond the limit.
func TestDecodeErrors(t *testing.T) {
	zeros := strings.Repeat("0\n", 3<<19)
	tests := []struct {
		name string
		dec  *manifest.Decoder
		body string
		want string
	}{
		{"gzip bomb", gzipOf(jsonl), gz(t, zeros), "line 524289: the gzip content expands to more than 1 MiB, the body limit (--max-body raises it)"},
		{"gzip bomb under csv", gzipOf(csvDec), gz(t, "a\n"+zeros), "line 524289: the gzip content expands to more than 1 MiB, the body limit (--max-body raises it)"},
		{"zip bomb over several files", zipped(jsonl), zipOf(t, "a", zeros[:600<<10], "b", zeros[:600<<10]), "file b of the zip, line 212993: the content of the zip expands to more than 1 MiB, the body limit (--max-body raises it)"},
		{"a truncated gzip stream", gzipOf(jsonl), gz(t, "{\"a\":1}\n{\"b\":2}\n")[:20], "line 2: the gzip content cannot be read: unexpected EOF"},
		{"not a zip", zipped(jsonl), "PK nope", "the body is not a zip file (zip: not a valid zip file)"},
		{"xml not closed", xmlDec, "<a><b>x</b>", "the body is not XML: <a> is not closed"},
		{"xml mismatched", xmlDec, "<a><b>x</c></a>", "the body is not XML: unexpected </c> at byte 7"},
		{"xml two roots", xmlDec, "<a/><b/>", "the body is not XML: a second root element <b> at byte 4"},
		{"xml empty", xmlDec, " ", "the body is not XML: no element found"},
		{"xml html", xmlDec, "<!DOCTYPE html><html><body>Please log in<br></body></html>", "the body is not XML: unexpected </body> at byte 44"},
		{"xml too deep", xmlDec, strings.Repeat("<a>", MaxXMLDepth+1), "XML nested deeper than 256 elements at byte 768, a limit of connector"},
		{"csv not utf-8", csvDec, "a,b\n1,\xff\n", "line 2: the text is not utf-8 (byte 6 cannot be decoded)"},
		{"csv field too long", csvDec, "a\n" + strings.Repeat("x", fieldLimit+1), "line 2: field larger than field limit (131072)"},
		{"iterable not utf-8", iterable, "ok\n\xff\n", "line 2: the line is not UTF-8 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(tt.dec, tt.body, 1<<20)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// FuzzDecode feeds every decoder arbitrary bodies: no panic, no hang.
func FuzzDecode(f *testing.F) {
	f.Add(csvSample)
	f.Add(xmlSample)
	f.Add("{\"a\":1}\n[2]\n")
	for _, m := range []*manifest.Decoder{jsonl, csvDec, xmlDec, iterable, gzipOf(csvDec), zipped(jsonl)} {
		f.Add(m.Type)
	}
	decs := []*manifest.Decoder{jsonl, csvDec, xmlDec, iterable, gzipOf(jsonl), zipped(csvDec),
		{Type: manifest.CSVDecoder, Encoding: "utf-16", Delimiter: ';'}}
	f.Fuzz(func(t *testing.T, body string) {
		for _, m := range decs {
			done := make(chan struct{})
			go func() {
				defer close(done)
				readAll(m, body, 1<<16)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic(fmt.Sprintf("%s hangs on %q", m.Type, body))
			}
		}
	})
}

// TestJSONItems reads the elements of the array at items_path as the CDK's JsonItemsParser
// does (ijson.items(body, items_path + ".item")): an ijson prefix is the keys from the root
// joined by dots, "item" for an array element; what is not on the way to the items is
// skipped; no array there, no values.
func TestJSONItems(t *testing.T) {
	items := func(path string) *manifest.Decoder {
		return &manifest.Decoder{Type: manifest.JSONItemsDecoder, ItemsPath: path, Encoding: "utf-8"}
	}
	for _, tt := range []struct {
		name string
		dec  *manifest.Decoder
		body string
		want string
	}{
		{"a nested array, numbers as sent", items("data.users"),
			`{"meta":{"n":2,"users":[9]},"data":{"users":[{"id":1,"x":1.50},{"id":2,"tags":["a",{"b":[]}]}],"other":[0]}}`,
			`{"id":1,"x":1.50}` + "\n" + `{"id":2,"tags":["a",{"b":[]}]}`},
		{"a top-level key; scalars and arrays are items too", items("rows"), `{"rows":[1,"two",null,[3,4],{"five":5}]}`,
			"1\n\"two\"\nnull\n[3,4]\n{\"five\":5}"},
		{"a member named item is an item too (ijson's prefixes)", items("data"), `{"data":{"item":{"id":7},"other":{"id":8}}}`, `{"id":7}`},
		{"arrays on the way are not entered: data.item.rows is another prefix", items("data.rows"), `{"data":[{"rows":[1,2]}]}`, ""},
		{"the path names an object", items("data"), `{"data":{"id":1}}`, ""},
		{"the path is not there", items("nope"), `{"data":[1,2]}`, ""},
		{"an empty array", items("data"), `{"data":[]}`, ""},
		{"a top-level array has no path to items", items("data"), `[{"data":[1]}]`, ""},
		{"latin-1 text", &manifest.Decoder{Type: manifest.JSONItemsDecoder, ItemsPath: "d", Encoding: "latin-1"}, "{\"d\":[\"caf\xe9\"]}", `"café"`},
		{"gzip of items", gzipOf(items("d")), gz(t, `{"d":[{"a":1},{"a":2}]}`), `{"a":1}` + "\n" + `{"a":2}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(tt.dec, tt.body, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("values\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	for _, tt := range []struct{ body, want string }{
		{`{"d":[{"a":1},`, "item 2: invalid JSON: unexpected end of body"},
		{`{"d":[{"a":1}`, "item 2: invalid JSON: unexpected end of body"},
		{`{"d":[1,}`, "item 2: invalid JSON: invalid character '}' looking for beginning of value"},
		{`<html>`, "item 1: invalid JSON: invalid character '<' looking for beginning of value"},
	} {
		if _, err := readAll(items("d"), tt.body, 1<<20); err == nil || err.Error() != tt.want {
			t.Errorf("%.40s: error %v, want %q", tt.body, err, tt.want)
		}
	}
	deep := `{"d":` + strings.Repeat(`{"d":`, 600) + `[1]` + strings.Repeat(`}`, 601)
	for _, tt := range []struct{ body, want string }{
		{deep, "item 1: JSON nested deeper than 512 levels, a limit of connector"},
	} {
		if _, err := readAll(items("d"+strings.Repeat(".d", 700)), tt.body, 1<<20); err == nil || err.Error() != tt.want {
			t.Errorf("%.40s: error %v, want %q", tt.body, err, tt.want)
		}
	}
}
