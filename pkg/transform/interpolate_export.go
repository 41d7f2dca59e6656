package transform

import "connector/pkg/template"

// Interpolate is the CDK's InterpolatedString.eval: the template rendered to text, then read
// as a Python literal when it is one (and of valueType — string, number, integer, boolean —
// when given). Dynamic streams' component mappings are evaluated with it.
func Interpolate(t *template.Template, vars map[string]any, valueType string) (any, error) {
	return interpolate(t, vars, valueType)
}
