package cmd

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// cdkState is a state file the Airbyte CDK wrote or read in one of the incremental examples.
func cdkState(example, run, file string) string {
	return filepath.Join("testdata", "incremental-cdk", example, run, file)
}

func TestStateShow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, format, stdout string
	}{
		{cdkState("lookback", "run1", "state-out.json"), "text", "orders: modified = \"2024-03-05\"\n"},
		{cdkState("state-formats", "namespace", "state-in.json"), "text", "events (namespace public): updated_at = \"2024-03-05T11:00:00Z\"\n"},
		{cdkState("state-formats", "global-type", "state-in.json"), "text", "events (GLOBAL state): updated_at = \"2024-03-04T00:00:00Z\"\n"},
		{cdkState("state-formats", "legacy-mapping", "state-in.json"), "text", "events: updated_at = \"2024-03-04T00:00:00Z\"\n"},
		{cdkState("state-delegating", "run1", "state-out.json"), "text", "customers: full refresh, read to its end\n"},
		{cdkState("incremental-dependency", "run2", "state-out.json"), "text", `comments: 3 partitions
  use_global_cursor: false
  state: updated_at = "2024-03-06T09:00:00Z"
  lookback_window: 1
  parent_state: {"projects":{"updated_at":"2024-03-06T07:00:00Z"}}
  partition {"parent_slice":{},"project_id":1}: updated_at = "2024-03-01T10:00:00Z"
  partition {"parent_slice":{},"project_id":2}: updated_at = "2024-03-06T09:00:00Z"
  partition {"parent_slice":{},"project_id":3}: updated_at = "2024-03-06T08:00:00Z"
`},
		{cdkState("global-cursor", "run2", "state-out.json"), "text", `comments: global cursor
  use_global_cursor: true
  state: updated_at = "2024-03-06T10:00:00Z"
  lookback_window: 1
  parent_state: {}
`},
		{cdkState("substream-per-partition", "run1", "state-out.json"), "json",
			`{"stream":"comments","partitions":2,"state":{"use_global_cursor":false,"states":[{"partition":{"parent_slice":{},"project_id":1},"cursor":{"updated_at":"2024-03-04T10:00:00Z"}},{"partition":{"parent_slice":{},"project_id":2},"cursor":{"updated_at":"2024-03-02T09:00:00Z"}}],"state":{"updated_at":"2024-03-04T10:00:00Z"},"lookback_window":1,"parent_state":{}}}` + "\n"},
		{cdkState("state-formats", "global-type", "state-in.json"), "json", `{"stream":"events","global":true,"state":{"updated_at":"2024-03-04T00:00:00Z"}}` + "\n"},
		{cdkState("state-formats", "namespace", "state-in.json"), "json", `{"stream":"events","namespace":"public","state":{"updated_at":"2024-03-05T11:00:00Z"}}` + "\n"},
	}
	for _, tt := range tests {
		res := runCLI(t, "", "state", "show", tt.file, "--format", tt.format)
		if res.Code != 0 || res.Stdout != tt.stdout || res.Stderr != "" {
			t.Errorf("state show %s --format %s: exit %d\nstdout\n%s\nwant\n%s\nstderr %s", tt.file, tt.format, res.Code, res.Stdout, tt.stdout, res.Stderr)
		}
	}
	empty := writeFile(t, "state.json", "[]\n")
	if res := runCLI(t, "", "state", "show", empty); res.Code != 0 || res.Stdout != "" || res.Stderr != empty+" holds no state\n" {
		t.Errorf("an empty state: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestStateDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b, format string
		code               int
		stdout             string
	}{
		{"partitions", cdkState("substream-per-partition", "run1", "state-out.json"), cdkState("substream-per-partition", "run2", "state-out.json"), "text", 1,
			`~ comments  state: updated_at "2024-03-04T10:00:00Z" → "2024-03-06T10:00:00Z"
~ comments  partition {"parent_slice":{},"project_id":1}: updated_at "2024-03-04T10:00:00Z" → "2024-03-06T10:00:00Z"
+ comments  partition {"parent_slice":{},"project_id":3}: updated_at = "2024-03-06T09:00:00Z"
`},
		{"partitions as JSON", cdkState("substream-per-partition", "run1", "state-out.json"), cdkState("substream-per-partition", "run2", "state-out.json"), "json", 1,
			`{"change":"changed","stream":"comments","key":"state","old":{"updated_at":"2024-03-04T10:00:00Z"},"new":{"updated_at":"2024-03-06T10:00:00Z"}}
{"change":"changed","stream":"comments","partition":{"parent_slice":{},"project_id":1},"old":{"updated_at":"2024-03-04T10:00:00Z"},"new":{"updated_at":"2024-03-06T10:00:00Z"}}
{"change":"added","stream":"comments","partition":{"parent_slice":{},"project_id":3},"new":{"updated_at":"2024-03-06T09:00:00Z"}}
`},
		{"a cursor", cdkState("lookback", "run1", "state-out.json"), cdkState("lookback", "run2", "state-out.json"), "text", 1,
			"~ orders  modified: \"2024-03-05\" → \"2024-03-08\"\n"},
		{"a global cursor become per partition", cdkState("global-cursor", "run2", "state-out.json"), cdkState("substream-per-partition", "run2", "state-out.json"), "text", 1,
			`~ comments  use_global_cursor: true → false
+ comments  partition {"parent_slice":{},"project_id":1}: updated_at = "2024-03-06T10:00:00Z"
+ comments  partition {"parent_slice":{},"project_id":2}: updated_at = "2024-03-02T09:00:00Z"
+ comments  partition {"parent_slice":{},"project_id":3}: updated_at = "2024-03-06T09:00:00Z"
`},
		{"streams added and removed", cdkState("lookback", "run1", "state-out.json"), cdkState("state-formats", "namespace", "state-in.json"), "text", 1,
			"- orders: modified = \"2024-03-05\"\n+ events (namespace public): updated_at = \"2024-03-05T11:00:00Z\"\n"},
		{"removed as JSON", cdkState("lookback", "run1", "state-out.json"), cdkState("state-formats", "namespace", "state-in.json"), "json", 1,
			`{"change":"removed","stream":"orders","old":{"modified":"2024-03-05"}}` + "\n" +
				`{"change":"added","stream":"events","namespace":"public","new":{"updated_at":"2024-03-05T11:00:00Z"}}` + "\n"},
		{"full refresh to a cursor", cdkState("state-delegating", "run1", "state-out.json"), cdkState("state-delegating", "run2", "state-out.json"), "text", 1,
			"+ customers  updated: \"2024-03-04T10:00:00Z\"\n"},
		// The same state in a GLOBAL message and in the older mapping.
		{"equal", cdkState("state-formats", "global-type", "state-in.json"), cdkState("state-formats", "legacy-mapping", "state-in.json"), "text", 0, ""},
		{"equal as JSON", cdkState("incremental-dependency", "run2", "state-out.json"), cdkState("incremental-dependency", "run2", "state-out.json"), "json", 0, ""},
	}
	for _, tt := range tests {
		res := runCLI(t, "", "state", "diff", tt.a, tt.b, "--format", tt.format)
		if res.Code != tt.code || res.Stdout != tt.stdout || res.Stderr != "" {
			t.Errorf("%s: exit %d\nstdout\n%s\nwant exit %d\n%s\nstderr %s", tt.name, res.Code, res.Stdout, tt.code, tt.stdout, res.Stderr)
		}
	}
}

func TestStateErrors(t *testing.T) {
	t.Parallel()
	good := cdkState("lookback", "run1", "state-out.json")
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.json")
	number := writeFile(t, "number.json", "42\n")
	global := writeFile(t, "global.json", `[{"type":"GLOBAL","global":{"shared_state":{"lsn":7},"stream_states":[]}}]`)
	def := filepath.Join("..", "definitions", "no-auth.yaml")
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"state", "show"}, 2, "error: state show needs exactly one state file, got 0\nRun 'connector state show --help' for usage.\n"},
		{[]string{"state", "diff", good}, 2, "error: state diff needs two state files, got 1\nRun 'connector state diff --help' for usage.\n"},
		{[]string{"state", "shwo", good}, 2, "error: unknown command \"shwo\" for connector state; did you mean \"show\"?\nRun 'connector state --help' for usage.\n"},
		{[]string{"state", "list"}, 2, "error: unknown command \"list\" for connector state; the commands are show, diff\nRun 'connector state --help' for usage.\n"},
		{[]string{"state", "show", good, "--format", "yaml"}, 2, "error: --format must be text or json, not \"yaml\"\n"},
		{[]string{"state", "show", missing}, 2, "error: cannot read the state file: " + missing + ": no such file or directory\n"},
		{[]string{"state", "diff", good, dir}, 2, "error: cannot read the state file: " + dir + ": is a directory\n"},
		{[]string{"state", "show", number}, 3, "error: state file " + number + ": a state file is a list of STATE messages (or a mapping of stream names to states), not a number\n"},
		{[]string{"state", "diff", def, good}, 3, "error: state file " + def + ": line 1: invalid JSON at byte 0: unexpected '#'\n"},
		{[]string{"state", "diff", good, global}, 3, "error: state file " + global + ": [0].global: a GLOBAL state with a `shared_state` (as database sources write) is not one a declarative connector reads; give each stream its own STREAM state\n"},
	}
	for _, tt := range tests {
		res := runCLI(t, "", tt.args...)
		if res.Code != tt.code || res.Stdout != "" || res.Stderr != tt.stderr {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s\nwant exit %d\n%s", tt.args, res.Code, res.Stdout, res.Stderr, tt.code, tt.stderr)
		}
	}
}

// The flags of state show and state diff, as parsed.
func TestStateFlags(t *testing.T) {
	t.Parallel()
	io := newIOStreams(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	var show *stateShowOptions
	c := newCmdStateShow(io, func(o *stateShowOptions) error { show = o; return nil })
	c.SetArgs([]string{"a.json", "--format", "json"})
	if err := c.Execute(); err != nil || show.file != "a.json" || show.format != "json" {
		t.Errorf("show: %v %+v", err, show)
	}
	var diff *stateDiffOptions
	c = newCmdStateDiff(io, func(o *stateDiffOptions) error { diff = o; return nil })
	c.SetArgs([]string{"a.json", "b.json"})
	if err := c.Execute(); err != nil || diff.a != "a.json" || diff.b != "b.json" || diff.format != "text" {
		t.Errorf("diff: %v %+v", err, diff)
	}
}
