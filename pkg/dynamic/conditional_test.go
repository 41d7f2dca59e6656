package dynamic

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/template"
)

// conditionalDef has unconditional streams a and d, and three ConditionalStreams: two
// variants of b under complementary conditions (the first with c), and e behind a flag.
const conditionalDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [a]}
definitions:
  s:
    type: DeclarativeStream
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.example.com", path: "{{ parameters.path }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
streams:
  - {$ref: "#/definitions/s", name: a, $parameters: {path: /a}}
  - type: ConditionalStreams
    condition: "{{ config.get('variant') == 'v1' }}"
    streams:
      - {$ref: "#/definitions/s", name: b, $parameters: {path: /b1}}
      - {$ref: "#/definitions/s", name: c, $parameters: {path: /c}}
  - {$ref: "#/definitions/s", name: d, $parameters: {path: /d}}
  - type: ConditionalStreams
    condition: "{{ config.get('variant') != 'v1' }}"
    streams:
      - {$ref: "#/definitions/s", name: b, $parameters: {path: /b2}}
  - type: ConditionalStreams
    condition: "{{ config['flag'] }}"
    streams:
      - {$ref: "#/definitions/s", name: e, $parameters: {path: /e}}
`

func loadDef(t *testing.T, src string) *manifest.Definition {
	t.Helper()
	def, diags := manifest.Parse("def.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return def
}

// streamsText is "name path" for each stream, in order.
func streamsText(def *manifest.Definition) string {
	var out []string
	for _, s := range def.Streams {
		path, err := s.Requester.Path.Render(map[string]any{"parameters": s.Requester.Parameters})
		if err != nil {
			path = err.Error()
		}
		out = append(out, s.Name+" "+path)
	}
	return strings.Join(out, ", ")
}

// The streams of a ConditionalStreams whose condition holds stand where it is written, as
// the CDK's _stream_configs extends its list at that place (the first variant of b before
// d, the second after it); the others are left out, each named with its ConditionalStreams.
func TestChoose(t *testing.T) {
	def := loadDef(t, conditionalDef)
	tests := []struct {
		config  map[string]any
		streams string
		leftOut map[string]manifest.Pos
	}{
		{map[string]any{"variant": "v1"}, "a /a, b /b1, c /c, d /d", map[string]manifest.Pos{"e": {Line: 23, Column: 5}}},
		{map[string]any{}, "a /a, d /d, b /b2", map[string]manifest.Pos{"c": {Line: 13, Column: 5}, "e": {Line: 23, Column: 5}}},
		{map[string]any{"variant": "v2", "flag": true}, "a /a, d /d, b /b2, e /e", map[string]manifest.Pos{"c": {Line: 13, Column: 5}}},
	}
	for _, tt := range tests {
		view, err := Choose(def, template.Globals{Config: tt.config})
		if err != nil {
			t.Fatalf("%v: %v", tt.config, err)
		}
		if got := streamsText(view); got != tt.streams {
			t.Errorf("%v: streams %s, want %s", tt.config, got, tt.streams)
		}
		if !reflect.DeepEqual(view.LeftOut, tt.leftOut) {
			t.Errorf("%v: left out %v, want %v", tt.config, view.LeftOut, tt.leftOut)
		}
		if view.Conditional != nil || len(def.Conditional) != 3 || len(def.Streams) != 2 {
			t.Errorf("the view keeps %d ConditionalStreams, or the definition changed", len(view.Conditional))
		}
	}
}

// The condition is the CDK's InterpolatedBoolean (transform.Truth, whose test has the whole
// table): false only for its FALSE_VALUES, compared with ==, so "false" and 0 are false;
// None is false too, where the CDK calls it true (this tool keeps Python's truthiness).
func TestChooseConditionTruth(t *testing.T) {
	def := loadDef(t, conditionalDef)
	tests := []struct {
		flag any
		want bool
	}{
		{true, true}, {false, false}, {nil, false}, {0, false}, {"false", false}, {"no", true}, {[]any{}, false},
	}
	for _, tt := range tests {
		view, err := Choose(def, template.Globals{Config: map[string]any{"variant": "v1", "flag": tt.flag}})
		if err != nil {
			t.Fatalf("%#v: %v", tt.flag, err)
		}
		if got := view.Stream("e") != nil; got != tt.want {
			t.Errorf("flag %#v: e chosen %v, want %v", tt.flag, got, tt.want)
		}
	}
	// An absent key renders empty (Jinja's undefined): the CDK evaluates its default
	// "False" instead, false.
	view, err := Choose(def, template.Globals{Config: map[string]any{}})
	if err != nil || view.Stream("e") != nil {
		t.Errorf("no flag: e chosen %v, %v", view.Stream("e") != nil, err)
	}
}

// The CDK evaluates the condition with parameters={}: the ConditionalStreams' own
// $parameters, which do reach its streams, never reach its condition.
func TestChooseConditionHasNoParameters(t *testing.T) {
	src := strings.Replace(conditionalDef, `    condition: "{{ config['flag'] }}"`, `    condition: "{{ parameters.get('flag', 'no flag') }}"
    $parameters: {flag: "", prefix: p}`, 1)
	view, err := Choose(loadDef(t, src), template.Globals{Config: map[string]any{"flag": true}})
	if err != nil {
		t.Fatal(err)
	}
	// parameters.get('flag', 'no flag') is "no flag", true, with an empty parameters; it
	// would be "" (false) with the ConditionalStreams' own.
	if got := streamsText(view); got != "a /a, d /d, b /b2, e /e" {
		t.Errorf("streams %s", got)
	}
}

// Two ConditionalStreams may hold streams of one name; values for which both hold would make
// two streams of that name, and are refused. A condition that fails to evaluate is an error
// at the ConditionalStreams' position.
func TestChooseErrors(t *testing.T) {
	def := loadDef(t, strings.Replace(conditionalDef, `"{{ config.get('variant') != 'v1' }}"`, `"{{ config.get('variant', 'v1') != 'v2' }}"`, 1))
	_, err := Choose(def, template.Globals{Config: map[string]any{"variant": "v1"}})
	want := `def.yaml:19:5: ConditionalStreams: the stream name "b" is used twice: the conditions of this ConditionalStreams and of the one at line 13:5 both hold for the testing values`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	def = loadDef(t, strings.Replace(conditionalDef, `"{{ config['flag'] }}"`, `"{{ (config['flag'] | length) / 0 }}"`, 1))
	_, err = Choose(def, template.Globals{Config: map[string]any{"flag": "x"}})
	var ce *ConditionError
	if err == nil || err.Error() != "def.yaml:23:5: ConditionalStreams: condition: evaluating `{{ (config['flag'] | length) / 0 }}`: division by zero" || !errors.As(err, &ce) || ce.Pos != (manifest.Pos{Line: 23, Column: 5}) {
		t.Errorf("err = %v", err)
	}
	// A TypeError (text plus a number) is no error: the CDK keeps the condition's own text,
	// which is true.
	def = loadDef(t, strings.Replace(conditionalDef, `"{{ config['flag'] }}"`, `"{{ config['flag'] + 1 }}"`, 1))
	view, err := Choose(def, template.Globals{Config: map[string]any{"flag": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := streamsText(view); got != "a /a, d /d, b /b2, e /e" {
		t.Errorf("streams %s", got)
	}
}

// A definition without ConditionalStreams is the definition itself.
func TestChooseNothing(t *testing.T) {
	def := loadDef(t, configDef)
	view, err := Choose(def, template.Globals{Config: nil})
	if err != nil || view != def {
		t.Errorf("view %p, definition %p, %v", view, def, err)
	}
}
