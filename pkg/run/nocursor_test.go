package run

import (
	"fmt"
	"testing"
)

// NoCursor tells the CDK's state of a stream without a cursor (what a full refresh stream's
// final checkpoint carries) from an incremental stream's state.
func TestNoCursor(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {$ref: "#/definitions/sel"}
` + eventsStream)
	api := servePartitions(t, map[string]any{
		"GET /items": `{"data":[{"id":1}]}`,
		"GET /events?since=2024-01-01&until=2024-01-01": `{"data":[{"id":1,"updated":"2024-01-01"}]}`,
		"GET /events?since=2024-01-02&until=2024-01-03": `{"data":[]}`,
	})
	var got []string
	keep := func(o *Options) {
		o.Checkpoint = func(cp Checkpoint) {
			got = append(got, fmt.Sprintf("%s final=%v no cursor=%v", cp.Stream, cp.Final, cp.NoCursor()))
		}
	}
	for _, stream := range []string{"items", "events"} {
		if _, res, _ := readWith(t, api, def, stream, keep); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	checkLines(t, "checkpoints", got, []string{
		"items final=true no cursor=true",
		"events final=false no cursor=false",
		"events final=false no cursor=false",
		"events final=true no cursor=false",
	})
	mixed := Checkpoint{State: stateOf(t, map[string]string{"x": `{"__ab_no_cursor_state_message":true,"updated":"2024-01-01"}`})("x")}
	if mixed.NoCursor() {
		t.Error("a state with a cursor value besides the no-cursor key is taken for none")
	}
}
