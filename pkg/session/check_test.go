package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/redact"
)

// planText says a check plan in a line per target, "NAME" or "NAME: missing, WHY", after
// its NoStreams and Skipped.
func planText(p CheckPlan) []string {
	out := []string{fmt.Sprintf("no streams %v, skipped %d", p.NoStreams, p.Skipped)}
	for _, t := range p.Targets {
		switch {
		case t.Stream == nil:
			out = append(out, t.Name+": missing, "+t.Missing)
		case t.Stream.Name != t.Name:
			out = append(out, t.Name+": the stream "+t.Stream.Name)
		default:
			out = append(out, t.Name)
		}
	}
	return out
}

// conditionalDef is readDef with check.stream_names and a ConditionalStreams holding the
// stream "extra", there when the testing value with_extra is true.
func conditionalDef(names string) string {
	def := strings.Replace(readDef, "streams:\n", "check: {type: CheckStream, stream_names: ["+names+"]}\nstreams:\n", 1)
	return strings.Replace(def, "\nspec:\n", `
  - type: ConditionalStreams
    condition: "{{ config.get('with_extra', False) }}"
    streams:
      - type: DeclarativeStream
        name: extra
        retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /more}, record_selector: {$ref: "#/definitions/selector"}}
spec:
`, 1)
}

// The check plan of a CheckStream: its names in their order, a name the values left out
// of a ConditionalStreams missing with the condition's position, a name of no stream
// missing as such; without a check, every stream.
func TestCheckPlanNames(t *testing.T) {
	const vals = "base_url: https://api.test\napi_key: k-secret\n"
	s, err := open(t, conditionalDef("extra, more"), vals, Inputs{}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, "plan", planText(s.CheckPlan()), []string{
		"no streams false, skipped 0",
		"extra: missing, not among the streams: the condition of its ConditionalStreams (line 24:5) is false for the testing values",
		"more",
	})
	s, err = open(t, conditionalDef("extra"), vals+"with_extra: true\n", Inputs{}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, "plan with_extra", planText(s.CheckPlan()), []string{"no streams false, skipped 0", "extra"})

	s, err = open(t, readDef, vals, Inputs{}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, "plan without check", planText(s.CheckPlan()), []string{"no streams false, skipped 0", "items", "gone", "more"})
}

// tablesAPI serves /tables (the tables named) and /items/NAME (a record), writing down
// each request.
func tablesAPI(t *testing.T, tables ...string) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI())
		mu.Unlock()
		var list []string
		for _, n := range tables {
			list = append(list, `{"name":"`+n+`"}`)
		}
		switch {
		case r.URL.Path == "/tables":
			io.WriteString(w, `{"tables":[`+strings.Join(list, ",")+`]}`)
		case strings.HasPrefix(r.URL.Path, "/items"):
			io.WriteString(w, `{"data":[{"id":1}]}`)
		default:
			http.Error(w, `{"error":"no"}`, http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

// The check plan of a CheckDynamicStream, once the dynamic streams are made: the first
// stream_count streams; all of them skipped when use_check_availability is false.
func TestCheckPlanDynamic(t *testing.T) {
	srv, _ := tablesAPI(t, "a", "b", "c")
	for _, tt := range []struct {
		check string
		want  []string
	}{
		{"{type: CheckDynamicStream, stream_count: 2}", []string{"no streams false, skipped 0", "items", "t_a"}},
		{"{type: CheckDynamicStream, stream_count: 9}", []string{"no streams false, skipped 0", "items", "t_a", "t_b", "t_c"}},
		{"{type: CheckDynamicStream, stream_count: 2, use_check_availability: false}", []string{"no streams false, skipped 4"}},
	} {
		def := strings.Replace(dynamicDef(), "streams:\n", "check: "+tt.check+"\nstreams:\n", 1)
		s, err := open(t, def, "base_url: "+srv.URL+"\n", Inputs{}, Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Resolve(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		checkText(t, tt.check, planText(s.CheckPlan()), tt.want)
	}
	// Without a stream, static or made, there is nothing to check.
	empty, _ := tablesAPI(t)
	def := dynamicDef()
	def = def[:strings.Index(def, "streams:\n  - type: DeclarativeStream\n    name: items")] + "check: {type: CheckDynamicStream, stream_count: 1}\n" + def[strings.Index(def, "dynamic_streams:"):]
	s, err := open(t, def, "base_url: "+empty.URL+"\n", Inputs{}, Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	checkText(t, "no stream", planText(s.CheckPlan()), []string{"no streams true, skipped 0"})

	// A name of a dynamic stream the components did not make is missing.
	def = strings.Replace(dynamicDef(), "streams:\n", "check: {type: CheckStream, stream_names: [t_c, t_z]}\nstreams:\n", 1)
	s, err = open(t, def, "base_url: "+srv.URL+"\n", Inputs{}, Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	checkText(t, "CheckStream", planText(s.CheckPlan()), []string{
		"no streams false, skipped 0",
		"t_c",
		"t_z: missing, not among the streams: no stream of that name is defined or made by dynamic_streams",
	})
}

// DynamicEdits reads the components as Resolve does and gives, for each dynamic stream
// definition, each made stream's edits of its template; a failed request is an error
// saying the dynamic streams could not be made, not an InvalidError.
func TestDynamicEdits(t *testing.T) {
	srv, requests := tablesAPI(t, "a", "b")
	s, err := open(t, dynamicDef(), "base_url: "+srv.URL+"\n", Inputs{}, Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	edits, err := s.DynamicEdits(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, def := range edits {
		for j, stream := range def {
			for _, e := range stream {
				got = append(got, fmt.Sprintf("%d/%d %v", i, j, e))
			}
		}
	}
	checkText(t, "edits", got, []string{
		"0/0 {[name] t_a false {30 73}}",
		"0/0 {[retriever requester path] /items/a false {31 95}}",
		"0/1 {[name] t_b false {30 73}}",
		"0/1 {[retriever requester path] /items/b false {31 95}}",
	})
	checkText(t, "requests", requests(), []string{"/tables"})

	broken := strings.Replace(dynamicDef(), "path: /tables", "path: /broken", 1)
	s, err = open(t, broken, "base_url: "+srv.URL+"\n", Inputs{}, Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DynamicEdits(context.Background(), nil)
	var ie *InvalidError
	if err == nil || errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "resolving dynamic_streams: ") {
		t.Errorf("error %v", err)
	}
}
