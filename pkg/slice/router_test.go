package slice

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
)

// The routers of this package on their own: a definition's partition_router loaded through
// manifest, its slices taken one by one, and a request built with them. A parent stream is
// read through Env.ReadParent, here a table of parent records (the real reading is pkg/run's,
// tested there against a local API).

// routerOf loads a definition of one stream "items" with the given partition_router (YAML
// indented for the retriever's level) and returns its model.
func routerOf(t *testing.T, router string) *manifest.Router {
	t.Helper()
	def := `version: 6.5.0
type: DeclarativeSource
definitions:
  parent:
    type: DeclarativeStream
    name: parents
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /parents}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  other:
    type: DeclarativeStream
    name: others
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /others}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
` + indent(router, "        ")
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	return d.Streams[0].Router
}

func indent(s, pad string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// parents is a ReadParent that yields the records of each stream from a table of JSON
// texts, writing down each stream it reads and how many records were taken.
type parents struct {
	records map[string][]string
	reads   []string
	fail    map[string]error
}

func (p *parents) env(config map[string]any) Env {
	return Env{Globals: template.Globals{Config: config}, ReadParent: p.read}
}

func (p *parents) read(_ context.Context, s *manifest.Stream, yield func(rec any, sl *Slice) bool) error {
	taken := 0
	defer func() { p.reads = append(p.reads, fmt.Sprintf("%s:%d", s.Name, taken)) }()
	for _, text := range p.records[s.Name] {
		rec, err := record.Decode([]byte(text))
		if err != nil {
			return err
		}
		taken++
		if !yield(rec, nil) {
			return nil
		}
	}
	return p.fail[s.Name]
}

// slices takes every slice of r, shown as partition | extra | lazy, or the error that ended
// them as "error: …".
func slices(t *testing.T, r Router) []string {
	t.Helper()
	var out []string
	for sl, err := range r.Slices(context.Background()) {
		if err != nil {
			out = append(out, "error: "+err.Error())
			continue
		}
		out = append(out, describe(sl))
	}
	return out
}

func describe(sl *Slice) string {
	p, _ := record.Marshal(sl.Partition)
	e, _ := record.Marshal(sl.Extra)
	s := string(p) + " | " + string(e)
	if sl.Lazy != nil {
		s += " | lazy " + string(sl.Lazy)
	}
	return s
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// sent builds a request to https://api.test/items with the slice injected and shows it:
// the URL, then each header set, then the body.
func sent(t *testing.T, r Router, sl *Slice) string {
	t.Helper()
	b := request.New("data", "GET", "https://api.test/items")
	if err := r.Inject(b, sl); err != nil {
		return "error: " + err.Error()
	}
	req, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := req.URL
	for _, k := range []string{"X-Id", "X-Project", "X-K"} {
		if v := req.Header.Get(k); v != "" {
			s += " " + k + ": " + v
		}
	}
	if len(req.Body) > 0 {
		s += " body " + string(req.Body)
	}
	return s
}

func TestNoRouterIsOneEmptySlice(t *testing.T) {
	r, err := NewRouter(nil, Env{})
	if err != nil {
		t.Fatal(err)
	}
	var got []*Slice
	for sl, err := range r.Slices(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sl)
	}
	if len(got) != 1 || !got[0].Empty() || got[0].String() != "{}" {
		t.Fatalf("slices = %v, want one empty slice", got)
	}
	if s := sent(t, r, got[0]); s != "https://api.test/items" {
		t.Errorf("request = %s, want nothing injected", s)
	}
}

// ListPartitionRouter: one slice per value, in order, under cursor_field; the value goes
// where request_option says, only when it is truthy (the CDK skips "", 0, false, none).
func TestListRouter(t *testing.T) {
	tests := []struct {
		name   string
		router string
		config map[string]any
		want   []string
		sent   []string
	}{{
		name:   "values in the query",
		router: `{type: ListPartitionRouter, values: ["a", "b c", 3], cursor_field: "{{ parameters.f }}", $parameters: {f: kind}, request_option: {type: RequestOption, inject_into: request_parameter, field_name: kind}}`,
		want:   []string{`{"kind":"a"} | {}`, `{"kind":"b c"} | {}`, `{"kind":3} | {}`},
		sent:   []string{"https://api.test/items?kind=a", "https://api.test/items?kind=b+c", "https://api.test/items?kind=3"},
	}, {
		name:   "falsy values are not injected",
		router: `{type: ListPartitionRouter, values: ["", 0, "x"], cursor_field: k, request_option: {type: RequestOption, inject_into: header, field_name: X-Id}}`,
		want:   []string{`{"k":""} | {}`, `{"k":0} | {}`, `{"k":"x"} | {}`},
		sent:   []string{"https://api.test/items", "https://api.test/items", "https://api.test/items X-Id: x"},
	}, {
		name:   "a JSON body property at a path",
		router: `{type: ListPartitionRouter, values: [7], cursor_field: k, request_option: {type: RequestOption, inject_into: body_json, field_path: [filter, "{{ config.key }}"]}}`,
		config: map[string]any{"key": "id"},
		want:   []string{`{"k":7} | {}`},
		sent:   []string{`https://api.test/items body {"filter":{"id":7}}`},
	}, {
		name:   "values from a config list",
		router: `{type: ListPartitionRouter, values: "{{ config.regions }}", cursor_field: region}`,
		config: map[string]any{"regions": []any{"eu", "us"}},
		want:   []string{`{"region":"eu"} | {}`, `{"region":"us"} | {}`},
		sent:   []string{"https://api.test/items", "https://api.test/items"},
	}, {
		name:   "values from a text that spells a Python list",
		router: `{type: ListPartitionRouter, values: "{{ config.regions }}", cursor_field: region}`,
		config: map[string]any{"regions": "['eu', 2]"},
		want:   []string{`{"region":"eu"} | {}`, `{"region":2} | {}`},
		sent:   []string{"https://api.test/items", "https://api.test/items"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRouter(routerOf(t, tt.router), Env{Globals: template.Globals{Config: tt.config}})
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "slices", slices(t, r), tt.want)
			var got []string
			for sl := range r.Slices(context.Background()) {
				got = append(got, sent(t, r, sl))
			}
			equal(t, "requests", got, tt.sent)
		})
	}
}

// A consumer that stops early stops the list: no slice is made after it.
func TestListRouterStopsWhenAsked(t *testing.T) {
	r, err := NewRouter(routerOf(t, `{type: ListPartitionRouter, values: [1, 2, 3], cursor_field: k}`), Env{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for sl := range r.Slices(context.Background()) {
		got = append(got, sl.String())
		if len(got) == 2 {
			break
		}
	}
	equal(t, "slices", got, []string{"{k: 1}", "{k: 2}"})
}

// SubstreamPartitionRouter: a slice per parent record with a value at parent_key (a nested
// path, `*` matching the one element there), {partition_field: value, parent_slice: the
// parent's partition}; extra_fields by their joined path, none where the record has nothing;
// a record without the key gives no slice and is counted once the parent is read.
func TestSubstreamRouter(t *testing.T) {
	r := routerOf(t, `
type: SubstreamPartitionRouter
parent_stream_configs:
  - type: ParentStreamConfig
    stream: {$ref: "#/definitions/parent"}
    parent_key: meta/pid
    partition_field: project_id
    extra_fields: [[name], [info, deep], [nope]]
    request_option: {type: RequestOption, inject_into: header, field_name: X-Project}
  - type: ParentStreamConfig
    stream: {$ref: "#/definitions/other"}
    parent_key: "ids/*"
    partition_field: oid
    request_option: {type: RequestOption, inject_into: request_parameter, field_name: oid}
`)
	p := &parents{records: map[string][]string{
		"parents": {
			`{"meta":{"pid":11},"name":"p11","info":{"deep":1}}`,
			`{"meta":{},"name":"no key"}`,
			`{"meta":{"pid":12},"name":"p12"}`,
			`{"name":"no meta"}`,
		},
		"others": {`{"ids":["o1"]}`, `{"ids":[]}`},
	}}
	var skipped []string
	env := p.env(nil)
	env.Skipped = func(parent, key string, n int) { skipped = append(skipped, fmt.Sprintf("%s %s %d", parent, key, n)) }
	router, err := NewRouter(r, env)
	if err != nil {
		t.Fatal(err)
	}
	var got, reqs []string
	for sl, err := range router.Slices(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, describe(sl))
		reqs = append(reqs, sent(t, router, sl))
	}
	equal(t, "slices", got, []string{
		`{"project_id":11,"parent_slice":{}} | {"name":"p11","info.deep":1,"nope":null}`,
		`{"project_id":12,"parent_slice":{}} | {"name":"p12","info.deep":null,"nope":null}`,
		`{"oid":"o1","parent_slice":{}} | {}`,
	})
	equal(t, "requests", reqs, []string{
		"https://api.test/items X-Project: 11",
		"https://api.test/items X-Project: 12",
		"https://api.test/items?oid=o1",
	})
	equal(t, "skipped", skipped, []string{"parents meta/pid 2", "others ids/* 1"})
	equal(t, "reads", p.reads, []string{"parents:4", "others:2"})
}

// The parent is read only as far as the slices taken: stopping after the first slice stops
// the parent after its first record, and the next parent is not read at all.
func TestSubstreamRouterReadsLazily(t *testing.T) {
	r := routerOf(t, `
type: SubstreamPartitionRouter
parent_stream_configs:
  - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parent"}, parent_key: id, partition_field: pid}
  - {type: ParentStreamConfig, stream: {$ref: "#/definitions/other"}, parent_key: id, partition_field: pid}
`)
	p := &parents{records: map[string][]string{"parents": {`{"id":1}`, `{"id":2}`}, "others": {`{"id":3}`}}}
	router, err := NewRouter(r, p.env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for range router.Slices(context.Background()) {
		break
	}
	equal(t, "reads", p.reads, []string{"parents:1"})
}

// The parent record's own slice becomes parent_slice; lazy_read_pointer carries the child's
// first page from the parent record (an empty list when the record has none).
func TestSubstreamParentSliceAndLazyPage(t *testing.T) {
	r := routerOf(t, `
type: SubstreamPartitionRouter
parent_stream_configs:
  - type: ParentStreamConfig
    stream: {$ref: "#/definitions/parent"}
    parent_key: id
    partition_field: pid
    lazy_read_pointer: [items, data]
`)
	env := Env{ReadParent: func(_ context.Context, _ *manifest.Stream, yield func(any, *Slice) bool) error {
		org := &record.Object{}
		org.Set("org", "o1")
		for _, text := range []string{`{"id":1,"items":{"data":[{"n":1}]}}`, `{"id":2}`} {
			rec, _ := record.Decode([]byte(text))
			if !yield(rec, New(org)) {
				return nil
			}
		}
		return nil
	}}
	router, err := NewRouter(r, env)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "slices", slices(t, router), []string{
		`{"pid":1,"parent_slice":{"org":"o1"}} | {} | lazy [{"n":1}]`,
		`{"pid":2,"parent_slice":{"org":"o1"}} | {} | lazy []`,
	})
}

// A parent's failure, and a parent_key path that matches several values, end the slices
// with an error that names the parent stream.
func TestSubstreamRouterErrors(t *testing.T) {
	r := routerOf(t, `
type: SubstreamPartitionRouter
parent_stream_configs:
  - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parent"}, parent_key: "ids/*", partition_field: pid}
`)
	t.Run("ambiguous path", func(t *testing.T) {
		p := &parents{records: map[string][]string{"parents": {`{"ids":[1]}`, `{"ids":[1,2]}`, `{"ids":[3]}`}}}
		router, err := NewRouter(r, p.env(nil))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "slices", slices(t, router), []string{
			`{"pid":1,"parent_slice":{}} | {}`,
			"error: parent stream parents: the path ids/* matches 2 values, not one",
		})
	})
	t.Run("failing parent", func(t *testing.T) {
		p := &parents{records: map[string][]string{"parents": {`{"ids":[1]}`}}, fail: map[string]error{"parents": errors.New("GET /parents: 500 Internal Server Error")}}
		router, err := NewRouter(r, p.env(nil))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "slices", slices(t, router), []string{
			`{"pid":1,"parent_slice":{}} | {}`,
			"error: GET /parents: 500 Internal Server Error",
		})
	})
}

// dpathGet is the CDK's dpath.get: keys of objects (decoded or plain maps), indexes of
// lists, `*` for any one of them.
func TestDpathGet(t *testing.T) {
	obj, _ := record.Decode([]byte(`{"a":{"b":[10,{"c":"x"}]},"one":{"k":5}}`))
	tests := []struct {
		v     any
		path  string
		want  any
		found bool
		err   string
	}{
		{obj, "a/b/0", int64(10), true, ""},
		{obj, "a/b/1/c", "x", true, ""},
		{obj, "a/b/2", nil, false, ""},
		{obj, "a/b/-1", nil, false, ""},
		{obj, "a/x", nil, false, ""},
		{obj, "one/*", int64(5), true, ""},
		{obj, "a/b/*", nil, false, "the path a/b/* matches 2 values, not one"},
		{map[string]any{"m": map[string]any{"only": "v"}}, "m/*", "v", true, ""},
		{map[string]any{"m": map[string]any{"k": "v"}}, "m/k", "v", true, ""},
		{map[string]any{"m": "text"}, "m/k", nil, false, ""},
	}
	for _, tt := range tests {
		got, found, err := dpathGet(tt.v, strings.Split(tt.path, "/"))
		errText := ""
		if err != nil {
			errText = err.Error()
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || found != tt.found || errText != tt.err {
			t.Errorf("dpathGet(%s) = %v (%T), %v, %q; want %v, %v, %q", tt.path, got, got, found, errText, tt.want, tt.found, tt.err)
		}
	}
}

// GroupingPartitionRouter: group_size partitions per slice, each key's values (and extra
// fields) in a list, the last group shorter; deduplicate drops a value seen before by
// Python's equality (1 and 1.0 are one value, "1" another).
func TestGroupingRouter(t *testing.T) {
	tests := []struct {
		name   string
		router string
		config map[string]any
		want   []string
	}{{
		name: "deduplicated",
		router: `
type: GroupingPartitionRouter
group_size: 2
underlying_partition_router: {type: ListPartitionRouter, values: "{{ config.v }}", cursor_field: v}`,
		config: map[string]any{"v": []any{int64(1), "1", 1.0, true, int64(2), nil, nil, []any{int64(1)}, []any{int64(1)}}},
		want:   []string{`{"v":[1,"1"]} | {}`, `{"v":[2,null]} | {}`, `{"v":[[1]]} | {}`},
	}, {
		name: "deduplicate false",
		router: `
type: GroupingPartitionRouter
group_size: 2
deduplicate: false
underlying_partition_router: {type: ListPartitionRouter, values: ["x", "y", "x"], cursor_field: v}`,
		want: []string{`{"v":["x","y"]} | {}`, `{"v":["x"]} | {}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRouter(routerOf(t, tt.router), Env{Globals: template.Globals{Config: tt.config}})
			if err != nil {
				t.Fatal(err)
			}
			got := slices(t, r)
			equal(t, "slices", got, tt.want)
		})
	}
}

// Grouped substream partitions keep parent_slice and the extra fields as lists; a
// partition with two keys cannot be grouped; a parent's error passes through.
func TestGroupingSubstream(t *testing.T) {
	r := routerOf(t, `
type: GroupingPartitionRouter
group_size: 2
underlying_partition_router:
  type: SubstreamPartitionRouter
  parent_stream_configs:
    - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parent"}, parent_key: id, partition_field: pid, extra_fields: [[name]]}
`)
	p := &parents{records: map[string][]string{"parents": {`{"id":1,"name":"one"}`, `{"id":2}`, `{"id":3,"name":"three"}`}}, fail: map[string]error{"parents": errors.New("parent failed")}}
	router, err := NewRouter(r, p.env(nil))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "slices", slices(t, router), []string{
		`{"pid":[1,2],"parent_slice":[{},{}]} | {"name":["one",null]}`,
		"error: parent failed",
	})

	// The definition's checks refuse a product under a grouping; the router still says why.
	twoKeys := &manifest.Router{Type: manifest.GroupingRouter, GroupSize: 2, Underlying: routerOf(t, `
- {type: ListPartitionRouter, values: [1], cursor_field: a}
- {type: ListPartitionRouter, values: [2], cursor_field: b}
`)}
	router, err = NewRouter(twoKeys, Env{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "slices", slices(t, router), []string{"error: GroupingPartitionRouter expects a single partition key, got {b: 2, a: 1}"})
	if s := sent(t, router, New(nil)); s != "https://api.test/items" {
		t.Errorf("a grouping injects nothing, got %s", s)
	}
}

// UnionPartitionRouter: each child's partitions in order, a value seen before dropped, the
// other keys of a partition moved to the extra fields.
func TestUnionRouter(t *testing.T) {
	r := routerOf(t, `
type: UnionPartitionRouter
partition_field: pid
partition_routers:
  - {type: ListPartitionRouter, values: ["1", "9", "1"], cursor_field: pid}
  - type: SubstreamPartitionRouter
    parent_stream_configs:
      - {type: ParentStreamConfig, stream: {$ref: "#/definitions/other"}, parent_key: id, partition_field: pid, extra_fields: [[name]]}
`)
	p := &parents{records: map[string][]string{"others": {`{"id":9,"name":"nine"}`, `{"id":1,"name":"one"}`, `{"id":9,"name":"again"}`}}}
	router, err := NewRouter(r, p.env(nil))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "slices", slices(t, router), []string{
		`{"pid":"1"} | {}`,
		`{"pid":"9"} | {}`,
		`{"pid":9} | {"name":"nine","parent_slice":{}}`,
		`{"pid":1} | {"name":"one","parent_slice":{}}`,
	})
	if s := sent(t, router, New(nil)); s != "https://api.test/items" {
		t.Errorf("a union injects nothing, got %s", s)
	}
}

func TestUnionRouterErrors(t *testing.T) {
	tests := []struct {
		name, router string
		config       map[string]any
		want         []string
	}{{
		name: "a child without the partition field",
		router: `
type: UnionPartitionRouter
partition_field: pid
partition_routers:
  - {type: ListPartitionRouter, values: ["1"], cursor_field: id}
  - {type: ListPartitionRouter, values: ["2"], cursor_field: pid}`,
		want: []string{`error: UnionPartitionRouter expects every child to give the partition field "pid", got {id: "1"}: name it pid in every child (cursor_field, partition_field)`},
	}, {
		name: "a value that cannot be deduplicated",
		router: `
type: UnionPartitionRouter
partition_field: pid
partition_routers:
  - {type: ListPartitionRouter, values: "{{ config.v }}", cursor_field: pid}
  - {type: ListPartitionRouter, values: ["2"], cursor_field: pid}`,
		config: map[string]any{"v": []any{int64(5), []any{int64(1), int64(2)}}},
		want:   []string{`{"pid":5} | {}`, `error: UnionPartitionRouter can only deduplicate single values, got [1,2] for "pid"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRouter(routerOf(t, tt.router), Env{Globals: template.Globals{Config: tt.config}})
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "slices", slices(t, r), tt.want)
		})
	}
}

// A list of routers is their cartesian product, the first varying slowest; a key in two
// routers takes the first's value, keys in the order of the last router's partition first;
// two routers setting the same request option: the first one's value.
func TestCartesianRouter(t *testing.T) {
	r := routerOf(t, `
- {type: ListPartitionRouter, values: ["x", "y"], cursor_field: k1, request_option: {type: RequestOption, inject_into: request_parameter, field_name: k}}
- {type: ListPartitionRouter, values: ["1", "2"], cursor_field: k2, request_option: {type: RequestOption, inject_into: request_parameter, field_name: k}}
- type: SubstreamPartitionRouter
  parent_stream_configs:
    - {type: ParentStreamConfig, stream: {$ref: "#/definitions/other"}, parent_key: id, partition_field: k1, extra_fields: [[name]], request_option: {type: RequestOption, inject_into: header, field_name: X-K}}
`)
	p := &parents{records: map[string][]string{"others": {`{"id":9,"name":"nine"}`}}}
	router, err := NewRouter(r, p.env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got, reqs []string
	for sl, err := range router.Slices(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, describe(sl))
		reqs = append(reqs, sent(t, router, sl))
	}
	equal(t, "slices", got, []string{
		`{"k1":"x","parent_slice":{},"k2":"1"} | {"name":"nine"}`,
		`{"k1":"x","parent_slice":{},"k2":"2"} | {"name":"nine"}`,
		`{"k1":"y","parent_slice":{},"k2":"1"} | {"name":"nine"}`,
		`{"k1":"y","parent_slice":{},"k2":"2"} | {"name":"nine"}`,
	})
	equal(t, "requests", reqs, []string{
		"https://api.test/items?k=x X-K: x",
		"https://api.test/items?k=x X-K: x",
		"https://api.test/items?k=y X-K: y",
		"https://api.test/items?k=y X-K: y",
	})
	// Every parent is read whole before the first combination.
	equal(t, "reads", p.reads, []string{"others:1"})
}

// A product with a router that has no slices has none; a child's error ends it; a consumer
// that stops early gets no more.
func TestCartesianRouterEdges(t *testing.T) {
	empty := routerOf(t, `
- {type: ListPartitionRouter, values: ["x"], cursor_field: a}
- {type: ListPartitionRouter, values: [], cursor_field: b}
`)
	r, err := NewRouter(empty, Env{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "empty product", slices(t, r), nil)

	failing := routerOf(t, `
- {type: ListPartitionRouter, values: ["x"], cursor_field: a}
- type: SubstreamPartitionRouter
  parent_stream_configs:
    - {type: ParentStreamConfig, stream: {$ref: "#/definitions/other"}, parent_key: id, partition_field: b}
`)
	p := &parents{fail: map[string]error{"others": errors.New("others failed")}}
	r, err = NewRouter(failing, p.env(nil))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "failing child", slices(t, r), []string{"error: others failed"})

	three := routerOf(t, `
- {type: ListPartitionRouter, values: ["x", "y"], cursor_field: a}
- {type: ListPartitionRouter, values: [1, 2], cursor_field: b}
`)
	r, err = NewRouter(three, Env{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for sl := range r.Slices(context.Background()) {
		got = append(got, sl.String())
		if len(got) == 3 {
			break
		}
	}
	equal(t, "stopped", got, []string{`{b: 1, a: "x"}`, `{b: 2, a: "x"}`, `{b: 1, a: "y"}`})
}

// Two parent configs setting the same option: the first wins, as in the CDK's mapping. A
// conflict with another source (here a paginator) is an error naming both.
func TestInjectConflicts(t *testing.T) {
	r := routerOf(t, `
type: SubstreamPartitionRouter
parent_stream_configs:
  - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parent"}, parent_key: id, partition_field: a, request_option: {type: RequestOption, inject_into: request_parameter, field_name: id}}
  - {type: ParentStreamConfig, stream: {$ref: "#/definitions/other"}, parent_key: id, partition_field: b, request_option: {type: RequestOption, inject_into: request_parameter, field_name: id}}
`)
	router, err := NewRouter(r, Env{})
	if err != nil {
		t.Fatal(err)
	}
	p := &record.Object{}
	p.Set("a", "first")
	p.Set("b", "second")
	if s := sent(t, router, New(p)); s != "https://api.test/items?id=first" {
		t.Errorf("request = %s", s)
	}
	b := request.New("data", "GET", "https://api.test/items")
	if err := b.SetParam("id", []string{"page"}, "the paginator"); err != nil {
		t.Fatal(err)
	}
	err = router.Inject(b, New(p))
	want := `request parameter "id" is set by both the paginator and the partition router; remove one of them`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	list, err := NewRouter(routerOf(t, `{type: ListPartitionRouter, values: [1], cursor_field: a, request_option: {type: RequestOption, inject_into: request_parameter, field_name: id}}`), Env{})
	if err != nil {
		t.Fatal(err)
	}
	cart, err := NewRouter(routerOf(t, `
- {type: ListPartitionRouter, values: [1], cursor_field: a, request_option: {type: RequestOption, inject_into: request_parameter, field_name: id}}
- {type: ListPartitionRouter, values: [2], cursor_field: b}
`), Env{})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Router{"list": list, "product": cart} {
		b := request.New("data", "GET", "https://api.test/items")
		_ = b.SetParam("id", []string{"page"}, "the paginator")
		if err := r.Inject(b, New(p)); err == nil || err.Error() != want {
			t.Errorf("%s: error = %v, want %s", name, err, want)
		}
	}
}

// Templates that fail to render and values that are not a list are reported with the
// router and field they come from.
func TestNewRouterErrors(t *testing.T) {
	tests := []struct {
		name, router string
		config       map[string]any
		want         string
	}{{
		name:   "values not a list",
		router: `{type: ListPartitionRouter, values: "{{ config.regions }}", cursor_field: region}`,
		config: map[string]any{"regions": "eu,us"},
		want:   `ListPartitionRouter values: {{ config.regions }} gives "eu,us", not a list: make the testing value a list, or split a text in the template (.split(','))`,
	}, {
		name:   "parent_key renders nothing",
		router: "type: SubstreamPartitionRouter\nparent_stream_configs:\n  - {type: ParentStreamConfig, stream: {$ref: \"#/definitions/parent\"}, parent_key: \"{{ config.key }}\", partition_field: p}",
		config: map[string]any{"key": "/"},
		want:   `SubstreamPartitionRouter parent_stream_configs[0]: parent_key "/" names no field`,
	}, {
		name:   "a grouping's underlying router fails",
		router: "type: GroupingPartitionRouter\ngroup_size: 1\nunderlying_partition_router: {type: ListPartitionRouter, values: \"{{ config.v }}\", cursor_field: k}",
		config: map[string]any{"v": 5},
		want:   `ListPartitionRouter values: {{ config.v }} gives 5, not a list: make the testing value a list, or split a text in the template (.split(','))`,
	}, {
		name:   "a union's child fails",
		router: "type: UnionPartitionRouter\npartition_field: k\npartition_routers:\n  - {type: ListPartitionRouter, values: [1], cursor_field: k}\n  - {type: ListPartitionRouter, values: \"{{ config.v }}\", cursor_field: k}",
		config: map[string]any{"v": 5},
		want:   `ListPartitionRouter values: {{ config.v }} gives 5, not a list: make the testing value a list, or split a text in the template (.split(','))`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRouter(routerOf(t, tt.router), Env{Globals: template.Globals{Config: tt.config}})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
		})
	}
	if _, err := NewRouter(&manifest.Router{Type: "CustomPartitionRouter"}, Env{}); err == nil || err.Error() != "partition router CustomPartitionRouter is not supported" {
		t.Errorf("error = %v", err)
	}
}

// The CDK's own request options for a product of six list routers (testdata/cdk-cartesian,
// made by cartesian.py): query parameters in the order of the last router's first, a
// parameter two routers set with the first one's value, the partition's keys likewise.
func TestCartesianRequestOptionsAsCDK(t *testing.T) {
	r := routerOf(t, `
- {type: ListPartitionRouter, values: ["https://a.test", "https://b.test"], cursor_field: url, request_option: {type: RequestOption, inject_into: request_parameter, field_name: url}}
- {type: ListPartitionRouter, values: ["s1"], cursor_field: first, request_option: {type: RequestOption, inject_into: request_parameter, field_name: shared}}
- {type: ListPartitionRouter, values: ["desktop"], cursor_field: strategy, request_option: {type: RequestOption, inject_into: request_parameter, field_name: strategy}}
- {type: ListPartitionRouter, values: ["s2"], cursor_field: last, request_option: {type: RequestOption, inject_into: request_parameter, field_name: shared}}
- {type: ListPartitionRouter, values: ["h1"], cursor_field: h1, request_option: {type: RequestOption, inject_into: header, field_name: X-One}}
- {type: ListPartitionRouter, values: ["h2"], cursor_field: h2, request_option: {type: RequestOption, inject_into: header, field_name: X-Two}}
`)
	router, err := NewRouter(r, Env{})
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/cdk-cartesian/cartesian.out")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		v, err := record.Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		o := v.(*record.Object)
		part, _ := o.Get("partition")
		p, _ := record.Marshal(part)
		params, _ := o.Get("params")
		var query []string
		for _, kv := range params.([]any) {
			pair := kv.([]any)
			query = append(query, url.QueryEscape(pair[0].(string))+"="+url.QueryEscape(pair[1].(string)))
		}
		headers, _ := o.Get("headers")
		var hs []string
		for _, kv := range headers.([]any) {
			pair := kv.([]any)
			hs = append(hs, pair[0].(string)+": "+pair[1].(string))
		}
		want = append(want, string(p)+" https://api.test/items?"+strings.Join(query, "&")+" "+strings.Join(hs, " "))
	}
	var got []string
	for sl, err := range router.Slices(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		b := request.New("data", "GET", "https://api.test/items")
		if err := router.Inject(b, sl); err != nil {
			t.Fatal(err)
		}
		req, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		p, _ := record.Marshal(sl.Partition)
		// Headers travel in a map: their order is the builder's.
		var hs []string
		for _, h := range b.HeaderNames() {
			hs = append(hs, h+": "+req.Header.Get(h))
		}
		got = append(got, string(p)+" "+req.URL+" "+strings.Join(hs, " "))
	}
	equal(t, "CDK's slices and request options", got, want)
}
