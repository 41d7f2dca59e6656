package transform

import "connector/pkg/template"

// Interpolate is the CDK's InterpolatedString.eval: the template rendered to text, then read
// as a Python literal when it is one (and of valueType — string, number, integer, boolean —
// when given). Dynamic streams' component mappings are evaluated with it.
func Interpolate(t *template.Template, vars map[string]any, valueType string) (any, error) {
	return interpolate(t, vars, valueType)
}

// Truth is the CDK's InterpolatedBoolean.eval: the template rendered and read as Interpolate
// reads it, then false only for the CDK's FALSE_VALUES (false, zero, empty containers, and
// the texts "False", "false", "0", "0.0", "{}", "[]", "()", ""), and None, which the CDK calls
// true and this tool, with Python's truthiness, false. A
// ConditionalStreams condition is evaluated with it.
func Truth(t *template.Template, vars map[string]any) (bool, error) {
	return truth(t, vars)
}

// ValueTruth is Truth for a template already evaluated to v (Template.Eval): a text is read
// as the CDK reads rendered text (a Python literal where it spells one), None is false, an
// undefined value false. A record_filter decides with it, without rendering every record's
// verdict to text.
func ValueTruth(v any) bool {
	if s, ok := v.(string); ok {
		v = readText(s, "")
	}
	return valueTruth(v)
}
