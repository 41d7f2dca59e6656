package values

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func jsonValue(t *testing.T, text string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSchemaCheckViolations(t *testing.T) {
	schema := jsonValue(t, `{
	  "type": "object",
	  "required": ["id"],
	  "properties": {
	    "id": {"type": "integer"},
	    "price": {"type": ["null", "number"]},
	    "author": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": false},
	    "tags": {"type": "array", "items": {"type": "string"}},
	    "a/b": {"type": "string"}
	  }
	}`).(map[string]any)
	s, err := CompileSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		record string
		want   []Violation
	}{
		{`{"id": 1, "price": 2.5, "author": {"name": "x"}, "tags": ["a"]}`, nil},
		{`{"price": "2.5"}`, []Violation{
			{"/id", "required", "missing required member"},
			{"/price", "type", "got string, want null or number"},
		}},
		{`{"id": 1.5, "author": {"name": 3, "age": 4}, "tags": ["a", 2], "a/b": 1}`, []Violation{
			{"/a~1b", "type", "got integer, want string"},
			{"/author/age", "additionalProperties", `unexpected property "age"`},
			{"/author/name", "type", "got integer, want string"},
			{"/id", "type", "got number, want integer"},
			{"/tags/1", "type", "got integer, want string"},
		}},
		{`[]`, []Violation{{"", "type", "got array, want object"}}},
	} {
		got := s.Check(jsonValue(t, tc.record))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.record, got, tc.want)
		}
	}
}

func TestCompileSchemaRefusesAnInvalidSchema(t *testing.T) {
	_, err := CompileSchema(map[string]any{"type": "text"})
	if err == nil || !strings.Contains(err.Error(), "type") {
		t.Fatalf("got %v, want an error about type", err)
	}
}
