package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// protocolSkeleton is what the protocol says of one stream, in order, without the texts:
// its records, its TRACE ERRORs (with their failure type) and its statuses; and the lines of
// the closing summary.
func protocolSkeleton(t *testing.T, out, stream string) (steps []string, summary []string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m struct {
			Type   string
			Record struct {
				Stream string
				Data   json.RawMessage
			}
			Log   struct{ Level, Message string }
			Trace struct {
				Type  string
				Error struct {
					Message          string
					FailureType      string                 `json:"failure_type"`
					StreamDescriptor *struct{ Name string } `json:"stream_descriptor"`
				}
				StreamStatus struct {
					StreamDescriptor struct{ Name string } `json:"stream_descriptor"`
					Status           string
				} `json:"stream_status"`
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case m.Type == "RECORD" && m.Record.Stream == stream:
			steps = append(steps, "RECORD "+string(m.Record.Data))
		case m.Type == "TRACE" && m.Trace.Type == "ERROR" && m.Trace.Error.StreamDescriptor != nil && m.Trace.Error.StreamDescriptor.Name == stream:
			steps = append(steps, "ERROR "+m.Trace.Error.FailureType)
		case m.Type == "TRACE" && m.Trace.Type == "STREAM_STATUS" && m.Trace.StreamStatus.StreamDescriptor.Name == stream:
			steps = append(steps, "STATUS "+m.Trace.StreamStatus.Status)
		case m.Type == "LOG" && m.Log.Level == "INFO" && strings.HasPrefix(m.Log.Message, "During the sync"):
			for _, l := range strings.Split(m.Log.Message, "\n") {
				if strings.HasPrefix(l, "During the sync") || strings.HasPrefix(l, stream+": ") {
					summary = append(summary, strings.SplitN(l, "AirbyteTracedException", 2)[0])
				}
			}
		}
	}
	return steps, summary
}

// Two of four partitions fail (testdata/slice-failures-cdk, README there): each failure is a
// TRACE ERROR where it comes, between the records, as the CDK writes it, and the closing
// summary has a line for each.
func TestSliceFailuresAsTheCDK(t *testing.T) {
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		part := r.URL.Query().Get("part")
		if part == "b" || part == "d" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error": "no part %s"}`, part)
			return
		}
		fmt.Fprintf(w, `{"data": [{"id": 1, "part": %q}]}`, part)
	})
	dir := filepath.Join("testdata", "slice-failures-cdk")
	config := writeFile(t, "config.json", `{"base_url": "`+api.URL+`"}`)
	res := runCLI(t, "", "airbyte", "read", "--config", config, "--catalog", filepath.Join(dir, "catalog.json"),
		"--manifest-path", filepath.Join(dir, "def.yaml"))
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", res.Code, res.Stdout)
	}
	cdk, err := os.ReadFile(filepath.Join(dir, "cdk.out"))
	if err != nil {
		t.Fatal(err)
	}
	gotSteps, gotSummary := protocolSkeleton(t, res.Stdout, "items")
	wantSteps, wantSummary := protocolSkeleton(t, string(cdk), "items")
	if strings.Join(gotSteps, "\n") != strings.Join(wantSteps, "\n") {
		t.Errorf("items:\n%s\nthe CDK's:\n%s", strings.Join(gotSteps, "\n"), strings.Join(wantSteps, "\n"))
	}
	if strings.Join(gotSummary, "\n") != strings.Join(wantSummary, "\n") || len(wantSummary) != 2 {
		t.Errorf("summary:\n%s\nthe CDK's:\n%s", strings.Join(gotSummary, "\n"), strings.Join(wantSummary, "\n"))
	}
}
