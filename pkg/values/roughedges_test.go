package values

import "testing"

// A key written twice in the testing values is an error naming both places: which of two
// tokens was meant is not for the tool to guess.
func TestDuplicateKeyIsAnError(t *testing.T) {
	_, err := Parse("values.yaml", []byte("base_url: http://a.test\noptions:\n  region: eu\n  region: us\nbase_url: http://b.test\n"))
	want := "values.yaml:4:3: error: duplicate key `region` (first at line 3:3)\n  hint: keep one of them\n" +
		"values.yaml:5:1: error: duplicate key `base_url` (first at line 1:1)\n  hint: keep one of them"
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

// A syntax error is reported on the line where the parser stopped.
func TestSyntaxErrorLine(t *testing.T) {
	_, err := Parse("values.yaml", []byte("base_url: http://a.test\noptions:\n  region: eu\n  depth: 2\n extra: 1\n"))
	want := "values.yaml:5:1: error: invalid YAML: did not find expected key"
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

// A key written with no value, as init-values leaves a required one, is said to be empty.
func TestEmptyValueIsSaidToBeEmpty(t *testing.T) {
	v, err := Parse("values.yaml", []byte("client_id:\nport: null\nname: 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := map[string]any{"type": "object", "properties": map[string]any{
		"client_id": map[string]any{"type": "string"},
		"port":      map[string]any{"type": "integer"},
		"name":      map[string]any{"type": "string"},
		"note":      map[string]any{"type": []any{"string", "null"}},
	}}
	want := "values.yaml:1:11: error: testing value \"client_id\" is empty (null): fill it in\n" +
		"values.yaml:2:7: error: testing value \"port\" is empty (null): fill it in\n" +
		"values.yaml:3:7: error: testing value \"name\": got integer, want string"
	if err := v.Validate(spec); err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}
