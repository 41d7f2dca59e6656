package values

import "strings"

// CheckSchema checks v against a JSON schema (draft-07, as spec.connection_specification)
// and returns why it fails, "" when it passes. The reason names keys and keywords, not the
// values, so that no secret is in it; a pattern that gives up on a value (see
// pattern.matches) is a reason too. A schema that is not valid is an error.
func CheckSchema(schema map[string]any, v any) (string, error) {
	sch, err := compileSchema(schema)
	if err != nil {
		return "", err
	}
	failures := sch.validate(v)
	if len(failures) == 0 {
		return "", nil
	}
	f := failures[0]
	at := strings.Join(f.path, ".")
	switch {
	case f.gaveUp:
		return f.String(), nil
	case f.isMissing():
		return "missing required key " + quoteKey(strings.Join(child(f.path, f.missing), ".")), nil
	case at == "":
		return "the value breaks `" + f.keyword + "`", nil
	}
	return quoteKey(at) + " breaks `" + f.keyword + "`", nil
}

func quoteKey(k string) string { return `"` + k + `"` }
