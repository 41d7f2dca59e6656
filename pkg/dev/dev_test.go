package dev

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connector/pkg/diag"
	"connector/pkg/schemacheck"
)

func TestWorkspaceReadsTheFirstStreamWithTheBuilderLimits(t *testing.T) {
	p := newProject(t, "definitions/bearer-auth.yaml")
	ws := p.start(t, Config{})
	v := waitView(t, ws, "a result", settled)
	if v.Broken || v.Stream != "books" || !reflect.DeepEqual(v.Limits, DefaultLimits) {
		t.Fatalf("view: broken %v, stream %q, limits %+v", v.Broken, v.Stream, v.Limits)
	}
	wantStreams := []StreamInfo{{Name: "books", PrimaryKey: [][]string{{"id"}}}}
	if !reflect.DeepEqual(v.Streams, wantStreams) {
		t.Errorf("streams %+v, want %+v", v.Streams, wantStreams)
	}
	r := v.Results[0]
	// The CDK's test read stops at the page limits, not at the record limit: it says when it
	// reached that.
	if r.Error != "" || r.Records != 250 || r.Pages != 3 || r.Slices != 1 || !r.LimitReached {
		t.Fatalf("result: error %q, %d records, %d pages, %d slices, limit reached %v", r.Error, r.Records, r.Pages, r.Slices, r.LimitReached)
	}
	// No declared schema: every inferred field is undeclared; the YAML is ready to paste.
	if len(r.Fields) == 0 || r.Fields[0] != (schemacheck.Field{Path: "id", Inferred: "number", Diff: schemacheck.Undeclared}) {
		t.Errorf("fields %+v", r.Fields)
	}
	if !strings.HasPrefix(r.SchemaYAML, "schema_loader:\n  type: InlineSchemaLoader\n  schema:\n    $schema: http://json-schema.org/schema#\n") {
		t.Errorf("schema YAML:\n%s", r.SchemaYAML)
	}
	raw := string(ws.Current())
	if !strings.Contains(raw, `Bearer ****`) {
		t.Errorf("the view shows no masked Authorization header")
	}
	for _, s := range demoSecrets {
		if strings.Contains(raw, s) {
			t.Errorf("the view holds the secret %q", s)
		}
	}
}

func TestWorkspaceReadsAgainOnSaveAndKeepsTheLastGoodResultOfABrokenFile(t *testing.T) {
	p := newProject(t, "definitions/offset-pagination.yaml")
	ws := p.start(t, Config{Limits: Limits{Records: 250}})
	v := waitView(t, ws, "a result", settled)
	if r := v.Results[0]; r.Records != 250 || r.Pages != 3 {
		t.Fatalf("first read: %d records in %d pages, want 250 in 3", r.Records, r.Pages)
	}
	first := v.Round

	p.edit(t, "page_size: 100", "page_size: 50")
	v = waitView(t, ws, "the read after the edit", func(v *View) bool { return v.Round > first && settled(v) })
	if r := v.Results[0]; r.Records != 250 || r.Pages != 5 || v.Broken {
		t.Fatalf("after the edit: %d records in %d pages, broken %v; want 250 in 5", r.Records, r.Pages, v.Broken)
	}
	good := v.Round

	p.edit(t, "          pagination_strategy:\n", "          pagination_strategy: [\n")
	v = waitView(t, ws, "the broken file", func(v *View) bool { return v.Round > good && v.Broken })
	if len(v.Problems) == 0 || v.Problems[0].Severity != diag.Error || v.Problems[0].Line == 0 || v.Problems[0].File != p.def {
		t.Fatalf("problems %+v, want an error with its position in %s", v.Problems, p.def)
	}
	if len(v.Results) != 1 || v.Results[0].Round != good || v.Results[0].Pages != 5 {
		t.Errorf("the last good result is not kept: %+v", v.Results)
	}
	if v.Reading {
		t.Error("a broken file is being read")
	}
}

func TestWorkspaceWarnsAboutRecordsAgainstTheDeclaredSchema(t *testing.T) {
	p := newProject(t, "definitions/offset-pagination.yaml")
	p.edit(t, "      retriever:\n", `      schema_loader:
        type: InlineSchemaLoader
        schema:
          type: object
          properties:
            id: {type: integer}
            title: {type: string}
            price: {type: string}
            pages: {type: integer}
      retriever:
`)
	p.edit(t, "page_size: 100", "page_size: 3")
	ws := p.start(t, Config{Limits: Limits{Pages: 1}})
	v := waitView(t, ws, "a result", settled)
	r := v.Results[0]
	want := []schemacheck.Warning{
		{Kind: schemacheck.Mismatch, Record: 1, Pointer: "/price", Message: "got number, want string"},
		{Kind: schemacheck.Mismatch, Record: 2, Pointer: "/price", Message: "got number, want string"},
		{Kind: schemacheck.Mismatch, Record: 3, Pointer: "/price", Message: "got number, want string"},
	}
	if !reflect.DeepEqual(r.Check.Warnings, want) {
		t.Errorf("warnings %+v", r.Check.Warnings)
	}
	diffs := map[string]schemacheck.Diff{}
	for _, f := range r.Fields {
		diffs[f.Path] = f.Diff
	}
	if diffs["id"] != schemacheck.Same || diffs["price"] != schemacheck.Type || diffs["pages"] != schemacheck.Unseen || diffs["tags"] != schemacheck.Undeclared {
		t.Errorf("differences %v", diffs)
	}
	var declared map[string]any
	if err := json.Unmarshal(r.Declared, &declared); err != nil || declared["type"] != "object" {
		t.Errorf("declared schema %s (%v)", r.Declared, err)
	}
}

func TestWorkspaceChooseAndReadAgainFromState(t *testing.T) {
	p := newProject(t, "definitions/incremental-datetime.yaml")
	ws := p.start(t, Config{})
	v := waitView(t, ws, "a result", settled)
	if !v.Streams[0].Incremental || v.Streams[0].Cursor == "" {
		t.Fatalf("streams %+v, want an incremental stream with its cursor", v.Streams)
	}
	r := v.Results[0]
	if r.Error != "" || len(r.State) == 0 || r.From != "" {
		t.Fatalf("first read: error %q, state %s, from %q", r.Error, r.State, r.From)
	}
	ctx := context.Background()
	if err := ws.ReadAgain(ctx, true); err != nil {
		t.Fatal(err)
	}
	v = waitView(t, ws, "the read from the state", func(v *View) bool { return settled(v) && v.Results[0].From == "read" })
	if got := v.Results[0]; string(got.StartState) != string(r.State) {
		t.Errorf("started from %s, want %s", got.StartState, r.State)
	}
	if err := ws.Choose(ctx, "nope", Limits{}); err == nil || err.Error() != `unknown stream "nope"` {
		t.Errorf("choosing an unknown stream: %v", err)
	}
	if err := ws.Choose(ctx, v.Stream, Limits{Records: 7, Pages: 99}); err != nil {
		t.Fatal(err)
	}
	v = waitView(t, ws, "the read with new limits", func(v *View) bool { return settled(v) && v.Limits.Records == 7 })
	if r := v.Results[0]; v.Limits != (Limits{Records: 7, Pages: 20, Slices: 5}) || r.Limits != v.Limits || !r.LimitReached || r.From != "" {
		t.Errorf("limits %+v, read with %+v, limit reached %v, from %q", v.Limits, r.Limits, r.LimitReached, r.From)
	}
}

func TestWorkspaceReportsValuesProblemsWithPositions(t *testing.T) {
	p := newProject(t, "definitions/bearer-auth.yaml")
	p.write(t, p.values, "base_url: "+p.api.URL+"\nbearer_token: [1, 2]\n")
	ws := p.start(t, Config{})
	v := waitView(t, ws, "a broken view", func(v *View) bool { return v.Broken })
	if len(v.Problems) != 1 || v.Problems[0].File != p.values || v.Problems[0].Line != 2 {
		t.Fatalf("problems %+v, want one at %s:2", v.Problems, p.values)
	}
	p.write(t, p.values, "base_url: "+p.api.URL+"\nbearer_token: demo-bearer-token\n")
	v = waitView(t, ws, "a read", func(v *View) bool { return settled(v) && !v.Broken })
	if v.Results[0].Records != 250 {
		t.Errorf("after the fix: broken %v, %+v", v.Broken, v.Results)
	}
	if strings.Contains(string(ws.Current()), "demo-bearer-token") {
		t.Error("the view holds the bearer token")
	}
}

func TestWorkspaceAllReadsEveryStreamForTheTerminal(t *testing.T) {
	p := newProject(t, "definitions/substream-partition-router.yaml")
	ws := p.start(t, Config{All: true, Limits: Limits{Records: 5, Pages: 1, Slices: 2}})
	v := waitView(t, ws, "every stream read", func(v *View) bool { return settled(v) && len(v.Results) == len(v.Streams) })
	var out strings.Builder
	(&Printer{Out: &out}).View(v)
	// One page per slice: the 100 authors of the first page; the books of the first two
	// authors, a page each.
	want := "authors  100 records, 1 page, no warnings; schema: none declared (8 fields inferred)\n" +
		"author_books  4 records, 2 pages, no warnings; schema: none declared (11 fields inferred)\n"
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestWorkspaceCancelsTheReadInFlight(t *testing.T) {
	p := newProject(t, "definitions/offset-pagination.yaml")
	// A proxy in front of the demo API holds every request while hold is set, until the
	// request is cancelled.
	var hold, cancelled atomic.Bool
	hold.Store(true)
	held := make(chan struct{}, 10)
	target, _ := url.Parse(p.api.URL)
	forward := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hold.Load() {
			held <- struct{}{}
			<-r.Context().Done()
			cancelled.Store(true)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	vals, _ := os.ReadFile(p.values)
	p.write(t, p.values, strings.Replace(string(vals), p.api.URL, proxy.URL, 1))

	ws := p.start(t, Config{})
	v := waitView(t, ws, "a read in flight", func(v *View) bool { return v.Reading })
	first := v.Round
	<-held // the read's first request waits at the proxy
	hold.Store(false)
	p.edit(t, "page_size: 100", "page_size: 50")
	v = waitView(t, ws, "the read after the save", func(v *View) bool { return v.Round > first && settled(v) })
	// The proxy sees the cancelled request end once its connection is closed.
	for deadline := time.Now().Add(5 * time.Second); !cancelled.Load(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request of the read before the save was not cancelled")
		}
	}
	if len(v.Results) != 1 || v.Results[0].Round != v.Round || v.Results[0].Pages != 5 {
		t.Errorf("results %+v, want the read of round %d in 5 pages only", v.Results, v.Round)
	}
}

func TestWatcherSeesChangesOfContentOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "def.yaml")
	os.WriteFile(path, []byte("a: 1\n"), 0o600)
	w := &watcher{paths: []string{path}, every: 5 * time.Millisecond, settle: 5 * time.Millisecond}
	if got, _ := w.first().data(path); string(got) != "a: 1\n" {
		t.Fatalf("first read %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan snapshot)
	go w.run(ctx, out)
	next := func() (snapshot, bool) {
		select {
		case s := <-out:
			return s, true
		case <-time.After(300 * time.Millisecond):
			return snapshot{}, false
		}
	}
	// Saved again unchanged, with a new time: nothing to read.
	later := time.Now().Add(time.Second)
	os.Chtimes(path, later, later)
	if s, ok := next(); ok {
		t.Fatalf("a save without a change was reported: %v", s)
	}
	os.WriteFile(path, []byte("a: 2\n"), 0o600)
	s, ok := next()
	if got, err := s.data(path); !ok || err != nil || string(got) != "a: 2\n" {
		t.Fatalf("after a change: %q, %v, %v", got, err, ok)
	}
	os.Remove(path)
	s, ok = next()
	if _, err := s.data(path); !ok || !os.IsNotExist(err) {
		t.Fatalf("after the file was removed: %v, %v", err, ok)
	}
}
