package diag

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tt := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: "def.yaml", Line: 12, Column: 5, Severity: Error, Message: "unknown field `pth`"},
			"def.yaml:12:5: error: unknown field `pth`"},
		{Diagnostic{File: "def.yaml", Line: 3, Column: 1, Severity: Warning, Message: "deprecated", Hint: "not printed here"},
			"def.yaml:3:1: warning: deprecated"},
		{Diagnostic{File: "creds.yaml", Severity: Error, Message: "cannot read the file"},
			"creds.yaml: error: cannot read the file"},
	} {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestListError(t *testing.T) {
	var l List
	l.Add(Diagnostic{File: "def.yaml", Line: 4, Column: 7, Message: "unknown field `pth`", Hint: "did you mean `path`?"})
	l.Add(Diagnostic{File: "def.yaml", Line: 9, Column: 3, Severity: Warning, Message: "no check section"})
	want := "def.yaml:4:7: error: unknown field `pth`\n" +
		"  hint: did you mean `path`?\n" +
		"def.yaml:9:3: warning: no check section"
	if got := l.Error(); got != want {
		t.Errorf("Error():\n%s\nwant:\n%s", got, want)
	}
	if l[0].Severity != Error {
		t.Errorf("Add without a severity gave %q, want error", l[0].Severity)
	}
	if (List{}).Error() != "" {
		t.Errorf("an empty list prints %q", List{}.Error())
	}
}

func TestHasErrorsAndErr(t *testing.T) {
	warning := Diagnostic{File: "a", Severity: Warning, Message: "w"}
	failure := Diagnostic{File: "a", Severity: Error, Message: "e"}
	for _, tt := range []struct {
		name string
		l    List
		want bool
	}{
		{"nil", nil, false},
		{"warnings only", List{warning, warning}, false},
		{"an error after a warning", List{warning, failure}, true},
	} {
		if got := tt.l.HasErrors(); got != tt.want {
			t.Errorf("%s: HasErrors() = %v, want %v", tt.name, got, tt.want)
		}
		err := tt.l.Err()
		if (err != nil) != tt.want {
			t.Errorf("%s: Err() = %v", tt.name, err)
		}
		var l List
		if err != nil && (!errors.As(err, &l) || len(l) != len(tt.l)) {
			t.Errorf("%s: Err() is not the list: %#v", tt.name, err)
		}
	}
}

// Sort orders by file, line and column, and keeps the order of diagnostics at the same
// position.
func TestSort(t *testing.T) {
	l := List{
		{File: "b.yaml", Line: 1, Column: 1, Message: "b1"},
		{File: "a.yaml", Line: 10, Column: 2, Message: "a10:2"},
		{File: "a.yaml", Line: 2, Column: 9, Message: "a2:9 first"},
		{File: "a.yaml", Line: 10, Column: 1, Message: "a10:1"},
		{File: "a.yaml", Line: 2, Column: 9, Message: "a2:9 second"},
		{File: "a.yaml", Message: "a no position"},
	}
	l.Sort()
	var got []string
	for _, d := range l {
		got = append(got, d.Message)
	}
	want := []string{"a no position", "a2:9 first", "a2:9 second", "a10:1", "a10:2", "b1"}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %q, want %q", got, want)
		}
	}
}

// The JSON form (validate --format json, written without HTML escaping) has no file (the
// report names it once), and leaves out an empty hint, path and component.
func TestJSON(t *testing.T) {
	for _, tt := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: "def.yaml", Severity: Error, Code: CodeUnsupported, Message: "`XmlDecoder` is not supported yet",
			Hint: "remove the stream", Line: 20, Column: 9, Path: "streams[0].retriever.decoder", Component: "XmlDecoder"},
			`{"severity":"error","code":"unsupported-component","message":"` + "`XmlDecoder`" + ` is not supported yet","hint":"remove the stream","line":20,"column":9,"path":"streams[0].retriever.decoder","component":"XmlDecoder"}`},
		{Diagnostic{File: "def.yaml", Severity: Warning, Code: CodeYAML, Message: "<tab> & more", Line: 1, Column: 1},
			`{"severity":"warning","code":"yaml","message":"<tab> & more","line":1,"column":1}`},
	} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tt.d); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(b.String(), "\n"); got != tt.want {
			t.Errorf("JSON\n%s\nwant\n%s", got, tt.want)
		}
	}
}
