package yamlguard

import (
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDuplicateKeys(t *testing.T) {
	src := `a: 1
b:
  c: 2
  d: [{e: 1, e: 2}]
  c: 3
a: 4
base: &x {k: 1}
use:
  <<: *x
  <<: *x
alias: *x
`
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	dups := DuplicateKeys(&doc)
	for _, d := range dups {
		got = append(got, fmt.Sprintf("%s %d:%d first %d:%d", d.Again.Value, d.Again.Line, d.Again.Column, d.First.Line, d.First.Column))
	}
	want := []string{"e 4:14 first 4:8", "c 5:3 first 3:3", "a 6:1 first 1:1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if n := KeepLast(&doc, dups); n != 3 {
		t.Errorf("removed %d pairs, want 3", n)
	}
	out, _ := yaml.Marshal(&doc)
	want2 := "a: 4\nb:\n    c: 3\n    d: [{e: 2}]\nbase: &x {k: 1}\nuse:\n    !!merge <<: *x\n    !!merge <<: *x\nalias: *x\n"
	if string(out) != want2 {
		t.Errorf("after KeepLast:\n%s\nwant:\n%s", out, want2)
	}
}
