// Package streaminfo describes the streams of a definition for `connector streams`: how
// each is paginated, partitioned, read incrementally, and keyed, as one line of words and
// as the JSON object scripts read. It reads the definition only; templates that need the
// testing values are rendered with them when they are given, else shown as written.
package streaminfo

import (
	"strings"

	"connector/pkg/incremental"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// Info is one stream.
type Info struct {
	Name string `json:"name"`
	// Dynamic is set for a stream made by dynamic_streams.
	Dynamic bool `json:"dynamic"`
	// Conditional is set for a stream of a ConditionalStreams (whose condition holds).
	Conditional bool `json:"conditional,omitempty"`
	// Pagination is always set (NoPagination at least); the others are nil when the stream
	// has none.
	Pagination   *Part `json:"pagination"`
	Partitioning *Part `json:"partitioning"`
	Incremental  *Part `json:"incremental"`
	// PrimaryKey is the primary key as field paths: [["id"]], [["id"], ["date"]].
	PrimaryKey [][]string `json:"primary_key"`
	// Group is the stream group (stream_groups) the stream is in, "" for none: no other
	// stream of the group is read at the same time.
	Group string `json:"group,omitempty"`
}

// Part is one aspect of a stream: the component's type, and a line saying what it does.
type Part struct {
	Type string `json:"type"`
	// Field is the cursor field of an incremental cursor ("" otherwise).
	Field string `json:"cursor_field,omitempty"`
	Text  string `json:"text"`
}

// Of describes stream s; config is the testing values (nil or empty when there are none).
func Of(s *manifest.Stream, config map[string]any, dynamic bool) Info {
	in := Info{Name: s.Name, Dynamic: dynamic, PrimaryKey: s.PrimaryKeyPaths(), Group: s.Group}
	if in.PrimaryKey == nil {
		in.PrimaryKey = [][]string{}
	}
	r := renderer{config: config}
	in.Pagination = r.pagination(s)
	if s.Router != nil {
		in.Partitioning = &Part{Type: s.Router.Type, Text: r.router(s.Router)}
	}
	in.Incremental = r.incremental(s)
	return in
}

// Line is the text form of Info's parts, for the columns of `connector streams`:
// pagination, partitioning, incremental cursor, primary key ("-" for none).
func (in Info) Line() []string {
	text := func(p *Part) string {
		if p == nil {
			return "-"
		}
		return p.Text
	}
	var keys []string
	for _, k := range in.PrimaryKey {
		keys = append(keys, strings.Join(k, "."))
	}
	pk := strings.Join(keys, ", ")
	if pk == "" {
		pk = "-"
	}
	return []string{text(in.Pagination), text(in.Partitioning), text(in.Incremental), pk}
}

// renderer renders the templates a description shows.
type renderer struct{ config map[string]any }

// text is a template rendered with the testing values and the component's parameters, or
// its source when that gives nothing (a value the testing values lack).
func (r renderer) text(t *template.Template, params map[string]any) string {
	if t == nil {
		return ""
	}
	if s, err := t.Render(template.Globals{Config: r.config}.Vars(params)); err == nil && s != "" {
		return s
	}
	return t.Source()
}

func (r renderer) pagination(s *manifest.Stream) *Part {
	if s.Async != nil {
		dl := "NoPagination"
		if p := s.Async.DownloadPaginator; p != nil {
			dl = r.paginator(p)
		}
		return &Part{Type: "AsyncRetriever", Text: "AsyncRetriever job, downloads " + dl}
	}
	if s.Paginator == nil {
		return &Part{Type: "NoPagination", Text: "NoPagination"}
	}
	return &Part{Type: s.Paginator.Strategy.Type, Text: r.paginator(s.Paginator)}
}

// paginator says `OffsetIncrement, page size 100`: the strategy's own summary, its page
// size rendered with the testing values.
func (r renderer) paginator(p *manifest.Paginator) string {
	return paginate.Summary(p, r.text(p.Strategy.PageSize, p.Parameters))
}

// router says what divides a stream into partitions: the router's own words.
func (r renderer) router(rt *manifest.Router) string {
	return slice.Describe(rt, template.Globals{Config: r.config})
}

// incremental says how a stream is read incrementally: the cursor's own summary, its
// templates rendered with the testing values.
func (r renderer) incremental(s *manifest.Stream) *Part {
	inc, prefix := s.Incremental, ""
	if s.Delegating != nil && s.Delegating.Incremental != nil {
		inc, prefix = s.Delegating.Incremental.Incremental, "StateDelegatingStream, with a state: "
	}
	if inc == nil {
		return nil
	}
	field, text := incremental.Summary(inc, s.Router, template.Globals{Config: r.config})
	return &Part{Type: inc.Type, Field: field, Text: prefix + text}
}
