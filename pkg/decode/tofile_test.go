package decode

import (
	"bytes"
	"compress/zlib"
	"strings"
	"testing"

	"connector/pkg/manifest"
)

var (
	toFile         = &manifest.Decoder{Type: manifest.ResponseToFile}
	toFilePreserve = &manifest.Decoder{Type: manifest.ResponseToFile, PreserveNA: true}
)

func zlibOf(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// TestResponseToFile pins what the CDK's ResponseToFileExtractor yields: its body
// handling (decompression, NUL bytes, UTF-8, Python's text-mode line ends) as read in its
// source, and pandas.read_csv(dialect="unix", dtype=object, keep_default_na=...) as pandas
// 2.2 documents it (the CDK's reference install has no pandas to run; see
// cmd/testdata/response-to-file-cdk/README.md).
func TestResponseToFile(t *testing.T) {
	tests := []struct {
		name string
		m    *manifest.Decoder
		body string
		want string
	}{
		{"every value is a string (dtype=object)", toFile, "id,price,ok\n1,9.10,true\n",
			`{"id":"1","price":"9.10","ok":"true"}`},
		{"empty cells and pandas' missing-value texts are null", toFile,
			"a,b,c,d,e,f\n,NA,null,N/A,NaN,x\nNone,nan,#N/A,<NA>,-1.#IND,NULL\n",
			`{"a":null,"b":null,"c":null,"d":null,"e":null,"f":"x"}` + "\n" +
				`{"a":null,"b":null,"c":null,"d":null,"e":null,"f":null}`},
		{"a missing-value text with a space, or in another case, is kept", toFile, "a,b,c\n NA,Na,NONE\n",
			`{"a":" NA","b":"Na","c":"NONE"}`},
		{"preserve_na_values keeps the texts, empty cells stay null", toFilePreserve, "a,b,c\nNA,,null\n",
			`{"a":"NA","b":null,"c":"null"}`},
		{"a quoted empty cell is missing too", toFile, "a,b\n\"\",x\n", `{"a":null,"b":"x"}`},
		{"quotes, doubled quotes, commas and line breaks inside quotes", toFile,
			"a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"two\r\nlines\",z\n",
			`{"a":"x, y","b":"say \"hi\""}` + "\n" + `{"a":"two\nlines","b":"z"}`},
		{"a quote inside an unquoted cell is a character; text after a closing quote is kept", toFile,
			"a,b\nab\"c,\"q\"r\n", `{"a":"ab\"c","b":"qr"}`},
		{"a short row is padded with nulls", toFile, "a,b,c\n1\n1,2,3\n",
			`{"a":"1","b":null,"c":null}` + "\n" + `{"a":"1","b":"2","c":"3"}`},
		{"blank lines and lines of spaces are skipped, spaces elsewhere kept", toFile,
			"\n\na, b\n\n  \t\n 1 ,2 \n\r\n",
			`{"a":" 1 "," b":"2 "}`},
		{"spaces before the first cell belong to it", toFile, "a,b\n  x,y\n", `{"a":"  x","b":"y"}`},
		{"unnamed and repeated columns are renamed as pandas does", toFile, "a,,a,a.1,a\n1,2,3,4,5\n",
			`{"a":"1","Unnamed: 1":"2","a.1":"3","a.1.1":"4","a.2":"5"}`},
		{"a first data row longer than the header makes the extra leading cells the index", toFile,
			"a,b\n0,1,2\n9,3,4\n", `{"a":"1","b":"2"}` + "\n" + `{"a":"3","b":"4"}`},
		{"a header alone is no records", toFile, "a,b\n", ``},
		{"an empty body is no records", toFile, "", ``},
		{"the last row needs no line end; a trailing comma is an empty cell", toFile, "a,b\n1,",
			`{"a":"1","b":null}`},
		{"old Mac line ends are line ends", toFile, "a,b\r1,2\r", `{"a":"1","b":"2"}`},
		{"a byte order mark is not part of the first name", toFile, "\ufeffa,b\n1,2\n", `{"a":"1","b":"2"}`},
		{"NUL bytes are dropped", toFile, "a,b\n1\x00,2\n", `{"a":"1","b":"2"}`},
		{"a gzip body is decompressed", toFile, gz(t, "a,b\n1,2\n"), `{"a":"1","b":"2"}`},
		{"only the first gzip member is read, as zlib's decompressor does", toFile,
			gz(t, "a,b\n1,2\n") + gz(t, "3,4\n"), `{"a":"1","b":"2"}`},
		{"a zlib body is decompressed", toFile, zlibOf(t, "a,b\n1,2\n"), `{"a":"1","b":"2"}`},
		{"unicode passes through", toFile, "name,city\nJosé,Zürich\n", `{"name":"José","city":"Zürich"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(tt.m, tt.body, 1<<20)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestResponseToFileErrors(t *testing.T) {
	tests := []struct {
		name, body string
		limit      int64
		want       string
	}{
		{"a row longer than the first", "a,b\n1,2\n1,2,3\n", 1 << 20,
			`line 3: 3 cells where 2 are expected (pandas refuses the row: "Expected 2 fields in line 3, saw 3")`},
		{"a quote never closed", "a,b\n\"1,2\n", 1 << 20,
			`line 2: the text ends inside a quoted cell (pandas: "EOF inside string starting at row …")`},
		{"text that is not UTF-8", "a,b\n\xff,2\n", 1 << 20,
			`line 2: the text is not utf-8-sig (byte 4 cannot be decoded)`},
		{"a gzip body cut short", gz(t, strings.Repeat("a,b\n1,2\n", 100))[:30], 1 << 20,
			`line 201: the gzip content cannot be read: unexpected EOF`},
		{"a gzip bomb", gz(t, "a\n"+strings.Repeat("1\n", 1<<20)), 1 << 16,
			`line 32769: the compressed content expands to more than 64 KiB, the body limit (--max-body raises it)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(toFile, tt.body, tt.limit)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %s", err, tt.want)
			}
		})
	}
}
