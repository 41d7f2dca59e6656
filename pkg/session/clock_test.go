package session

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/run"
	"connector/pkg/values"
)

// clockDefinition reads items from the API at base, and for each item its details (a child
// stream, whose parent is read again for it): every request carries the time its templates
// read, by now_utc(), day_delta(), today_utc() and today_with_timezone().
func clockDefinition(base string) string {
	requester := func(path, extra string) string {
		return `
      requester:
        type: HttpRequester
        url_base: "` + base + `"
        path: ` + path + `
        authenticator: {type: BearerAuthenticator, api_token: "{{ config['api_key'] }}"}
        request_parameters:
          at: "{{ now_utc().strftime('%Y-%m-%dT%H:%M') }}"
          next: "{{ day_delta(1, '%Y-%m-%d') }}"
          today: "{{ today_utc() }}"
          tokyo: "{{ today_with_timezone('Asia/Tokyo') }}"` + extra + `
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}`
	}
	return `version: 6.5.0
type: DeclarativeSource
definitions:
  items:
    type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever` + requester("/items", "") + `
streams:
  - $ref: "#/definitions/items"
  - type: DeclarativeStream
    name: details
    retriever:
      type: SimpleRetriever` + requester("/items", `
          item: "{{ stream_partition.item }}"`) + `
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/items"}, parent_key: id, partition_field: item}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
`
}

// Two replay-style runs on fixed clocks of their own and a run on the machine's clock read
// at the same time in one process, from one testing values object — one config map, the
// very thing the clocks were once looked up by. Each API receives the time of its own run,
// in every request: its streams', and those of the parent stream read for the child.
func TestRunsKeepTheirClocks(t *testing.T) {
	vals, err := values.Load(valuesFile(t, "api_key: key-secret-1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	type runner struct {
		api   *api
		clock func() time.Time // nil: the machine's
		s     *Session
	}
	runners := []*runner{
		{api: serveAPI(t), clock: func() time.Time { return time.Date(2021, 7, 9, 20, 30, 0, 0, time.UTC) }},
		{api: serveAPI(t), clock: func() time.Time { return time.Date(2024, 2, 29, 10, 0, 0, 0, time.UTC) }},
		{api: serveAPI(t)},
	}
	for _, r := range runners {
		d, err := Load(context.Background(), "def.yaml", []byte(clockDefinition(r.api.URL)))
		if err != nil {
			t.Fatal(err)
		}
		if r.s, err = Open(Inputs{DefName: "def.yaml", Def: d, Values: vals, TemplateClock: r.clock != nil}, Env{Now: r.clock}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.s.Close() })
		// Every read sends its requests: the session's cache of parent streams would answer
		// the later reads' items (a session is one run; this test reads 20 times in one).
		r.s.Client.Cache = nil
	}
	const reads = 20
	before := time.Now().UTC()
	var wg sync.WaitGroup
	errs := make(chan error, len(runners)*reads)
	for _, r := range runners {
		wg.Go(func() {
			for range reads {
				o := r.s.Options()
				o.Out = &collect{}
				for _, st := range r.s.Streams {
					if res := run.Stream(context.Background(), o, st); res.Err != nil {
						errs <- res.Err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	after := time.Now().UTC()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// A read asks for the items, then for the items again (the child's parent), then for
	// the details of item 1.
	want := func(at time.Time) []string {
		q := fmt.Sprintf("at=%s&next=%s&today=%s&tokyo=%s", url.QueryEscape(at.Format("2006-01-02T15:04")),
			at.AddDate(0, 0, 1).Format("2006-01-02"), at.Format("2006-01-02"), at.In(tokyo(t)).Format("2006-01-02"))
		read := []string{
			"GET /items?" + q + " Bearer key-secret-1",
			"GET /items?" + q + " Bearer key-secret-1",
			"GET /items?" + q + "&item=1 Bearer key-secret-1",
		}
		var out []string
		for range reads {
			out = append(out, read...)
		}
		return out
	}
	for _, r := range runners[:2] {
		if got, w := r.api.requests(), want(r.clock()); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("the run on the clock of %s: requests\n%s\nwant\n%s", r.clock(), strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
	}
	// The machine's clock: each request says a minute between the start and the end of the
	// reads, and the same dates as a clock at that minute would.
	got := runners[2].api.requests()
	if len(got) != 3*reads {
		t.Fatalf("the run on the machine's clock made %d requests, want %d:\n%s", len(got), 3*reads, strings.Join(got, "\n"))
	}
	for i, req := range got {
		u, err := url.Parse(strings.Fields(req)[1])
		if err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse("2006-01-02T15:04", u.Query().Get("at"))
		if err != nil || at.Before(before.Truncate(time.Minute)) || at.After(after) {
			t.Errorf("the run on the machine's clock: request %d at %q, not between %s and %s", i+1, u.Query().Get("at"), before, after)
			continue
		}
		if w := want(at)[i%3]; req != w {
			t.Errorf("the run on the machine's clock: request %d\n%s\nwant\n%s", i+1, req, w)
		}
	}
}

func tokyo(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
