package values

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The official JSON-Schema-Test-Suite (testdata/json-schema-test-suite, MIT-licensed, see
// the LICENSE and README there) says for each schema and instance whether the instance is
// valid under draft-07. TestSchemaSuite runs every case through the checker and compares.

// suiteSkips lists what the checker leaves out by design, by file, or by file and the
// description of a group of cases ("file/group"), with the reason. Everything else in the
// suite must pass.
var suiteSkips = map[string]string{
	// Remote references are never fetched: a run must not reach a network for its own
	// configuration, and a connection specification is one self-contained document.
	"refRemote.json":            "remote $ref (http://localhost:1234/…) is not fetched by design",
	"optional/cross-draft.json": "remote $ref to another draft's metaschema is not fetched by design",
	// format is an annotation in our design: the testing values are checked for their
	// structure only, and a date or an email is checked when the connector uses it.
	"format.json": "format is an annotation, not an assertion, in our design",
	"definitions.json/validate definition against metaschema": "remote $ref to the draft-07 metaschema is not fetched by design",
	"ref.json/remote ref, containing refs itself":             "remote $ref to the draft-07 metaschema is not fetched by design",
	// Draft-07 lets a validator treat contentEncoding and contentMediaType as annotations
	// (section 8 of its validation spec); ours does, like format.
	"optional/content.json": "contentEncoding/contentMediaType are annotations in our design",
}

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// decodeExact reads JSON with its numbers kept as written (json.Number).
func decodeExact(t testing.TB, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// decodeFloat reads JSON with its numbers as float64, as YAML gives the fractions of a
// manifest and of the testing values.
func decodeFloat(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// rootSpec makes a schema the root of a connection specification, which is always an
// object: the boolean schemas true and false become {} and {"not": {}}.
func rootSpec(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case bool:
		if x {
			return map[string]any{}, true
		}
		return map[string]any{"not": map[string]any{}}, true
	}
	return nil, false
}

// floatSkips are the files whose numbers float64 cannot hold: the exact pass runs them.
var floatSkips = map[string]bool{"optional/bignum.json": true, "optional/float-overflow.json": true}

func TestSchemaSuite(t *testing.T) {
	dir := filepath.Join("testdata", "json-schema-test-suite", "draft7")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	optional, _ := filepath.Glob(filepath.Join(dir, "optional", "*.json"))
	files = append(files, optional...)
	if len(files) < 40 {
		t.Fatalf("found %d suite files under %s, want the whole draft7 folder", len(files), dir)
	}
	used := map[string]bool{}
	passed, skipped, total, floatPassed := 0, 0, 0, 0
	for _, file := range files {
		name := filepath.ToSlash(strings.TrimPrefix(file, dir+string(filepath.Separator)))
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, g := range groups {
			total += len(g.Tests)
			if _, ok := suiteSkips[name]; ok {
				used[name] = true
				skipped += len(g.Tests)
				continue
			}
			if _, ok := suiteSkips[name+"/"+g.Description]; ok {
				used[name+"/"+g.Description] = true
				skipped += len(g.Tests)
				continue
			}
			// Each case runs twice: with the numbers exact (json.Number, as a JSON decoder
			// gives them) and as float64 (as YAML gives them).
			for _, exact := range []bool{true, false} {
				if !exact && floatSkips[name] {
					continue
				}
				decode, how := decodeExact, "exact"
				if !exact {
					decode, how = decodeFloat, "float64"
				}
				spec, ok := rootSpec(decode(t, g.Schema))
				if !ok {
					t.Errorf("%s / %s: the schema is neither an object nor a boolean", name, g.Description)
					continue
				}
				s, err := compileSchema(spec)
				if err != nil {
					t.Errorf("%s / %s (%s): compile: %v", name, g.Description, how, err)
					continue
				}
				for _, c := range g.Tests {
					failures := s.validate(decode(t, c.Data))
					if got := len(failures) == 0; got != c.Valid {
						t.Errorf("%s / %s / %s (%s): valid = %v, want %v (%v)", name, g.Description, c.Description, how, got, c.Valid, failures)
						continue
					}
					if exact {
						passed++
					} else {
						floatPassed++
					}
				}
			}
		}
	}
	for k := range suiteSkips {
		if !used[k] {
			t.Errorf("suiteSkips names %q, which is no file or group of the suite", k)
		}
	}
	t.Logf("JSON-Schema-Test-Suite draft7: %d of %d cases pass (%d also with float64 numbers), %d skipped by design",
		passed, total, floatPassed, skipped)
}
