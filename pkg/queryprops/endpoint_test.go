package queryprops

import (
	"testing"

	"connector/pkg/record"
)

// The cases were checked against dpath.get and str() in the CDK's Python.
func TestProperty(t *testing.T) {
	rec, err := record.Decode([]byte(`{"a":{"b":[10,{"c":"x"}]},"k*":1,"d":null}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path []string
		want string
	}{
		{[]string{"a", "b", "0"}, "10"},
		{[]string{"a", "b", "1", "c"}, "x"},
		{[]string{"a", "b", "-1"}, "{'c': 'x'}"},
		{[]string{"a", "b", "5"}, "[]"},
		{nil, "{'a': {'b': [10, {'c': 'x'}]}, 'k*': 1, 'd': None}"},
		{[]string{"k*"}, "1"},
		{[]string{"a", "*"}, "[10, {'c': 'x'}]"},
		{[]string{"d"}, "None"},
		{[]string{"d", "x"}, "[]"},
	} {
		got, err := Property(rec, tt.path)
		if err != nil || got != tt.want {
			t.Errorf("Property(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
	if _, err := Property(rec, []string{"*"}); err == nil || err.Error() != errManyLeaves.Error() {
		t.Errorf("a glob matching three values: err %v, want %v", err, errManyLeaves)
	}
}
