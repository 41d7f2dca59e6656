package run

import (
	"maps"

	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// sliceVars is what the template variables of every page of a slice share. The CDK's
// stream_slice, stream_partition and stream_interval are one value, the slice itself.
type sliceVars struct {
	s    *slice.Slice
	base map[string]any
}

// stream_state is the stream's input state (the CDK 7 refuses it in templates; older CDKs
// gave the state, which is what definitions that still use it expect).
func newSliceVars(sl *slice.Slice, state *record.Object) *sliceVars {
	var st any = map[string]any{}
	if state != nil {
		st = state
	}
	return &sliceVars{s: sl, base: map[string]any{
		"stream_slice":     sl,
		"stream_partition": sl,
		"stream_interval":  sl,
		"stream_state":     st,
	}}
}

// vars are the template variables of one page of the slice — the read's globals (config
// and the templates' clock), next_page_token and the slice's — built once per page. A
// component adds its own parameters (withParams).
func (sv *sliceVars) vars(g template.Globals, token any, first bool) map[string]any {
	v := make(map[string]any, len(sv.base)+4)
	maps.Copy(v, sv.base)
	g.Set(v)
	v["next_page_token"] = paginate.NextPageToken(first, token)
	return v
}

// withParams returns vars with the `parameters` of one component added.
func withParams(vars map[string]any, params map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	v := make(map[string]any, len(vars)+1)
	maps.Copy(v, vars)
	v["parameters"] = params
	return v
}
