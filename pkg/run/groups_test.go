package run

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/manifest"
)

// groupAPI serves /{stream}?offset=N&part=P: 3 records a stream (pages of 2), ids 1 to 3. As
// each request arrives it notes which other streams have a request in flight. A request of
// q is held until a request of p arrives (once one has, no longer), or for hold: a read that
// lets p and q overlap does so for sure. Requests of r and p are held likewise until one of
// q has arrived.
type groupAPI struct {
	*httptest.Server
	hold time.Duration

	mu       sync.Mutex
	inFlight map[string]int
	met      map[[2]string]bool
	pCame    chan struct{}
	qCame    chan struct{}
}

func newGroupAPI(t *testing.T, hold time.Duration) *groupAPI {
	a := &groupAPI{hold: hold, inFlight: map[string]int{}, met: map[[2]string]bool{}, pCame: make(chan struct{}), qCame: make(chan struct{})}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := strings.TrimPrefix(r.URL.Path, "/")
		a.mu.Lock()
		for other, n := range a.inFlight {
			if n > 0 {
				a.met[[2]string{s, other}], a.met[[2]string{other, s}] = true, true
			}
		}
		a.inFlight[s]++
		came := map[string]chan struct{}{"p": a.pCame, "q": a.qCame}
		if ch := came[s]; ch != nil {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
		a.mu.Unlock()
		if wait := map[string]chan struct{}{"q": a.pCame, "r": a.qCame, "p": a.qCame}[s]; wait != nil {
			select {
			case <-wait:
			case <-time.After(a.hold):
			}
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		var recs []string
		for i := off + 1; i <= 3 && i <= off+2; i++ {
			recs = append(recs, fmt.Sprintf(`{"id":%d,"s":%q,"part":%q}`, i, s, r.URL.Query().Get("part")))
		}
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(recs, ","))
		a.mu.Lock()
		a.inFlight[s]--
		a.mu.Unlock()
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *groupAPI) overlapped(x, y string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.met[[2]string{x, y}]
}

// groupDefs are the streams q, r, c and p of a definition: p and q in the group g when
// grouped; r, in no group, has four partitions; c, in no group, reads p for its partitions.
func groupDefs(t *testing.T, base string, grouped bool) []*manifest.Stream {
	t.Helper()
	stream := func(name, extra string) string {
		return fmt.Sprintf(`
    %s:
      type: DeclarativeStream
      name: %s
      retriever:
        type: SimpleRetriever
        requester: {url_base: %q, path: /%s}
        record_selector: {extractor: {field_path: [data]}}
        paginator:
          type: DefaultPaginator
          page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
          pagination_strategy: {type: OffsetIncrement, page_size: 2}
%s`, name, name, base, name, extra)
	}
	src := "version: 6.5.0\ndefinitions:\n  streams:" +
		stream("p", "") + stream("q", "") +
		stream("r", `        partition_router:
          type: ListPartitionRouter
          cursor_field: part
          values: ["1", "2", "3", "4"]
          request_option: {type: RequestOption, inject_into: request_parameter, field_name: part}
`) +
		stream("c", `        partition_router:
          type: SubstreamPartitionRouter
          parent_stream_configs:
            - type: ParentStreamConfig
              stream: {$ref: "#/definitions/streams/p"}
              parent_key: id
              partition_field: part
              request_option: {type: RequestOption, inject_into: request_parameter, field_name: part}
`) + `streams:
  - $ref: "#/definitions/streams/q"
  - $ref: "#/definitions/streams/r"
  - $ref: "#/definitions/streams/c"
  - $ref: "#/definitions/streams/p"
`
	if grouped {
		src += "stream_groups:\n  g:\n    streams: [\"#/definitions/streams/p\", \"#/definitions/streams/q\"]\n    action: {type: BlockSimultaneousSyncsAction}\n"
	}
	def, diags := manifest.Parse("def.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return def.Streams
}

// With 4 workers, q and p (in one group) never have requests in flight at once: neither p
// read as a stream nor p read by c for its partitions, while q is read; r, in no group, is
// read alongside q. The output is that of a read one slice at a time. Without the group the
// same read lets p and q overlap: the server makes sure they would.
func TestStreamGroupsAreNeverReadAtOnce(t *testing.T) {
	var want string
	for _, grouped := range []bool{true, false} {
		hold := 5 * time.Second
		if grouped {
			hold = 200 * time.Millisecond
		}
		api := newGroupAPI(t, hold)
		o, _ := offsetStream(t, api.URL)
		streams := groupDefs(t, api.URL, grouped)
		if grouped && (streams[0].Group != "g" || streams[3].Group != "g" || streams[1].Group != "") {
			t.Fatalf("groups: %q %q %q", streams[0].Group, streams[1].Group, streams[3].Group)
		}
		got, res := readOut(t, o, streams, 4)
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("grouped %v: %s: %v", grouped, r.Stream, r.Err)
			}
		}
		if want == "" {
			want, _ = readOut(t, o, streams, 1)
		}
		if got != want {
			t.Errorf("grouped %v: the output differs from a read one slice at a time:\n%s\nwant:\n%s", grouped, got, want)
		}
		if o := api.overlapped("p", "q"); o == grouped {
			t.Errorf("grouped %v: p and q in flight at once: %v", grouped, o)
		}
		if !api.overlapped("q", "r") {
			t.Errorf("grouped %v: r was never read alongside q", grouped)
		}
	}
}

// A child whose parent is in a group waits while another stream of the group is read, even
// when the parent itself is not: the parent's records are read for the child's partitions.
// (The CDK 7.28.2 waits only for the parent itself.)
func TestStreamGroupsHoldAChildOfAGroupedParent(t *testing.T) {
	api := newGroupAPI(t, 200*time.Millisecond)
	o, _ := offsetStream(t, api.URL)
	streams := groupDefs(t, api.URL, true)
	// q, then c at once: c's read of p must wait for q's end.
	_, res := readOut(t, o, []*manifest.Stream{streams[0], streams[2]}, 4)
	if len(res) != 2 || res[0].Err != nil || res[1].Err != nil || res[1].Records != 9 {
		t.Fatalf("results: %v", res)
	}
	if api.overlapped("p", "q") || api.overlapped("c", "q") {
		t.Errorf("c read p (or itself) while q was read")
	}
}
