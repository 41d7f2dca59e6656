package run

import (
	"maps"

	"connector/pkg/paginate"
)

// slice is one part of a stream read on its own, with pagination starting over: a partition
// (from a partition router) and an interval (from an incremental cursor), the CDK's
// StreamSlice. A stream without either has one empty slice.
type slice struct {
	// partition and interval are the CDK's StreamSlice.partition and .cursor_slice.
	partition map[string]any
	interval  map[string]any
	// path is the record selector's field path once rendered, when it has no template.
	path []string
	// base is what the template variables of every page of the slice share (see vars).
	base map[string]any
}

// slices are the slices of the stream, in order.
func (r *streamReader) slices() []*slice {
	return []*slice{newSlice(map[string]any{}, map[string]any{})}
}

func newSlice(partition, interval map[string]any) *slice {
	whole := make(map[string]any, len(partition)+len(interval))
	maps.Copy(whole, partition)
	maps.Copy(whole, interval)
	return &slice{
		partition: partition,
		interval:  interval,
		base: map[string]any{
			"stream_slice":     whole,
			"stream_partition": partition,
			"stream_interval":  interval,
			"stream_state":     map[string]any{},
		},
	}
}

// vars are the template variables of one page of the slice — config, next_page_token and
// the slice's — built once per page. A component adds its own parameters (withParams).
func (sl *slice) vars(config map[string]any, token any, first bool) map[string]any {
	v := make(map[string]any, len(sl.base)+3)
	maps.Copy(v, sl.base)
	v["config"] = config
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
