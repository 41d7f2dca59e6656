package manifest

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// Stream groups (the top-level `stream_groups`): streams that share something on the API's
// side (a session, an export slot) and must never be read at the same time. Each group names
// its streams by reference to their definitions, as the CDK's schema asks, and has one
// action, BlockSimultaneousSyncsAction. The loader gives each member its group's name
// (Stream.Group), wherever the stream appears: in `streams`, in a ConditionalStreams, or as
// the parent of another stream. pkg/run does the blocking.

// The component types of stream_groups.
const (
	streamGroup = "StreamGroup"
	blockAction = "BlockSimultaneousSyncsAction"
)

func init() {
	for t, fs := range map[string][]string{
		// The CDK's schema writes no `type` for a StreamGroup; one written is accepted.
		streamGroup: {"type", "streams", "action"},
		blockAction: {"type"},
	} {
		fields[t] = fs
		fieldSets[t] = map[string]bool{}
		for _, f := range fs {
			fieldSets[t][f] = true
		}
	}
}

// streamGroups reads stream_groups (n, resolved) and returns each member's group by stream
// name, and where the member is named. known are the names of the streams of `streams`
// (ConditionalStreams included); dynamic says the definition has dynamic_streams, whose
// names are known only at run time.
func (l *loader) streamGroups(n *yaml.Node, known map[string]*yaml.Node, dynamic bool) (groups map[string]string, where map[string]*yaml.Node) {
	if isEmpty(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		l.at(n, "stream_groups", diag.CodeType, fmt.Sprintf("`stream_groups` must be a mapping of group names to StreamGroups, not %s", kindName(n)),
			"write `stream_groups: {my_group: {streams: [\"#/definitions/streams/a\"], action: {type: BlockSimultaneousSyncsAction}}}`")
		return nil, nil
	}
	groups, where = map[string]string{}, map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, gn := n.Content[i].Value, n.Content[i+1]
		path := join("stream_groups", name)
		c, ok := l.component(gn, path, nil, streamGroup)
		if !ok {
			continue
		}
		if c.typ != streamGroup {
			l.at(c.vals["type"], join(path, "type"), diag.CodeType, fmt.Sprintf("a stream group must be a StreamGroup, not %s", c.typ), "")
			continue
		}
		c.checkFields(streamGroup)
		l.groupAction(c)
		sn := c.vals["streams"]
		if isNull(sn) {
			c.require("streams")
			continue
		}
		if sn.Kind != yaml.SequenceNode {
			l.at(sn, c.fieldPath("streams"), diag.CodeType, fmt.Sprintf("`streams` of a stream group must be a list of references to streams, not %s", kindName(sn)), "")
			continue
		}
		written := l.writtenGroupStreams(name, len(sn.Content))
		for j, item := range sn.Content {
			at := item
			if written != nil {
				at = written[j]
			}
			ipath := fmt.Sprintf("%s[%d]", c.fieldPath("streams"), j)
			member := l.groupMember(item, at, ipath, name, known, dynamic)
			if member == "" {
				continue
			}
			if prev, ok := groups[member]; ok && prev != name {
				p := where[member]
				l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeType, Line: at.Line, Column: at.Column, Path: ipath,
					Message: fmt.Sprintf("the stream `%s` is also in the group `%s` (line %d:%d); a stream belongs to one group, so it is in `%s`, the later one, as in the CDK",
						member, prev, p.Line, p.Column, name),
					Hint: "name the stream in one group only"})
			}
			groups[member], where[member] = name, at
		}
	}
	return groups, where
}

// groupAction checks the action of group c: BlockSimultaneousSyncsAction, the only one.
func (l *loader) groupAction(c *comp) {
	an := c.vals["action"]
	if isNull(an) {
		c.require("action")
		return
	}
	a, ok := l.component(an, c.fieldPath("action"), nil, "")
	if !ok {
		return
	}
	if a.typ != blockAction {
		l.at(a.vals["type"], join(a.path, "type"), diag.CodeType,
			fmt.Sprintf("the action of a stream group must be a BlockSimultaneousSyncsAction, not %s", a.typ),
			"BlockSimultaneousSyncsAction is the one action of the CDK's schema")
		return
	}
	a.checkFields(blockAction)
}

// groupMember reads one entry of a group's streams: the resolved node item, written at at.
// It returns the name of the stream it refers to, "" when the entry is refused (reported).
func (l *loader) groupMember(item, at *yaml.Node, path, group string, known map[string]*yaml.Node, dynamic bool) string {
	if item == brokenRef {
		return ""
	}
	if item.Kind == yaml.ScalarNode {
		hint := "refer to the stream's definition, as `#/definitions/streams/" + item.Value + "`"
		if ref := l.streamRef(item.Value); ref != "" {
			hint = fmt.Sprintf("write the reference `%s`, where the stream `%s` is defined", ref, item.Value)
		}
		l.at(at, path, diag.CodeType, fmt.Sprintf("a stream of the group `%s` must be a reference to a stream definition, not %s %q", group, kindName(item), item.Value), hint)
		return ""
	}
	c, ok := l.component(item, path, nil, "DeclarativeStream")
	if !ok {
		return ""
	}
	nn := c.get("name")
	if nn == nil || !isString(nn) || nn.Value == "" {
		l.at(at, path, diag.CodeType, fmt.Sprintf("a stream of the group `%s` refers to a definition without a name", group),
			"refer to one of the streams of `streams`, such as `#/definitions/streams/NAME`")
		return ""
	}
	name := nn.Value
	if _, ok := known[name]; ok {
		return name
	}
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	hint := "the group's streams must be streams of `streams`: " + strings.Join(names, ", ")
	if s := suggest(name, names); s != "" {
		hint = fmt.Sprintf("did you mean `%s`?", s)
	}
	if dynamic {
		// A stream that dynamic_streams makes may have this name; the group applies to it then.
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeType, Line: at.Line, Column: at.Column, Path: path,
			Message: fmt.Sprintf("the group `%s` names the stream `%s`, which is not in `streams`; it applies only if dynamic_streams make a stream of that name", group, name),
			Hint:    hint})
		return name
	}
	l.at(at, path, diag.CodeType, fmt.Sprintf("the group `%s` names the stream `%s`, which is not in `streams`", group, name), hint)
	return ""
}

// writtenGroupStreams returns the entries of the streams of group name as written, before
// references were resolved (their positions are those of the references), or nil when they
// are not written there as a list of n entries (a group written by reference).
func (l *loader) writtenGroupStreams(name string, n int) []*yaml.Node {
	if l.refs == nil {
		return nil
	}
	g := mapGet(mapGet(l.refs.root, "stream_groups"), name)
	s := mapGet(g, "streams")
	if s == nil || s.Kind != yaml.SequenceNode || len(s.Content) != n {
		return nil
	}
	return s.Content
}

// streamRef is the reference to the stream named name as `streams` writes it (its $ref, or
// its place "#/streams/N"), "" when no stream has that name.
func (l *loader) streamRef(name string) string {
	if l.refs == nil {
		return ""
	}
	written := mapGet(l.refs.root, "streams")
	resolved := l.refs.done[written].out
	if written == nil || resolved == nil || resolved.Kind != yaml.SequenceNode || len(resolved.Content) != len(written.Content) {
		return ""
	}
	for i, sn := range resolved.Content {
		if nn := mapGet(sn, "name"); nn == nil || nn.Value != name {
			continue
		}
		switch w := written.Content[i]; {
		case isRefString(w):
			return w.Value
		case hasRef(w):
			if _, v := refOf(w); v != nil && isString(v) {
				return v.Value
			}
		}
		return fmt.Sprintf("#/streams/%d", i)
	}
	return ""
}

// checkGroupAncestry refuses a stream in the same group as a stream it reads its partitions
// from: the stream would wait for its own parent. The CDK refuses it too. It is reported
// where the group names the stream (where).
func (l *loader) checkGroupAncestry(def *Definition, groups map[string]string, where map[string]*yaml.Node) {
	if len(groups) == 0 {
		return
	}
	for _, s := range allStreams(def) {
		g := groups[s.Name]
		if g == "" {
			continue
		}
		for _, a := range s.Ancestors() {
			if groups[a.Name] == g {
				at := where[s.Name]
				l.add(diag.Diagnostic{Code: diag.CodeType, Line: at.Line, Column: at.Column, Path: "stream_groups." + g,
					Message: fmt.Sprintf("the stream `%s` and its parent stream `%s` are both in the group `%s`: a stream must not share a group with a stream it reads its partitions from (it would wait for its own parent; the CDK refuses it too)",
						s.Name, a.Name, g),
					Hint: "put the parent stream in another group, or leave it out of the group"})
			}
		}
	}
}

// allStreams are the streams of `streams`, those of the ConditionalStreams included.
func allStreams(def *Definition) []*Stream {
	out := append([]*Stream(nil), def.Streams...)
	for _, cs := range def.Conditional {
		out = append(out, cs.Streams...)
	}
	return out
}

// ApplyGroups gives each stream of streams, and each stream they read their partitions
// from, its group of groups (by name); a stream of no group gets "".
func ApplyGroups(streams []*Stream, groups map[string]string) {
	if len(groups) == 0 {
		return
	}
	for _, s := range streams {
		s.Group = groups[s.Name]
		for _, a := range s.Ancestors() {
			a.Group = groups[a.Name]
		}
		if d := s.Delegating; d != nil {
			for _, v := range []*Stream{d.FullRefresh, d.Incremental} {
				if v != nil {
					ApplyGroups([]*Stream{v}, groups)
				}
			}
		}
	}
}

// Ancestors are the streams s reads its partitions from: the parent streams of its
// SubstreamPartitionRouters, however nested in other routers, and their own parents, each
// once, nearest first.
func (s *Stream) Ancestors() []*Stream {
	var out []*Stream
	seen := map[*Stream]bool{}
	var walk func(st *Stream)
	var routers func(r *Router)
	routers = func(r *Router) {
		if r == nil {
			return
		}
		for _, pc := range r.Parents {
			if pc.Stream != nil && !seen[pc.Stream] {
				seen[pc.Stream] = true
				out = append(out, pc.Stream)
				walk(pc.Stream)
			}
		}
		routers(r.Underlying)
		for _, c := range r.Routers {
			routers(c)
		}
	}
	walk = func(st *Stream) {
		routers(st.Router)
		if d := st.Delegating; d != nil {
			for _, v := range []*Stream{d.FullRefresh, d.Incremental} {
				if v != nil {
					routers(v.Router)
				}
			}
		}
	}
	walk(s)
	return out
}
