package manifest

import (
	"strings"
	"testing"
)

// condDef has a ConditionalStreams between two unconditional streams. Its $parameters name
// its stream, as the CDK's manifest transformer propagates them into it.
const condDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items, sandbox_items]}
definitions:
  stream:
    type: DeclarativeStream
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: "/{{ parameters['name'] }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
streams:
  - $ref: "#/definitions/stream"
    name: items
  - type: ConditionalStreams
    condition: "{{ config['sandbox'] }}"
    $parameters:
      name: sandbox_items
    streams:
      - $ref: "#/definitions/stream"
  - $ref: "#/definitions/stream"
    name: users
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      base_url: {type: string}
      sandbox: {type: boolean}
`

// A ConditionalStreams keeps its place among the streams (At: before users), its streams
// are read as streams with its $parameters, and check may name them.
func TestConditionalStreamsLoad(t *testing.T) {
	def, diags := Parse("def.yaml", []byte(condDef))
	if diags.HasErrors() || len(diags) != 0 {
		t.Fatalf("diagnostics:\n%v", diags)
	}
	if len(def.Streams) != 2 || def.Streams[0].Name != "items" || def.Streams[1].Name != "users" {
		t.Fatalf("unconditional streams: %v", names(def.Streams))
	}
	if len(def.Conditional) != 1 {
		t.Fatalf("%d ConditionalStreams", len(def.Conditional))
	}
	cs := def.Conditional[0]
	if cs.At != 1 || cs.Pos != (Pos{14, 5}) || cs.Condition == nil || cs.Condition.Source() != "{{ config['sandbox'] }}" {
		t.Errorf("At %d, Pos %v, condition %v", cs.At, cs.Pos, cs.Condition)
	}
	if len(cs.Streams) != 1 || cs.Streams[0].Name != "sandbox_items" || cs.Streams[0].ConditionalAt != cs.Pos {
		t.Fatalf("conditional streams: %v", names(cs.Streams))
	}
	path, err := cs.Streams[0].Requester.Path.Render(map[string]any{"parameters": cs.Streams[0].Requester.Parameters})
	if err != nil || path != "/sandbox_items" {
		t.Errorf("path %q %v", path, err)
	}
	if strings.Join(def.CheckStreams, ",") != "items,sandbox_items" {
		t.Errorf("check streams %v", def.CheckStreams)
	}
	if def.Streams[0].ConditionalAt != (Pos{}) {
		t.Errorf("an unconditional stream has ConditionalAt %v", def.Streams[0].ConditionalAt)
	}
}

func names(streams []*Stream) []string {
	var out []string
	for _, s := range streams {
		out = append(out, s.Name)
	}
	return out
}

// What the CDK 7.28.2 refuses in a ConditionalStreams is a validate error at its place, and
// what it accepts loads. Each case changes condDef and gives every diagnostic validate
// prints ("" for none).
func TestConditionalStreamsProblems(t *testing.T) {
	const cond = `  - type: ConditionalStreams
    condition: "{{ config['sandbox'] }}"
    $parameters:
      name: sandbox_items
    streams:
      - $ref: "#/definitions/stream"
`
	tests := []struct {
		name, old, new, want string
	}{
		// The CDK's schema requires condition (and a string): validation fails before
		// any stream is made.
		{"no condition", "    condition: \"{{ config['sandbox'] }}\"\n", "",
			"def.yaml:14:5: error: ConditionalStreams is missing the required field `condition`"},
		{"a boolean condition", `condition: "{{ config['sandbox'] }}"`, "condition: true",
			"def.yaml:15:16: error: `condition` must be a string (a template), not a boolean\n" +
				"  hint: the CDK's schema refuses anything else; write it as text, such as \"{{ config['sandbox'] }}\""},
		// An empty condition is a string the schema accepts; it renders empty: false.
		{"an empty condition", `condition: "{{ config['sandbox'] }}"`, `condition: ""`, ""},
		{"a template error", `condition: "{{ config['sandbox'] }}"`, `condition: "{{ config['sandbox' }}"`,
			"def.yaml:15:17: error: in `condition`: unclosed tag `{{`: missing `}}`"},
		// The CDK passes the condition no parameters at all (InterpolatedBoolean with
		// parameters={}), so `parameters.name` is undefined there as here.
		{"parameters in the condition", `condition: "{{ config['sandbox'] }}"`, `condition: "{{ parameters.name }}"`,
			"def.yaml:15:16: warning: `condition` reads `parameters`, which is empty there: the Airbyte CDK evaluates a ConditionalStreams condition without its $parameters\n" +
				"  hint: read the testing values (`config`) instead"},
		{"streams is a mapping", "    streams:\n      - $ref: \"#/definitions/stream\"\n", "    streams: {}\n",
			"def.yaml:18:14: error: `streams` must be a list of streams, not a mapping"},
		{"no streams", "    streams:\n      - $ref: \"#/definitions/stream\"\n", "",
			"def.yaml:14:5: error: ConditionalStreams is missing the required field `streams`"},
		// The CDK's transformer gives a stream inside a ConditionalStreams no default type,
		// and its schema then refuses it: "'type' is a required property".
		{"a stream without type", `      - $ref: "#/definitions/stream"` + "\n", "      - name: x\n        retriever: {}\n",
			"def.yaml:19:9: error: a stream of a ConditionalStreams is missing the required field `type`\n" +
				"  hint: write `type: DeclarativeStream`: the CDK gives the streams of a ConditionalStreams no default type and refuses the definition"},
		{"a StateDelegatingStream", `      - $ref: "#/definitions/stream"` + "\n", "      - {type: StateDelegatingStream, name: x}\n",
			"def.yaml:19:16: error: the streams of a ConditionalStreams are DeclarativeStreams, not StateDelegatingStream\n" +
				"  hint: the CDK's schema allows only DeclarativeStream here; write the stream at the top level of `streams`"},
		{"a nested ConditionalStreams", `      - $ref: "#/definitions/stream"` + "\n", "      - {type: ConditionalStreams, condition: x, streams: []}\n",
			"def.yaml:19:16: error: the streams of a ConditionalStreams are DeclarativeStreams, not ConditionalStreams\n" +
				"  hint: the CDK's schema allows only DeclarativeStream here; write the stream at the top level of `streams`"},
		// An unknown field is ignored by the CDK (its schema allows more properties).
		{"streams_when_false", "    streams:\n", "    streams_when_false: []\n    streams:\n",
			"def.yaml:18:5: warning: unknown field `streams_when_false` in ConditionalStreams; it is ignored\n" +
				"  hint: known fields: condition, streams"},
		// The name an unconditional stream has is used twice whenever the condition holds.
		{"the name of an unconditional stream", "      name: sandbox_items\n", "      name: users\n",
			"def.yaml:3:50: error: check names the stream `sandbox_items`, which is not defined\n" +
				"def.yaml:17:13: error: stream name `users` is already used by the stream at line 21:11\n" +
				"  hint: stream names must be unique whenever the condition holds"},
		{"a name twice in one ConditionalStreams", `      - $ref: "#/definitions/stream"` + "\n", `      - $ref: "#/definitions/stream"` + "\n" + `      - {$ref: "#/definitions/stream", name: sandbox_items}` + "\n",
			"def.yaml:20:46: error: stream name `sandbox_items` is already used by the stream at line 17:13\n" +
				"  hint: stream names must be unique whenever the condition holds"},
		// Two ConditionalStreams may hold streams of one name (variants under complementary
		// conditions); a run whose values make both hold is refused (pkg/dynamic.Choose).
		{"one name in two ConditionalStreams", cond, cond + strings.Replace(cond, "config['sandbox']", "not config['sandbox']", 1), ""},
		// check may name a stream of a ConditionalStreams, not a stream of no kind.
		{"check names an unknown stream", "stream_names: [items, sandbox_items]", "stream_names: [items, sandbox_itemz]",
			"def.yaml:3:50: error: check names the stream `sandbox_itemz`, which is not defined\n" +
				"  hint: did you mean `sandbox_items`?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(condDef, tt.old) {
				t.Fatalf("condDef has no %q", tt.old)
			}
			def, got := edgeDiags(t, strings.Replace(condDef, tt.old, tt.new, 1))
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if errors := strings.Contains(tt.want, ": error: "); errors == (def != nil) {
				t.Errorf("definition %v with errors %v", def != nil, errors)
			}
		})
	}
}
