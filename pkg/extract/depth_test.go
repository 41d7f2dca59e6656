package extract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// arrays is n lists nested in one another.
func arrays(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// objects is n objects nested in one another, with 1 inside the last.
func objects(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }

var allWants = []Want{{}, {Body: true}, {Values: true}, {Body: true, LazyBody: true}, {Body: true, Values: true}}

// Parse and Count refuse the same bodies: nested exactly MaxDepth levels is accepted, one
// level more is a DepthError at the bracket that opens it, wherever it is in the body.
func TestDepthLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		// body builds the body with the deepest value nested n levels in the body.
		body func(n int) string
		path []string
		// at is the offset of the bracket that opens level MaxDepth+1.
		at int
		// counted says whether Count walks the deep value (and so must refuse it).
		counted bool
	}{
		{"lists as the body", arrays, nil, MaxDepth, true},
		{"lists at the path", func(n int) string { return `{"data":` + arrays(n-1) + `}` }, []string{"data"}, 8 + MaxDepth - 1, true},
		{"objects as the body", objects, nil, 5 * MaxDepth, false},
		{"objects at the path", func(n int) string { return `{"data":[` + objects(n-2) + `]}` }, []string{"data"}, 9 + 5*(MaxDepth-2), true},
		{"deep inside a record", func(n int) string { return `{"data":[{"id":1,"x":` + arrays(n-3) + `}]}` }, []string{"data"}, 21 + MaxDepth - 3, true},
		{"deep in a member before the records", func(n int) string {
			return `{"meta":` + arrays(n-1) + `,"data":[{"id":1}]}`
		}, []string{"data"}, 8 + MaxDepth - 1, true},
		{"deep at a nested path", func(n int) string {
			return `{"a":{"b":{"skip":` + arrays(n-3) + `,"c":[1]}}}`
		}, []string{"a", "b", "c"}, 18 + MaxDepth - 3, true},
		{"deep after the records", func(n int) string { return `{"data":[1,2],"meta":` + arrays(n-1) + `}` }, []string{"data"}, 21 + MaxDepth - 1, false},
		{"deep with a wildcard", func(n int) string { return `{"x":{"y":` + arrays(n-2) + `}}` }, []string{"*", "y"}, 10 + MaxDepth - 2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ok, deep := []byte(tt.body(MaxDepth)), []byte(tt.body(MaxDepth+1))
			for _, want := range allWants {
				if _, err := Parse(ok, tt.path, want); err != nil {
					t.Errorf("%+v: %d levels: %v", want, MaxDepth, err)
				}
				_, err := Parse(deep, tt.path, want)
				var de *DepthError
				if !errors.As(err, &de) || de.Offset != tt.at {
					t.Errorf("%+v: %d levels: error %v, want a DepthError at byte %d", want, MaxDepth+1, err, tt.at)
				}
			}
			if deep[tt.at] != '[' && deep[tt.at] != '{' {
				t.Fatalf("the test's offset %d is at %q, not at a bracket", tt.at, deep[tt.at])
			}
			if !tt.counted {
				return
			}
			if _, okCount := countBoth(t, ok, tt.path); !okCount && isList(tt.body(MaxDepth), tt.path) {
				t.Errorf("Count refuses %d levels", MaxDepth)
			}
			if n, okCount := countBoth(t, deep, tt.path); okCount {
				t.Errorf("Count = %d, true for %d levels; want it to say it cannot tell", n, MaxDepth+1)
			}
		})
	}
}

// isList says whether the value at path is a list (Count counts only lists).
func isList(body string, path []string) bool {
	p, err := Parse([]byte(body), path, Want{Body: true})
	if err != nil {
		return false
	}
	v := p.Body
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = m[k]
	}
	_, ok := v.([]any)
	return ok
}

func TestDepthErrorMessage(t *testing.T) {
	_, err := Parse([]byte(arrays(MaxDepth+1)), nil, Want{})
	if want := "JSON nested deeper than 512 levels at byte 512, a limit of connector"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// Millions of levels are refused at the first level too many, with no stack overflow, and a
// field path longer than the limit cannot be counted.
func TestDepthBombs(t *testing.T) {
	for name, body := range map[string]string{
		"lists":                     arrays(2_000_000),
		"objects":                   objects(2_000_000),
		"unclosed lists":            strings.Repeat("[", 2_000_000),
		"lists inside a record":     `{"data":[{"x":` + arrays(2_000_000) + `}]}`,
		"objects inside the record": `{"data":[` + objects(2_000_000) + `]}`,
	} {
		for _, path := range [][]string{nil, {"data"}, {"*"}} {
			for _, want := range allWants {
				_, err := Parse([]byte(body), path, want)
				var de *DepthError
				if !errors.As(err, &de) {
					t.Errorf("%s, path %q, %+v: error %v, want a DepthError", name, path, want, err)
				}
			}
			if n, ok := countBoth(t, []byte(body), path); ok {
				t.Errorf("%s, path %q: Count = %d, true", name, path, n)
			}
		}
	}
	path := make([]string, MaxDepth)
	for i := range path {
		path[i] = "a"
	}
	body := []byte(strings.Repeat(`{"a":`, MaxDepth) + "[1]" + strings.Repeat("}", MaxDepth))
	if n, ok := countBoth(t, body, path); ok {
		t.Errorf("a list at %d levels: Count = %d, true", MaxDepth+1, n)
	}
	if _, err := Parse(body, path, Want{}); err == nil {
		t.Errorf("a list at %d levels: Parse accepted it", MaxDepth+1)
	}
}

// The lazy body decodes a value nested up to the limit like the eager one.
func TestLazyBodyAtTheDepthLimit(t *testing.T) {
	body := []byte(`{"data":[],"deep":` + arrays(MaxDepth-1) + `,"obj":{"a":` + objects(MaxDepth-3) + `}}`)
	eager, err := Parse(body, []string{"data"}, Want{Body: true})
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := Parse(body, []string{"data"}, Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := materialize(lazy.Body.(*Object)); !reflect.DeepEqual(any(got), eager.Body) {
		t.Error("the lazy body differs from the eager one")
	}
	whole, err := Parse(body, nil, Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := materialize(whole.Body.(*Object)); !reflect.DeepEqual(any(got), eager.Body) {
		t.Error("the lazy body indexed on first read differs from the eager one")
	}
}

// Want.MaxRecords refuses the record after the last one allowed, in a list or through
// wildcards, and nothing below it.
func TestMaxRecords(t *testing.T) {
	for _, tt := range []struct {
		body string
		path []string
		at   int // the offset of the first record too many; -1: accepted
	}{
		{`[1,2,3]`, nil, -1},
		{`[1,2,3,4]`, nil, 7},
		{`{"data":[{},{},{}],"next":[1,2,3,4,5]}`, []string{"data"}, -1},
		{`{"data":[{}, {}, {}, {}]}`, []string{"data"}, 21},
		{`{"a":{"x":1},"b":{"x":2},"c":{"x":3}}`, []string{"*"}, -1},
		{`{"a":{"x":1},"b":{"x":2},"c":{"x":3},"d":{}}`, []string{"*"}, 41},
	} {
		for _, want := range allWants {
			want.MaxRecords = 3
			p, err := Parse([]byte(tt.body), tt.path, want)
			var tm *TooManyRecordsError
			switch {
			case tt.at < 0 && (err != nil || len(p.Records) != 3):
				t.Errorf("%s %+v: error %v", tt.body, want, err)
			case tt.at >= 0 && (!errors.As(err, &tm) || tm.Offset != tt.at || tm.Max != 3):
				t.Errorf("%s %+v: error %v, want a TooManyRecordsError at byte %d", tt.body, want, err, tt.at)
			}
		}
	}
	_, err := Parse([]byte(`[1,1]`), nil, Want{MaxRecords: 1})
	if want := "more than 1 records on one page (the record at byte 3 is one too many)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// A list of records larger than a megabyte is counted before it is read: one of more
// records than a page may hold fails at once, before any record is made (a 9 MB page of
// 3,000,000 `{}` took 3 s and half a gigabyte, and ran out of memory under an address-space
// limit), and one within the limit is read into a slice made once, of its size.
func TestLargeListsAreCountedFirst(t *testing.T) {
	list := func(n int) []byte {
		return []byte(`{"data":[` + strings.TrimSuffix(strings.Repeat(`{"a":1},`, n), ",") + `]}`)
	}
	big := list(200_000) // 1.6 MB
	_, err := Parse(big, []string{"data"}, Want{MaxRecords: 199_999})
	var tm *TooManyRecordsError
	if !errors.As(err, &tm) || tm.Count != 200_000 || tm.Offset != 8 ||
		err.Error() != "more than 199999 records on one page (the list at byte 8 holds 200000)" {
		t.Errorf("error %v, want the counted list's", err)
	}
	page, err := Parse(big, []string{"data"}, Want{MaxRecords: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 200_000 || cap(page.Records) != 200_000 {
		t.Errorf("%d records in a slice of %d, want 200000 in 200000", len(page.Records), cap(page.Records))
	}
	// A small list keeps finding the record one too many where it starts.
	_, err = Parse(list(3), []string{"data"}, Want{MaxRecords: 2})
	if !errors.As(err, &tm) || tm.Count != 0 || tm.Offset != 25 {
		t.Errorf("error %v, want the third record at byte 25", err)
	}
}
