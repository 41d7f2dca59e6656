package dev

import (
	"strings"
	"testing"

	"connector/pkg/diag"
	"connector/pkg/schemacheck"
)

func TestPrinterSaysEachRoundOnce(t *testing.T) {
	var out strings.Builder
	p := &Printer{Out: &out, Shown: 2}
	books := &Result{Stream: "books", Round: 1, Records: 100, Pages: 2, Declared: []byte(`{}`),
		Check: schemacheck.Report{Records: 100, Counts: map[schemacheck.Kind]int{schemacheck.Mismatch: 3, schemacheck.KeyDuplicate: 1},
			Warnings: []schemacheck.Warning{
				{Kind: schemacheck.Mismatch, Record: 4, Pointer: "/price", Message: "got string, want number"},
				{Kind: schemacheck.KeyDuplicate, Record: 9, Pointer: "/id", Message: "primary key id = 3 already in record 2"},
				{Kind: schemacheck.Mismatch, Record: 12, Pointer: "/price", Message: "got string, want number"},
			}},
		Fields: []schemacheck.Field{
			{Path: "id", Inferred: "number", Declared: "integer"},
			{Path: "isbn", Inferred: "string", Diff: schemacheck.Undeclared},
			{Path: "price", Inferred: "string", Declared: "number", Diff: schemacheck.Type},
			{Path: "pages", Declared: "integer", Diff: schemacheck.Unseen},
			{Path: "extra", Inferred: "string", Diff: schemacheck.Undeclared},
		}}
	authors := &Result{Stream: "authors", Round: 1, Error: "the state file is not JSON"}
	reviews := &Result{Stream: "reviews", Round: 1, Records: 3, Pages: 1, Errors: []string{"401 Unauthorized from GET http://x/reviews?page=2"}}
	view := &View{Definition: "def.yaml", Round: 1, Reading: true, Results: []*Result{books},
		Problems: []Problem{{File: "def.yaml", Line: 3, Column: 5, Severity: diag.Warning, Message: "unknown field"}}}
	p.View(view)
	p.View(view) // the same view again adds nothing
	view.Results = append(view.Results, authors, reviews)
	p.View(view)
	p.View(&View{Definition: "def.yaml", Round: 2, Broken: true, Results: view.Results,
		Problems: []Problem{{File: "def.yaml", Line: 7, Column: 1, Severity: diag.Error, Message: "bad", Hint: "fix it"}}})
	want := `def.yaml: 1 warning (connector validate def.yaml lists them)
books  100 records, 2 pages, 4 warnings (3 schema mismatches, 1 repeated primary key); schema: 2 undeclared (isbn, …), 1 type (price is string, declared number), 1 unseen (pages)
  record 4 /price: got string, want number
  record 9 /id: primary key id = 3 already in record 2
  … 2 more
authors  FAILED: the state file is not JSON
reviews  FAILED after 3 records and 1 page: 401 Unauthorized from GET http://x/reviews?page=2

def.yaml:7:1: error: bad (fix it)
1 error: fix and save to read again
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
