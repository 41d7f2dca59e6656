package values

// Schema is a JSON schema (draft-07, read as CheckSchema reads one) compiled once, to check
// many values against it: the records of a read against a stream's declared schema.
type Schema struct{ root *schema }

// CompileSchema compiles a JSON schema. A schema that is not valid is an error naming the
// keywords at fault.
func CompileSchema(spec map[string]any) (*Schema, error) {
	root, err := compileSchema(spec)
	if err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

// Violation is one way a value breaks a schema.
type Violation struct {
	// Pointer locates the value at fault as a JSON pointer into the value checked: "" for
	// the value itself, "/author/name" for a nested member, "/tags/0" for an item, and for
	// a missing member the place it is missing from.
	Pointer string
	// Keyword is the schema keyword broken (type, required, enum, …).
	Keyword string
	// Message says what is wrong: "got string, want number or null", "missing required
	// member".
	Message string
}

// Check checks v (decoded as encoding/json decodes with UseNumber: map[string]any, []any,
// json.Number, string, bool, nil) and returns every way it breaks the schema, in a stable
// order; none when it passes.
func (s *Schema) Check(v any) []Violation {
	failures := s.root.validate(v)
	if len(failures) == 0 {
		return nil
	}
	out := make([]Violation, len(failures))
	for i, f := range failures {
		path, msg := f.path, f.msg
		switch {
		case f.isMissing():
			path = child(path, f.missing)
			msg = "missing required member"
			if f.msg != "" {
				msg += " (" + f.msg + ")"
			}
		case f.key != "":
			path = child(path, f.key)
		}
		out[i] = Violation{Pointer: jsonPointer(path), Keyword: f.keyword, Message: msg}
	}
	return out
}

// jsonPointer writes tokens as a JSON pointer: "" for none, else "/" before each token.
func jsonPointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	return "/" + pointer(tokens)
}
