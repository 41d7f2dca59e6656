package manifest

// Cached returns the requesters whose GET responses a run keeps and answers again, as the
// CDK 7.28.2 decides it (ConcurrentDeclarativeSource._initialize_cache_for_parent_streams,
// then HttpClient's use_cache). streams are every stream of the run's definition, dynamic
// ones included, whether the run reads them or not.
//
// A requester is cached when it says use_cache: true, and, unless it says false, when it is
//   - the requester of a parent named in the ParentStreamConfigs of a top-level stream's
//     partition router (inside a list of routers, a UnionPartitionRouter or a
//     GroupingPartitionRouter too; both streams of a StateDelegatingStream parent), or
//   - the requester of a top-level stream whose name is one of those parents.
//
// A parent's own parents are not visited: a grandparent is read again for every child that
// needs it, as in the CDK. The requesters are those of the occurrences: the same stream
// written as a top-level stream and as a parent has a requester in each place.
func Cached(streams []*Stream) map[*Requester]bool {
	marked := map[*Requester]bool{}
	parents := map[string]bool{}
	mark := func(s *Stream) {
		for _, v := range s.variants() {
			if v.Requester != nil {
				marked[v.Requester] = true
			}
		}
	}
	for _, s := range streams {
		// The CDK walks the routers of a stream's own retriever: a StateDelegatingStream
		// has none at its top.
		if s.Delegating != nil || s.Router == nil {
			continue
		}
		routers := []*Router{s.Router}
		for len(routers) > 0 {
			r := routers[len(routers)-1]
			routers = routers[:len(routers)-1]
			for _, p := range r.Parents {
				parents[p.Stream.Name] = true
				mark(p.Stream)
			}
			if r.Type == UnionRouter || r.Type == CartesianRouter {
				routers = append(routers, r.Routers...)
			}
			if r.Underlying != nil {
				routers = append(routers, r.Underlying)
			}
		}
	}
	for _, s := range streams {
		if parents[s.Name] {
			mark(s)
		}
	}
	out := map[*Requester]bool{}
	visit := func(r *Requester) {
		if r == nil {
			return
		}
		if r.UseCache != nil {
			if *r.UseCache {
				out[r] = true
			}
			return
		}
		if marked[r] {
			out[r] = true
		}
	}
	var walk func(s *Stream, depth int)
	walk = func(s *Stream, depth int) {
		for _, v := range s.variants() {
			visit(v.Requester)
			if v.Router != nil && depth < maxRouterDepth+1 {
				v.Router.each(func(p *ParentConfig) { walk(p.Stream, depth+1) })
			}
		}
	}
	for _, s := range streams {
		walk(s, 0)
	}
	return out
}

// variants are the streams a StateDelegatingStream may read, or the stream itself.
func (s *Stream) variants() []*Stream {
	if d := s.Delegating; d != nil {
		return []*Stream{d.FullRefresh, d.Incremental}
	}
	return []*Stream{s}
}

// each calls f with every ParentStreamConfig of the router and of the routers within it.
func (r *Router) each(f func(*ParentConfig)) {
	for _, p := range r.Parents {
		f(p)
	}
	for _, c := range r.Routers {
		c.each(f)
	}
	if r.Underlying != nil {
		r.Underlying.each(f)
	}
}
