package resolve

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"connector/pkg/dynamic"
	"connector/pkg/manifest"
	"connector/pkg/template"
)

// full_resolve of a definition whose dynamic streams come from the config, compared with the
// answer the CDK's route gives (testdata/full-config.cdk.json, stream_limit 3): mappings that
// set a value, create a path (create_or_update), glob a key, apply on a condition; the
// template's parameters propagated again with use_parent_parameters false; two definitions
// of one name sharing the limit; the static stream's dynamic_stream_name null.
func TestFullAsTheCDK(t *testing.T) {
	src, err := os.ReadFile("testdata/full-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var config map[string]any
	readJSON(t, "testdata/full-config.config.json", &config)
	var want struct {
		Manifest json.RawMessage `json:"manifest"`
	}
	readJSON(t, "testdata/full-config.cdk.json", &want)

	def, diags, err := manifest.ParseContext(context.Background(), "full-config.yaml", src)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %v", err, diags)
	}
	made, err := dynamic.Edits(context.Background(), def, template.Globals{Config: config}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := Manifest(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Full(resolved, made, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Encode(full, "")
	if string(got) != string(want.Manifest) {
		t.Errorf("differs at byte %d:\n…%s…\nwant\n…%s…", firstDifference(got, want.Manifest), around(got, want.Manifest), around(want.Manifest, got))
	}
}

func fullOf(t *testing.T, manifestJSON string, made []Made, limit int, redact func(string) string) (string, error) {
	t.Helper()
	m, err := Parse([]byte(manifestJSON))
	if err != nil {
		t.Fatal(err)
	}
	full, err := Full(m, made, limit, redact)
	if err != nil {
		return "", err
	}
	b, _ := Encode(full, "")
	return string(b), nil
}

func TestFullErrors(t *testing.T) {
	const tmpl = `{"streams": [], "dynamic_streams": [{"type": "DynamicDeclarativeStream", "name": "d", "stream_template": {"type": "DeclarativeStream", "name": "x"}, "components_resolver": {"type": "%s"}}]}`
	name := func(v any) []manifest.Edit { return []manifest.Edit{{Path: []string{"name"}, Value: v}} }
	cases := []struct {
		resolver string
		made     []Made
		want     string
	}{
		{"ConfigComponentsResolver", []Made{{name("a"), name("a")}}, "Dynamic streams list contains a duplicate name: a. Please check your configuration."},
		{"HttpComponentsResolver", []Made{{name("a"), name("a")}}, "Dynamic streams list contains a duplicate name: a. Please contact Airbyte Support."},
		{"ConfigComponentsResolver", []Made{{name(int64(7))}}, "Expected stream name 7 to be a string, got <class 'int'>."},
	}
	for _, c := range cases {
		_, err := fullOf(t, strings.Replace(tmpl, "%s", c.resolver, 1), c.made, 100, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %v: error %v, want %q", c.resolver, c.made, err, c.want)
		}
	}
}

// The streams made are masked with the config's secrets; the requester of an
// HttpComponentsResolver's retriever gets use_cache, as the CDK sets it.
func TestFullMasksSecretsAndCachesTheResolver(t *testing.T) {
	m := `{"streams": [{"type": "DeclarativeStream", "name": "s", "url": "secret-1"}], "dynamic_streams": [{"type": "DynamicDeclarativeStream",
		"stream_template": {"type": "DeclarativeStream", "name": "", "retriever": {"type": "SimpleRetriever", "requester": {"type": "HttpRequester", "path": ""}}},
		"components_resolver": {"type": "HttpComponentsResolver", "retriever": {"type": "SimpleRetriever", "requester": {"type": "HttpRequester", "use_cache": false, "path": "/t"}}}}]}`
	made := []Made{{{{Path: []string{"name"}, Value: "t"}, {Path: []string{"retriever", "requester", "path"}, Value: "/t?key=secret-1"}}}}
	got, err := fullOf(t, m, made, 100, func(s string) string { return strings.ReplaceAll(s, "secret-1", "****") })
	if err != nil {
		t.Fatal(err)
	}
	want := `{"streams":[{"type":"DeclarativeStream","name":"s","url":"secret-1","dynamic_stream_name":null},` +
		`{"type":"DeclarativeStream","name":"t","retriever":{"type":"SimpleRetriever","requester":{"type":"HttpRequester","path":"/t?key=****"}},"dynamic_stream_name":"dynamic_stream_0"}],` +
		`"dynamic_streams":[{"type":"DynamicDeclarativeStream","stream_template":{"type":"DeclarativeStream","name":"","retriever":{"type":"SimpleRetriever","requester":{"type":"HttpRequester","path":""}}},` +
		`"components_resolver":{"type":"HttpComponentsResolver","retriever":{"type":"SimpleRetriever","requester":{"type":"HttpRequester","use_cache":true,"path":"/t"}}}}]}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// dpath.set and dpath.new on the manifest tree.
func TestDpath(t *testing.T) {
	cases := []struct {
		doc    string
		path   string
		create bool
		want   string
		count  int
	}{
		{`{"a": {"b": 1, "c": 2}}`, "a/b", false, `{"a":{"b":"V","c":2}}`, 1},
		{`{"a": {"b": 1, "c": 2}}`, "a/*", false, `{"a":{"b":"V","c":"V"}}`, 2},
		{`{"a": {"bx": 1, "cx": 2, "by": 3}}`, "a/b?", false, `{"a":{"bx":"V","cx":2,"by":"V"}}`, 2},
		{`{"a": [{"k": 1}, {"k": 2}]}`, "a/1/k", false, `{"a":[{"k":1},{"k":"V"}]}`, 1},
		{`{"a": [{"k": 1}, {"k": 2}]}`, "a/*/k", false, `{"a":[{"k":"V"},{"k":"V"}]}`, 2},
		{`{"a": {"b": 1}}`, "a/x/y", false, `{"a":{"b":1}}`, 0},
		{`{"a": {"b": 1}}`, "a/x/y", true, `{"a":{"b":1,"x":{"y":"V"}}}`, 0},
		{`{"a": {"b": 1}}`, "a/l/2", true, `{"a":{"b":1,"l":[null,null,"V"]}}`, 0},
		{`{"a": [1]}`, "a/3/k", true, `{"a":[1,null,null,{"k":"V"}]}`, 0},
	}
	for _, c := range cases {
		m, _ := Parse([]byte(c.doc))
		path := strings.Split(c.path, "/")
		n := dpathSet(m, path, "V")
		if n != c.count {
			t.Errorf("%s %s: set %d places, want %d", c.doc, c.path, n, c.count)
		}
		if n == 0 && c.create {
			if err := dpathNew(m, path, "V"); err != nil {
				t.Errorf("%s %s: %v", c.doc, c.path, err)
			}
		}
		if got, _ := Encode(m, ""); string(got) != c.want {
			t.Errorf("%s %s: %s, want %s", c.doc, c.path, got, c.want)
		}
	}
	m, _ := Parse([]byte(`{"a": "text"}`))
	if err := dpathNew(m, []string{"a", "b", "c"}, "V"); err == nil || err.Error() != "Path: ['a', 'b', 'c'][0]" {
		t.Errorf("a path through text: %v", err)
	}
}
