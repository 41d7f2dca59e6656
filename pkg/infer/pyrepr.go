package infer

import "connector/pkg/template"

// pyRepr writes a schema value as Python's repr() writes it in the CDK's messages: strings
// quoted (single quotes unless the text has one and no double quote), lists in [], dicts in
// {} in their order (the template engine's repr, which the templates share).
func pyRepr(v any) string { return template.PyRepr(v) }

// pyStr is Python's str() of a schema value, as an f-string writes it: a string as it is,
// anything else its repr.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}
