package run

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/slice"
)

// slicesLog is a streamLog that also writes down where slices begin and end.
type slicesLog struct{ streamLog }

func (l *slicesLog) SliceStart(stream string, sl *slice.Slice) {
	l.add(fmt.Sprintf("slice %s %d %s begins", stream, sl.Number, sl))
}

func (l *slicesLog) SliceEnd(stream string, sl *slice.Slice, err error) {
	l.add(fmt.Sprintf("slice %s %d ends (%v)", stream, sl.Number, err))
}

// testRead reads stream of def against api with the limits of a test read.
func testRead(t *testing.T, api *partAPI, def, stream string, tl TestLimits) ([]string, Result, *slicesLog) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "def.yaml")
	if err := os.WriteFile(path, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	d, diags := manifest.Load(path)
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	cfg := map[string]any{"base_url": api.URL}
	client := &httpx.Client{HTTP: &http.Client{}, Redactor: &redact.Redactor{}}
	a, err := auth.New(d.Authenticator, auth.Env{Config: cfg, Client: client, Redactor: client.Redactor, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	out, log := &emitter{}, &slicesLog{}
	o := &Options{Config: cfg, Auth: a, Client: client, Out: out, Observer: log, TestRead: &tl}
	res := Stream(context.Background(), o, d.Stream(stream))
	return out.lines, res, log
}

const testReadChild = `  - $ref: "#/definitions/parents"
  - type: DeclarativeStream
    name: children
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /children, request_parameters: {parent: "{{ stream_partition.parent_id }}"}}
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: parent_id}`

// A test read's limits hold per slice, in the stream and in its parent alike, as the CDK's
// test read decorates every paginator it makes: each child slice ends after 2 pages, the
// stream goes on with its next slice; the parent reads 2 pages of its slice, so only 2
// partitions exist. The slice observer hears each slice of both streams begin and end.
func TestTestReadPagesPerSliceInParentsToo(t *testing.T) {
	t.Parallel()
	api := servePartitions(t, map[string]any{
		"GET /parents":                     `{"data":[{"id":1}],"next":"p2"}`,
		"GET /parents?cursor=p2":           `{"data":[{"id":2}],"next":"p3"}`,
		"GET /parents?cursor=p3":           `{"data":[{"id":3}]}`,
		"GET /children?parent=1":           `{"data":[{"id":"1a"}],"next":"c2"}`,
		"GET /children?parent=1&cursor=c2": `{"data":[{"id":"1b"}],"next":"c3"}`,
		"GET /children?parent=2":           `{"data":[{"id":"2a"}]}`,
	})
	recs, res, log := testRead(t, api, partitionsDef(testReadChild), "children", TestLimits{Pages: 2, Slices: 5})
	checkLines(t, "records", recs, []string{`{"id":"1a"}`, `{"id":"1b"}`, `{"id":"2a"}`})
	checkLines(t, "requests", api.requests(), []string{
		"GET /parents", "GET /children?parent=1", "GET /children?parent=1&cursor=c2",
		"GET /parents?cursor=p2", "GET /children?parent=2",
	})
	checkResult(t, res, 2, 3, 3, "")
	// A parent's page is told once the child has taken its partitions.
	checkLines(t, "events", log.lines, []string{
		"start children",
		"start parents (for children)",
		"slice parents 1 {} begins",
		`slice children 1 {parent_id: 1, parent_slice: {}} begins`,
		"page children 1/1",
		"page children 1/2",
		"slice children 1 ends (<nil>)",
		"page parents 0/1",
		`slice children 2 {parent_id: 2, parent_slice: {}} begins`,
		"page children 2/1",
		"slice children 2 ends (<nil>)",
		"page parents 0/2",
		"slice parents 1 ends (<nil>)",
		"end parents: 1 slices, 2 pages, 2 records",
		"end children: 2 slices, 3 pages, 3 records",
	})
}

// The slice limit does not make a slice beyond it: the parent's second page, which only a
// third partition would need, is never asked for (the CDK's islice draws no more).
func TestTestReadSlicesLimitAsksForNoMore(t *testing.T) {
	t.Parallel()
	api := servePartitions(t, map[string]any{
		"GET /parents":           `{"data":[{"id":1},{"id":2}],"next":"p2"}`,
		"GET /parents?cursor=p2": `{"data":[{"id":3}]}`,
		"GET /children?parent=1": `{"data":[{"id":"1a"}]}`,
		"GET /children?parent=2": `{"data":[{"id":"2a"}]}`,
	})
	recs, res, _ := testRead(t, api, partitionsDef(testReadChild), "children", TestLimits{Pages: 5, Slices: 2})
	checkLines(t, "records", recs, []string{`{"id":"1a"}`, `{"id":"2a"}`})
	checkLines(t, "requests", api.requests(), []string{"GET /parents", "GET /children?parent=1", "GET /children?parent=2"})
	checkResult(t, res, 2, 2, 2, "")
}
