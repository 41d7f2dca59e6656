package initvalues

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"connector/internal/testcorpus"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/values"
)

// update rewrites the golden files: go test ./pkg/initvalues -run TestGolden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// generate runs Generate on the specification of the definition at path.
func generate(t *testing.T, path string) (string, Result, *manifest.Spec) {
	t.Helper()
	spec, diags := manifest.LoadSpec(path)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	out, res, err := Generate(spec.Ordered, Options{Definition: filepath.ToSlash(path), File: "values.yaml"})
	if err != nil && !errors.Is(err, ErrNoProperties) {
		t.Fatalf("%s: %v", path, err)
	}
	return string(out), res, spec
}

// The file of each representative specification, compared with testdata/NAME.golden.
func TestGolden(t *testing.T) {
	for _, name := range []string{"oneof", "nested", "scalars"} {
		t.Run(name, func(t *testing.T) {
			got, _, _ := generate(t, filepath.Join("testdata", name+".yaml"))
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("missing golden file (run with -update): %v", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file (run with -update to accept):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
			}
		})
	}
}

// The lines that are not comments are exactly the required values (empty), the defaults
// and the fixed values; Result names what is left to fill in.
func TestActiveValues(t *testing.T) {
	for _, tc := range []struct {
		name                string
		want                map[string]any
		required, secrets   []string
		validates, defaults bool
	}{
		{
			name:     "oneof",
			want:     map[string]any{"credentials": map[string]any{"auth_type": "oauth2.0", "client_id": nil, "client_secret": nil, "refresh_token": nil}},
			required: []string{"credentials.client_id", "credentials.client_secret", "credentials.refresh_token"},
			secrets:  []string{"credentials.client_id", "credentials.client_secret", "credentials.refresh_token"},
		},
		{
			name: "nested",
			want: map[string]any{
				"window":  map[string]any{"days": int64(30), "unit": "day"},
				"filters": map[string]any{},
				"reports": []any{map[string]any{"name": nil, "level": "account"}},
				"regions": []any{"eu"},
				"extra":   nil,
			},
			required: []string{"reports[0].name", "extra"},
		},
		{
			name:     "scalars",
			want:     map[string]any{"api_key": nil, "start_date": nil, "region": nil, "page_size": int64(100), "mode": "live", "version": "2024-06"},
			required: []string{"api_key", "start_date", "region"},
			secrets:  []string{"api_key"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, res, _ := generate(t, filepath.Join("testdata", tc.name+".yaml"))
			vals, err := values.Parse("values.yaml", []byte(out))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(vals.Map, tc.want) {
				t.Errorf("values\n%#v\nwant\n%#v", vals.Map, tc.want)
			}
			if !slices.Equal(res.Required, tc.required) || !slices.Equal(res.Secrets, tc.secrets) {
				t.Errorf("required %q, secrets %q; want %q, %q", res.Required, res.Secrets, tc.required, tc.secrets)
			}
		})
	}
}

// Filled in, the file of each representative specification passes its validation, and so
// does every other kind of a oneOf, once its lines replace the first kind's.
func TestFilledInValidates(t *testing.T) {
	fill := map[string]map[string]string{
		"oneof":   {"client_id": "id", "client_secret": "s", "refresh_token": "r", "api_key": "k"},
		"nested":  {"name": "daily", "extra": "{}"},
		"scalars": {"api_key": "k", "start_date": `"2024-01-01T00:00:00Z"`, "region": "eu"},
	}
	for name, values := range fill {
		t.Run(name, func(t *testing.T) {
			out, _, spec := generate(t, filepath.Join("testdata", name+".yaml"))
			checkValid(t, fillIn(out, values), spec.ConnectionSpec)
		})
	}
	t.Run("oneof kind 2", func(t *testing.T) {
		out, _, spec := generate(t, filepath.Join("testdata", "oneof.yaml"))
		text := chooseKind(t, out, "credentials", 2)
		if !strings.Contains(text, "\n  auth_type: apikey\n  # API Key\n") {
			t.Fatalf("kind 2 not chosen:\n%s", text)
		}
		checkValid(t, fillIn(text, fill["oneof"]), spec.ConnectionSpec)
	})
}

func checkValid(t *testing.T, text string, spec map[string]any) {
	t.Helper()
	vals, err := values.Parse("values.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	vals.ApplyDefaults(spec)
	if err := vals.Validate(spec); err != nil {
		t.Errorf("%v\n%s", err, text)
	}
}

// fillIn gives a value to each empty line `key:` whose key is in vals.
func fillIn(text string, vals map[string]string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		t := strings.TrimLeft(strings.TrimPrefix(strings.TrimSpace(l), "- "), " ")
		if strings.HasPrefix(t, "#") || !strings.HasSuffix(t, ":") {
			continue
		}
		if v, ok := vals[strings.TrimSuffix(t, ":")]; ok {
			lines[i] = l + " " + v
		}
	}
	return strings.Join(lines, "\n")
}

// chooseKind edits the file as a user picks kind n of the oneOf under key: the lines of
// kind 1 go, those of kind n are uncommented.
func chooseKind(t *testing.T, text, key string, n int) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	start := slices.Index(lines, key+":")
	if start < 0 {
		t.Fatalf("no %s: line", key)
	}
	var out []string
	out = append(out, lines[:start+1]...)
	kind := 0
	i := start + 1
	for ; i < len(lines) && strings.HasPrefix(lines[i], "  "); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "  # kind ") || strings.HasPrefix(l, "  # or kind ") {
			kind++
			continue
		}
		switch {
		case kind == n && n == 1:
			out = append(out, l)
		case kind == n:
			out = append(out, "  "+strings.TrimPrefix(l, "  # "))
		}
	}
	return strings.Join(append(out, lines[i:]...), "\n")
}

// Each real definition's file reads back as testing values, every optional top-level block
// uncomments to valid YAML holding its key, and the active values of a definition whose
// required values all have a default pass its validation.
func TestCorpusLoadsBack(t *testing.T) {
	for _, path := range testcorpus.Definitions(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			spec, diags := manifest.LoadSpec(path)
			if diags.HasErrors() || spec.Ordered == nil {
				t.Skipf("no usable spec: %v", diags)
			}
			out, res, err := Generate(spec.Ordered, Options{Definition: path})
			if err != nil && !errors.Is(err, ErrNoProperties) {
				t.Fatal(err)
			}
			vals, err := values.Parse("values.yaml", out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(res.Required) == 0 {
				vals.ApplyDefaults(spec.ConnectionSpec)
				if err := vals.Validate(spec.ConnectionSpec); err != nil {
					t.Errorf("nothing to fill in, yet: %v", err)
				}
			}
			checkUncomment(t, string(out), spec.Ordered.(*record.Object))
		})
	}
}

// checkUncomment finds the commented-out value of each optional top-level property (the
// last line of its group that is `# key:…`, and the lines after it, all comments) and
// parses it with its "# " removed.
func checkUncomment(t *testing.T, text string, root *record.Object) {
	t.Helper()
	for _, group := range strings.Split(text, "\n\n")[1:] {
		lines := strings.Split(strings.TrimSuffix(group, "\n"), "\n")
		for _, p := range (schema{root}).properties() {
			head := "# " + keyText(p.name) + ":"
			at := -1
			for i, l := range lines {
				if l == head || strings.HasPrefix(l, head+" ") {
					at = i
				}
			}
			if at < 0 {
				continue
			}
			var block []string
			for _, l := range lines[at:] {
				block = append(block, strings.TrimPrefix(l, "# "))
			}
			if slices.ContainsFunc(lines[at:], func(l string) bool { return !strings.HasPrefix(l, "# ") }) {
				continue // an active value, below a title that is the key
			}
			var m map[string]any
			if err := yaml.Unmarshal([]byte(strings.Join(block, "\n")), &m); err != nil {
				t.Errorf("%s uncommented is not YAML: %v\n%s", p.name, err, strings.Join(block, "\n"))
				continue
			}
			if _, ok := m[p.name]; !ok || len(m) != 1 {
				t.Errorf("%s uncommented gives %v", p.name, m)
			}
		}
	}
}

func TestNoProperties(t *testing.T) {
	spec := &record.Object{}
	spec.Set("type", "object")
	out, res, err := Generate(spec, Options{Definition: "def.yaml"})
	if !errors.Is(err, ErrNoProperties) || len(res.Required) != 0 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if !strings.HasSuffix(string(out), "\n\n# (the specification declares no properties)\n") {
		t.Errorf("output:\n%s", out)
	}
	vals, err := values.Parse("values.yaml", out)
	if err != nil || len(vals.Map) != 0 {
		t.Errorf("reads back as %v, %v", vals, err)
	}
}

func TestNotAMapping(t *testing.T) {
	_, _, err := Generate([]any{"x"}, Options{Definition: "def.yaml"})
	if err == nil || err.Error() != "spec.connection_specification must be a mapping (a JSON schema), not a list" {
		t.Errorf("err %v", err)
	}
}

// Descriptions lose their HTML, keep link targets, and are wrapped at the width.
func TestCleanTextAndWrap(t *testing.T) {
	got := cleanText("See <a href='https://x.example/doc'>the docs</a>.<br>Then <b>check</b> &amp; go,\n  twice.")
	if want := "See the docs (https://x.example/doc). Then check & go, twice."; got != want {
		t.Errorf("cleanText: %q, want %q", got, want)
	}
	lines := wrap("  ", strings.Repeat("word ", 40))
	for _, l := range lines {
		if len(l) > width || !strings.HasPrefix(l, "  # word") {
			t.Errorf("line %q", l)
		}
	}
	if len(lines) != 3 {
		t.Errorf("%d lines", len(lines))
	}
}

// Values are written as the loader reads them back: text that reads as another type is
// quoted, numbers keep their spelling, lists and mappings are one line.
func TestInline(t *testing.T) {
	obj := &record.Object{}
	obj.Set("b", "2024-01-01")
	obj.Set("a", []any{"x", true})
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"2024-01-01", `"2024-01-01"`},
		{"100", `"100"`},
		{"true", `"true"`},
		{"a: b", `'a: b'`},
		{"two\nlines", `"two\nlines"`},
		{"plain text", `plain text`},
		{json.Number("1.50"), `1.50`},
		{json.Number("12345678901234567890"), `12345678901234567890`},
		{nil, `null`},
		{obj, `{b: "2024-01-01", a: [x, true]}`},
	} {
		if got := inline(tc.v); got != tc.want {
			t.Errorf("inline(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// A oneOf's default is written as the value when it holds the discriminator value of one
// kind. A default that is the schema of one kind (survey-sparrow's region) would match
// every kind that leaves the discriminator optional: that kind is laid out instead, with
// its fixed values, so that exactly one kind matches.
func TestDefaultKind(t *testing.T) {
	out, res, spec := generate(t, filepath.Join("testdata", "defaultkind.yaml"))
	vals, err := values.Parse("values.yaml", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"region": map[string]any{"url_base": "https://api.example.com/v3"},
		"mode":   map[string]any{"kind": "since", "days": int64(7)},
	}
	if !reflect.DeepEqual(vals.Map, want) {
		t.Errorf("values\n%#v\nwant\n%#v\n%s", vals.Map, want, out)
	}
	if len(res.Required) != 0 {
		t.Errorf("required %q", res.Required)
	}
	checkValid(t, out, spec.ConnectionSpec)
	for _, line := range []string{
		"# object, optional; default kind 2 (the specification gives the schema of that kind as the default);",
		"  # kind 2 of 2 (url_base: https://api.example.com/v3): Global account",
		"  # or kind 1 of 2 (url_base: https://eu-api.example.com/v3), in place of kind 2: EU-based account",
		"  # url_base: https://eu-api.example.com/v3",
	} {
		if !slices.Contains(strings.Split(out, "\n"), line) {
			t.Errorf("no line %q in\n%s", line, out)
		}
	}
}

// A default that holds no kind's discriminator value would match no kind, or several: it
// is not written, and the kinds are laid out as for an optional value without a default.
func TestDefaultOfNoKind(t *testing.T) {
	kind := func(v string) *record.Object {
		c := &record.Object{}
		c.Set("const", v)
		props := &record.Object{}
		props.Set("type", c)
		o := &record.Object{}
		o.Set("properties", props)
		return o
	}
	def := &record.Object{}
	def.Set("other", "x")
	mode := &record.Object{}
	mode.Set("oneOf", []any{kind("a"), kind("b")})
	mode.Set("default", def)
	props := &record.Object{}
	props.Set("mode", mode)
	root := &record.Object{}
	root.Set("properties", props)
	out, _, err := Generate(root, Options{Definition: "def.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	vals, err := values.Parse("values.yaml", out)
	if err != nil || len(vals.Map) != 0 {
		t.Errorf("values %v, %v\n%s", vals.Map, err, out)
	}
	if !strings.Contains(string(out), "\n# mode:\n#   # kind 1 of 2 (type: a)\n#   # string, optional; always a\n#   type: a\n") {
		t.Errorf("kinds not laid out, commented out:\n%s", out)
	}
}
