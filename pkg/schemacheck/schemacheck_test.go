package schemacheck

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"connector/pkg/record"
)

func decode(t *testing.T, text string) any {
	t.Helper()
	v, err := record.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const bookSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "integer"},
    "title": {"type": "string"},
    "price": {"type": ["null", "number"]},
    "author": {"type": "object", "properties": {"name": {"type": "string"}}}
  }
}`

func check(t *testing.T, declared any, pk [][]string, records ...string) Report {
	t.Helper()
	c, err := New(declared, pk)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		if err := c.AddJSON([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	return c.Finish()
}

func TestCheckerWarnsInRecordOrder(t *testing.T) {
	r := check(t, decode(t, bookSchema), [][]string{{"id"}},
		`{"id": 1, "title": "a", "price": 9.5, "author": {"name": "x"}}`,
		`{"id": 2, "title": 7, "price": "9.5"}`,
		`{"title": "c"}`,
		`{"id": 1, "title": "d", "author": {"name": null}}`,
		`{"id": null, "title": "e"}`,
	)
	want := []Warning{
		{Mismatch, 2, "/price", "got string, want null or number"},
		{Mismatch, 2, "/title", "got integer, want string"},
		{KeyMissing, 3, "/id", "primary key field id is missing"},
		{Mismatch, 4, "/author/name", "got null, want string"},
		{KeyDuplicate, 4, "/id", "primary key id = 1 already in record 1"},
		{Mismatch, 5, "/id", "got null, want integer"},
		{KeyMissing, 5, "/id", "primary key field id is null"},
	}
	if !reflect.DeepEqual(r.Warnings, want) {
		t.Errorf("warnings:\n got  %v\n want %v", r.Warnings, want)
	}
	wantCounts := map[Kind]int{Mismatch: 4, KeyMissing: 2, KeyDuplicate: 1}
	if !reflect.DeepEqual(r.Counts, wantCounts) || r.Records != 5 || r.Total() != 7 {
		t.Errorf("counts %v, records %d, total %d; want %v, 5, 7", r.Counts, r.Records, r.Total(), wantCounts)
	}
}

func TestCheckerCompositeAndNestedKeys(t *testing.T) {
	r := check(t, nil, [][]string{{"id"}, {"meta", "region"}},
		`{"id": 1, "meta": {"region": "eu"}}`,
		`{"id": 1, "meta": {"region": "us"}}`,
		`{"id": 1, "meta": {"region": "eu"}}`,
		`{"id": "1", "meta": {"region": "eu"}}`,
		`{"id": 2, "meta": "eu"}`,
	)
	want := []Warning{
		{KeyDuplicate, 3, "/id", `primary key (id, meta.region) = (1, "eu") already in record 1`},
		{KeyMissing, 5, "/meta/region", "primary key field meta.region is missing"},
	}
	if !reflect.DeepEqual(r.Warnings, want) {
		t.Errorf("warnings:\n got  %v\n want %v", r.Warnings, want)
	}
}

func TestCheckerNoRecordsAndNoSchema(t *testing.T) {
	r := check(t, decode(t, `{}`), nil)
	want := []Warning{{NoRecords, 0, "", "the stream returned no records"}}
	if !reflect.DeepEqual(r.Warnings, want) || r.Counts[NoRecords] != 1 {
		t.Errorf("got %v %v, want %v", r.Warnings, r.Counts, want)
	}
	if s := r.Warnings[0].String(); s != "the stream returned no records" {
		t.Errorf("String() = %q", s)
	}
	// Without a declared schema or a key, any record passes.
	if r := check(t, nil, nil, `{"a": 1}`, `[1]`); r.Total() != 0 {
		t.Errorf("got %v, want no warnings", r.Warnings)
	}
}

func TestCheckerKeepsMaxButCountsAll(t *testing.T) {
	c, _ := New(nil, [][]string{{"id"}})
	c.Max = 2
	for range 5 {
		c.AddJSON([]byte(`{"x": 1}`))
	}
	r := c.Finish()
	if len(r.Warnings) != 2 || r.Counts[KeyMissing] != 5 || r.Warnings[1].Record != 2 {
		t.Errorf("got %v %v, want 2 kept of 5", r.Warnings, r.Counts)
	}
	if s := r.Warnings[1].String(); s != "record 2 /id: primary key field id is missing" {
		t.Errorf("String() = %q", s)
	}
}

func TestNewRefusesAnInvalidSchemaButChecksTheKey(t *testing.T) {
	c, err := New(decode(t, `{"type": "text"}`), [][]string{{"id"}})
	if err == nil || !strings.HasPrefix(err.Error(), "the declared schema is not a valid JSON schema: ") {
		t.Fatalf("got %v", err)
	}
	c.AddJSON([]byte(`{"id": 1}`))
	c.AddJSON([]byte(`{"id": 1}`))
	if r := c.Finish(); r.Counts[KeyDuplicate] != 1 || r.Counts[Mismatch] != 0 {
		t.Errorf("got %v", r.Counts)
	}
}

func TestAddJSONRefusesWhatIsNotJSON(t *testing.T) {
	c, _ := New(nil, nil)
	c.AddJSON([]byte(`{}`))
	err := c.AddJSON([]byte(`{"a":`))
	if err == nil || !strings.HasPrefix(err.Error(), "record 2 is not JSON") {
		t.Errorf("got %v", err)
	}
}

func TestCompare(t *testing.T) {
	inferred := decode(t, `{
	  "$schema": "http://json-schema.org/schema#",
	  "type": "object",
	  "properties": {
	    "title": {"type": ["null", "string"]},
	    "id": {"type": "number"},
	    "year": {"type": ["null", "string"]},
	    "price": {"type": "number"},
	    "isbn": {"type": "string"},
	    "author": {"type": "object", "properties": {"name": {"type": "string"}, "born": {"type": "number"}}},
	    "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
	    "mixed": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"z": {"type": "null"}}}]}
	  }
	}`)
	declared := decode(t, `{
	  "type": "object",
	  "properties": {
	    "id": {"type": "integer"},
	    "title": {"type": "string"},
	    "year": {"type": "integer"},
	    "price": {"type": ["null", "string"]},
	    "author": {"type": "object", "properties": {"name": {"type": "string"}, "died": {"type": "integer"}}},
	    "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {}}}},
	    "mixed": {},
	    "pages": {"type": "integer"}
	  }
	}`)
	want := []Field{
		{"title", 0, "null | string", "string", Same},
		{"id", 0, "number", "integer", Same},
		{"year", 0, "null | string", "integer", Type},
		{"price", 0, "number", "null | string", Type},
		{"isbn", 0, "string", "", Undeclared},
		{"author", 0, "object", "object", Same},
		{"author.name", 1, "string", "string", Same},
		{"author.born", 1, "number", "", Undeclared},
		{"author.died", 1, "", "integer", Unseen},
		{"tags", 0, "array", "array", Same},
		{"tags[].k", 1, "string", "any", Same},
		{"mixed", 0, "object | string", "any", Same},
		{"mixed.z", 1, "null", "", Undeclared},
		{"pages", 0, "", "integer", Unseen},
	}
	got := Compare(declared, inferred)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%v\nwant:\n%v", got, want)
	}
	// Without a declared schema every field is undeclared.
	for _, f := range Compare(nil, inferred) {
		if f.Diff != Undeclared || f.Declared != "" {
			t.Errorf("without a declared schema: %+v", f)
		}
	}
}

func TestLoaderYAML(t *testing.T) {
	schema := decode(t, `{"$schema": "http://json-schema.org/schema#", "type": "object",
	  "properties": {"id": {"type": "number"}, "note": {"type": ["null", "string"]}, "true": {"type": "boolean", "default": true, "maximum": 10.5}},
	  "required": ["id"]}`)
	got, err := LoaderYAML(schema)
	if err != nil {
		t.Fatal(err)
	}
	want := `schema_loader:
  type: InlineSchemaLoader
  schema:
    $schema: http://json-schema.org/schema#
    type: object
    properties:
      id:
        type: number
      note:
        type:
          - "null"
          - string
      "true":
        type: boolean
        default: true
        maximum: 10.5
    required:
      - id
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Pasted into a definition, it reads back as the schema it was made from.
	var back struct {
		Loader struct {
			Schema map[string]any `yaml:"schema"`
		} `yaml:"schema_loader"`
	}
	if err := yaml.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	props := back.Loader.Schema["properties"].(map[string]any)
	if nt := props["note"].(map[string]any)["type"].([]any); nt[0] != "null" {
		t.Errorf("null read back as %#v", nt[0])
	}
	if _, ok := props["true"]; !ok {
		t.Errorf("the key true read back as %v", props)
	}
}

func TestKindCount(t *testing.T) {
	for _, tc := range []struct {
		k    Kind
		n    int
		want string
	}{
		{Mismatch, 1, "1 schema mismatch"}, {Mismatch, 3, "3 schema mismatches"},
		{KeyMissing, 2, "2 missing primary keys"}, {KeyDuplicate, 1, "1 repeated primary key"},
		{NoRecords, 1, "1 stream without records"},
	} {
		if got := tc.k.Count(tc.n); got != tc.want {
			t.Errorf("%s.Count(%d) = %q, want %q", tc.k, tc.n, got, tc.want)
		}
	}
}
