package infer

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
)

// testdata/cdk_table.jsonl holds random record sets and what the Airbyte CDK 7.28.2 makes of
// each: the schema of every stream (json.dumps of its dict, compact, ensure_ascii=False), the
// problems of its key paths or the exception that fails the read, and the datetime formats.
// It was written by a script kept outside the repository, with the CDK and genson 1.3.0:
//
//	PYTHONPATH=/work/cdkref/site:/work/cdkref/stubs:/work/cdkref/shims \
//	  python3 /work/cdkref-scripts/infer_table.py 240 > pkg/infer/testdata/cdk_table.jsonl
//
// Our output must be the same bytes.
type cdkCase struct {
	Name    string      `json:"name"`
	PK      [][]string  `json:"pk"`
	Cursor  [][]string  `json:"cursor"`
	Records [][2]string `json:"records"` // stream, JSON text
	Streams map[string]struct {
		Schema   string   `json:"schema"`
		Problems []string `json:"problems"`
		Error    string   `json:"error"`
	} `json:"streams"`
	DatetimeFormats string `json:"datetime_formats"`
}

func TestCDKTable(t *testing.T) {
	f, err := os.Open("testdata/cdk_table.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var c cdkCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			schemas := NewSchemaInferrer(c.PK, c.Cursor)
			var formats DatetimeFormats
			for _, r := range c.Records {
				data := decode(t, r[1])
				if err := schemas.Accumulate(r[0], data); err != nil {
					t.Fatal(err)
				}
				if err := formats.Accumulate(data); err != nil {
					t.Fatal(err)
				}
			}
			for _, stream := range schemas.Streams() {
				want, ok := c.Streams[stream]
				if !ok {
					t.Fatalf("stream %q is not in the table", stream)
				}
				schema, problems, err := schemas.Schema(stream)
				if want.Error != "" {
					var ke *KeyError
					if !errors.As(err, &ke) || "KeyError: "+err.Error() != want.Error {
						t.Errorf("stream %q: error %v, want %s", stream, err, want.Error)
					}
					continue
				}
				if err != nil {
					t.Errorf("stream %q: %v", stream, err)
					continue
				}
				if got := marshal(t, schema); got != want.Schema {
					t.Errorf("stream %q schema\n got %s\nwant %s", stream, got, want.Schema)
				}
				if !slices.Equal(problems, want.Problems) {
					t.Errorf("stream %q problems\n got %q\nwant %q", stream, problems, want.Problems)
				}
			}
			if len(schemas.Streams()) != len(c.Streams) {
				t.Errorf("streams %q, the table has %d", schemas.Streams(), len(c.Streams))
			}
			if got := marshal(t, formats.Formats()); got != c.DatetimeFormats {
				t.Errorf("datetime formats\n got %s\nwant %s", got, c.DatetimeFormats)
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 200 {
		t.Fatalf("the table has %d cases", n)
	}
}

// testdata/cdk_datetime_values.jsonl holds values, each with the format the CDK's
// DatetimeFormatInferrer gives a field holding it in a record of its own ("" for none), from
// the same script:
//
//	PYTHONPATH=/work/cdkref/site:/work/cdkref/stubs:/work/cdkref/shims \
//	  python3 /work/cdkref-scripts/infer_table.py 4000 values > pkg/infer/testdata/cdk_datetime_values.jsonl
func TestCDKDatetimeValues(t *testing.T) {
	f, err := os.Open("testdata/cdk_datetime_values.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var c [2]string // the value's JSON text, the format
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		var d DatetimeFormats
		if err := d.Accumulate(decode(t, `{"v":`+c[0]+`}`)); err != nil {
			t.Fatal(err)
		}
		got, _ := d.Formats().Get("v")
		if got == nil {
			got = ""
		}
		if got != c[1] {
			t.Errorf("%s: got format %q, the CDK %q", c[0], got, c[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("the table has %d values", n)
	}
}
