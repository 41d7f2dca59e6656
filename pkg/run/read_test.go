package run

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/output"
)

// partitionedAPI serves /items?part=P&offset=N: partition P has (P*7)%5 records, pages of 2;
// partition fail answers 500 after its first page. Each answer is delayed by a random few
// milliseconds, so that concurrent slices finish out of order.
func partitionedAPI(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(1, 2))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		d := time.Duration(rnd.IntN(3)) * time.Millisecond
		mu.Unlock()
		time.Sleep(d) // only the order in which answers arrive changes, never their content
		part := r.URL.Query().Get("part")
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		if part == "fail" && off > 0 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"no"}`)
			return
		}
		p, _ := strconv.Atoi(part)
		n := (p * 7) % 5
		if part == "fail" {
			n = 4
		}
		var recs []string
		for i := off; i < n && i < off+2; i++ {
			recs = append(recs, fmt.Sprintf(`{"part":%q,"i":%d}`, part, i))
		}
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(recs, ","))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func partitionedDefs(t *testing.T, base string, values []string) []*manifest.Stream {
	t.Helper()
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	stream := func(name string) string {
		return fmt.Sprintf(`
  - type: DeclarativeStream
    name: %s
    retriever:
      type: SimpleRetriever
      requester: {url_base: %q, path: /items}
      record_selector:
        extractor: {field_path: [data]}
      partition_router:
        type: ListPartitionRouter
        cursor_field: part
        values: [%s]
        request_option: {type: RequestOption, inject_into: request_parameter, field_name: part}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        pagination_strategy: {type: OffsetIncrement, page_size: 2}
`, name, base, strings.Join(quoted, ", "))
	}
	def, diags := manifest.Parse("def.yaml", []byte("version: 6.5.0\nstreams:"+stream("a")+stream("b")))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return def.Streams
}

// readAll runs Read with workers and returns stdout and the results.
func readOut(t *testing.T, o *Options, streams []*manifest.Stream, workers int) (string, []Result) {
	t.Helper()
	var buf bytes.Buffer
	w, err := output.NewRecordOutput(&buf, output.FormatEnvelope, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	seq := output.NewSequencer(ctx, w)
	var events []string
	var mu sync.Mutex
	hooks := Hooks{
		Start: func(s *manifest.Stream) { mu.Lock(); events = append(events, "start "+s.Name); mu.Unlock() },
		End: func(res Result) {
			mu.Lock()
			events = append(events, fmt.Sprintf("end %s %d slices %d pages %d records err=%v", res.Stream, res.Slices, res.Pages, res.Records, res.Err))
			mu.Unlock()
		},
	}
	results := Read(ctx, o, streams, workers, sequencerOutput{seq}, hooks)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String() + strings.Join(events, "\n"), results
}

// sequencerOutput adapts an output.Sequencer to Output.
type sequencerOutput struct{ s *output.Sequencer }

func (o sequencerOutput) Part() Part { return o.s.Part() }

// TestConcurrentReadIsTheSequentialRead: whatever the number of slices in flight, the
// output (records, and the stream starts and ends in between) is byte for byte that of a
// read one slice at a time, with partitions of zero records, several pages, and a failing
// partition whose later partitions are never written.
func TestConcurrentReadIsTheSequentialRead(t *testing.T) {
	api := partitionedAPI(t)
	for _, values := range [][]string{
		{},
		{"3"},
		{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"},
		{"1", "2", "3", "fail", "4", "5", "6", "7", "8"},
	} {
		streams := partitionedDefs(t, api.URL, values)
		o, _ := offsetStream(t, api.URL)
		want, wantRes := readOut(t, o, streams, 1)
		for _, workers := range []int{2, 4, 16} {
			got, gotRes := readOut(t, o, streams, workers)
			if got != want {
				t.Errorf("values %v, %d workers:\n%s\nwant (1 worker):\n%s", values, workers, got, want)
			}
			if fmt.Sprint(gotRes) != fmt.Sprint(wantRes) {
				t.Errorf("values %v, %d workers: results %v, want %v", values, workers, gotRes, wantRes)
			}
		}
	}
}
