package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Partition router types, as written in definitions. A list of routers is their cartesian
// product (the CDK's CartesianProductStreamSlicer).
const (
	ListRouter      = "ListPartitionRouter"
	SubstreamRouter = "SubstreamPartitionRouter"
	GroupingRouter  = "GroupingPartitionRouter"
	UnionRouter     = "UnionPartitionRouter"
	CartesianRouter = "CartesianProductStreamSlicer"
)

// Router is a partition router: what divides a stream into partitions, each read on its own
// (SimpleRetriever.partition_router). Type says which fields are set.
type Router struct {
	Type string
	Pos  Pos
	// ListPartitionRouter: the values, written as a list (Values) or as a template rendering
	// one from the testing values (ValuesTemplate); CursorField names the partition key.
	Values         []any
	ValuesTemplate *template.Template
	CursorField    *template.Template
	// RequestOption is where a ListPartitionRouter puts the partition value (nil: nowhere).
	RequestOption *RequestOption
	// Parents are the ParentStreamConfigs of a SubstreamPartitionRouter, read in order.
	Parents []*ParentConfig
	// GroupingPartitionRouter: GroupSize partitions of Underlying per slice.
	GroupSize   int
	Deduplicate bool
	Underlying  *Router
	// UnionPartitionRouter and CartesianProductStreamSlicer: the child routers, in order;
	// PartitionField is the union's one partition key.
	Routers        []*Router
	PartitionField *template.Template
	Parameters     map[string]any
}

// ParentConfig is a ParentStreamConfig: how the records of a parent stream become partitions
// of its child.
type ParentConfig struct {
	Pos Pos
	// Stream is the parent stream, a whole stream of its own (it may have partitions too).
	Stream *Stream
	// ParentKey is the path of the value in a parent record ("a/b" is nested), and
	// PartitionField the key it takes in the child's partition.
	ParentKey, PartitionField *template.Template
	RequestOption             *RequestOption
	// ExtraFields are paths into the parent record carried in the slice's extra_fields.
	ExtraFields [][]*template.Template
	// LazyReadPointer is the path in the parent record of the child's first page of records.
	LazyReadPointer       []*template.Template
	IncrementalDependency bool
	Parameters            map[string]any
}

// routerVars are the variables of a router's own templates: they are rendered once, before
// any request.
var routerVars = []string{"config", "parameters"}

// routers reads SimpleRetriever.partition_router: one router, or a list of them (their
// cartesian product). ok is false when the stream cannot be run.
func (l *loader) routers(n *yaml.Node, path string, parent *params, uses *[]optionUse, depth int) (*Router, bool) {
	if n.Kind == yaml.SequenceNode {
		r := &Router{Type: CartesianRouter, Pos: pos(n)}
		ok := true
		for i, item := range n.Content {
			child, cok := l.router(item, fmt.Sprintf("%s[%d]", path, i), parent, uses, depth)
			ok = ok && cok
			if child != nil {
				r.Routers = append(r.Routers, child)
			}
		}
		if len(n.Content) == 0 {
			return nil, true
		}
		return r, ok
	}
	return l.router(n, path, parent, uses, depth)
}

// maxRouterDepth bounds parents of parents: a definition nests a few at most.
const maxRouterDepth = 32

func (l *loader) router(n *yaml.Node, path string, parent *params, uses *[]optionUse, depth int) (*Router, bool) {
	c, ok := l.component(n, path, parent, "CustomPartitionRouter")
	if !ok {
		return nil, false
	}
	if depth > maxRouterDepth {
		l.at(n, path, diag.CodeType, fmt.Sprintf("partition routers nest more than %d parent streams deep (a limit of connector)", maxRouterDepth), "")
		return nil, false
	}
	r := &Router{Type: c.typ, Pos: pos(n), Parameters: c.params.values()}
	switch c.typ {
	case ListRouter:
		c.checkFields(ListRouter)
		if cf := c.require("cursor_field"); cf != nil {
			l.stringTemplate(c, "cursor_field", routerVars, &r.CursorField)
		}
		v := c.get("values")
		if v == nil || v.Kind != yaml.SequenceNode {
			v = c.require("values") // an empty list is a list: no partitions, as in the CDK
		}
		if v != nil {
			switch {
			case v.Kind == yaml.SequenceNode:
				r.Values = []any{}
				for _, item := range v.Content {
					if item.Kind != yaml.ScalarNode {
						l.at(item, c.fieldPath("values"), diag.CodeType, fmt.Sprintf("a partition value must be a string, not %s", kindName(item)), "")
						continue
					}
					r.Values = append(r.Values, toValue(item))
				}
			case v.Kind == yaml.ScalarNode:
				l.stringTemplate(c, "values", routerVars, &r.ValuesTemplate)
			default:
				l.at(v, c.fieldPath("values"), diag.CodeType, fmt.Sprintf("`values` must be a list or a template rendering one, not %s", kindName(v)), "")
			}
		}
		if on := c.get("request_option"); on != nil {
			r.RequestOption = l.requestOption(on, c.fieldPath("request_option"), c.params, false, nil, "the partition router's request_option", uses)
		}
	case SubstreamRouter:
		c.checkFields(SubstreamRouter)
		pn := c.require("parent_stream_configs")
		if pn == nil {
			return nil, false
		}
		if pn.Kind != yaml.SequenceNode || len(pn.Content) == 0 {
			l.at(pn, c.fieldPath("parent_stream_configs"), diag.CodeType, "`parent_stream_configs` must be a list of at least one ParentStreamConfig", "")
			return nil, false
		}
		for i, item := range pn.Content {
			pc, pok := l.parentConfig(item, fmt.Sprintf("%s[%d]", c.fieldPath("parent_stream_configs"), i), c.params, uses, depth)
			ok = ok && pok
			if pc != nil {
				r.Parents = append(r.Parents, pc)
			}
		}
	case GroupingRouter:
		c.checkFields(GroupingRouter)
		if g := c.require("group_size"); g != nil {
			n, err := strconv.Atoi(g.Value)
			if g.Kind != yaml.ScalarNode || err != nil || n < 1 {
				l.at(g, c.fieldPath("group_size"), diag.CodeType, fmt.Sprintf("`group_size` must be a whole number of at least 1, not %s", describe(g)), "")
				ok = false
			}
			r.GroupSize = n
		}
		r.Deduplicate = true
		if d, set := l.boolField(c, "deduplicate"); set {
			r.Deduplicate = d
		}
		if un := c.require("underlying_partition_router"); un != nil {
			var uok bool
			r.Underlying, uok = l.router(un, c.fieldPath("underlying_partition_router"), c.params, uses, depth)
			ok = ok && uok
			if u := r.Underlying; u != nil && (u.RequestOption != nil || hasParentOption(u)) {
				l.at(un, c.fieldPath("underlying_partition_router"), diag.CodeType,
					"the partition router under a GroupingPartitionRouter cannot have a request_option",
					"put the grouped values in the request through stream_partition in the requester's templates")
				ok = false
			}
		}
	case UnionRouter:
		c.checkFields(UnionRouter)
		if c.require("partition_field") != nil {
			l.stringTemplate(c, "partition_field", routerVars, &r.PartitionField)
		}
		rn := c.require("partition_routers")
		if rn == nil {
			return nil, false
		}
		if rn.Kind != yaml.SequenceNode || len(rn.Content) < 2 {
			l.at(rn, c.fieldPath("partition_routers"), diag.CodeType, "`partition_routers` must be a list of at least two partition routers", "")
			return nil, false
		}
		for i, item := range rn.Content {
			// Request options of the children are not applied: none is collected.
			child, cok := l.router(item, fmt.Sprintf("%s[%d]", c.fieldPath("partition_routers"), i), c.params, nil, depth)
			ok = ok && cok
			if child != nil {
				if child.Type == GroupingRouter {
					l.at(item, fmt.Sprintf("%s[%d]", c.fieldPath("partition_routers"), i), diag.CodeType,
						"a GroupingPartitionRouter cannot be a child of a UnionPartitionRouter (its partitions are lists)", "")
					ok = false
				}
				r.Routers = append(r.Routers, child)
			}
		}
	default:
		l.unsupported(n, path, c.typ, "partition_router")
		return nil, false
	}
	return r, ok
}

func hasParentOption(r *Router) bool {
	for _, p := range r.Parents {
		if p.RequestOption != nil {
			return true
		}
	}
	return false
}

// parentConfig reads a ParentStreamConfig; its stream is built as a stream of its own, with
// the $parameters of the child around it (the CDK passes them down).
func (l *loader) parentConfig(n *yaml.Node, path string, parent *params, uses *[]optionUse, depth int) (*ParentConfig, bool) {
	c, ok := l.component(n, path, parent, "ParentStreamConfig")
	if !ok {
		return nil, false
	}
	if c.typ != "ParentStreamConfig" {
		l.unsupported(n, path, c.typ, "parent_stream_configs")
		return nil, false
	}
	c.checkFields("ParentStreamConfig")
	pc := &ParentConfig{Pos: pos(n), Parameters: c.params.values()}
	if c.require("parent_key") != nil {
		l.stringTemplate(c, "parent_key", routerVars, &pc.ParentKey)
	}
	if c.require("partition_field") != nil {
		l.stringTemplate(c, "partition_field", routerVars, &pc.PartitionField)
	}
	if on := c.get("request_option"); on != nil {
		pc.RequestOption = l.requestOption(on, c.fieldPath("request_option"), c.params, false, nil, "the partition router's request_option", uses)
	}
	if b, set := l.boolField(c, "incremental_dependency"); set {
		pc.IncrementalDependency = b
	}
	if ef := c.get("extra_fields"); ef != nil {
		if ef.Kind != yaml.SequenceNode {
			l.at(ef, c.fieldPath("extra_fields"), diag.CodeType, fmt.Sprintf("`extra_fields` must be a list of field paths, not %s", kindName(ef)), "")
		} else {
			for i, p := range ef.Content {
				fp := fmt.Sprintf("%s[%d]", c.fieldPath("extra_fields"), i)
				if p.Kind != yaml.SequenceNode {
					l.at(p, fp, diag.CodeType, fmt.Sprintf("an entry of `extra_fields` must be a list of keys, not %s", kindName(p)), "write [\"field\"] or [\"nested\", \"field\"]")
					continue
				}
				pc.ExtraFields = append(pc.ExtraFields, l.templateList(p, fp, "extra_fields"))
			}
		}
	}
	if lp := c.get("lazy_read_pointer"); lp != nil {
		if lp.Kind != yaml.SequenceNode {
			l.at(lp, c.fieldPath("lazy_read_pointer"), diag.CodeType, fmt.Sprintf("`lazy_read_pointer` must be a list of keys, not %s", kindName(lp)), "")
		} else {
			for _, seg := range lp.Content {
				if strings.Contains(seg.Value, "*") {
					l.at(seg, c.fieldPath("lazy_read_pointer"), diag.CodeType, "the `*` wildcard is not supported in `lazy_read_pointer`: only direct paths are", "")
				}
			}
			pc.LazyReadPointer = l.templateList(lp, c.fieldPath("lazy_read_pointer"), "lazy_read_pointer")
		}
	}
	sn := c.require("stream")
	if sn == nil {
		return nil, false
	}
	s, _ := l.streamAt(sn, c.fieldPath("stream"), c.params, depth+1)
	if s == nil {
		return nil, false
	}
	pc.Stream = s
	return pc, ok
}

// templateList compiles a list of strings as templates of routerVars.
func (l *loader) templateList(n *yaml.Node, path, field string) []*template.Template {
	out := make([]*template.Template, len(n.Content))
	for i, seg := range n.Content {
		if seg.Kind != yaml.ScalarNode {
			l.at(seg, fmt.Sprintf("%s[%d]", path, i), diag.CodeType, fmt.Sprintf("a key of `%s` must be a string, not %s", field, kindName(seg)), "")
			continue
		}
		l.tmpl(seg, fmt.Sprintf("%s[%d]", path, i), field, routerVars, &out[i])
	}
	return out
}
