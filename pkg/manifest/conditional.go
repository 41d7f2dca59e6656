package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// ConditionalStreams is a ConditionalStreams entry of `streams`: streams that belong to the
// source only while Condition holds for the testing values. The Airbyte CDK decides it each
// time it lists the streams (read, discover, check), with the config after its
// normalization, and puts the streams where the entry stands; so does pkg/dynamic.Choose.
type ConditionalStreams struct {
	Pos Pos
	// Condition is the template, evaluated with `config` and an empty `parameters` (the CDK
	// gives it none) and read as the CDK's InterpolatedBoolean reads a value.
	Condition *template.Template
	Streams   []*Stream
	// At is where the streams go when the condition holds: before Definition.Streams[At]
	// (at the end when it is len(Definition.Streams)).
	At int
}

// conditionalVars are the variables of a ConditionalStreams condition.
var conditionalVars = []string{"config", "parameters"}

// isConditional reports that n is written as a ConditionalStreams.
func isConditional(n *yaml.Node) bool {
	t := mapGet(n, "type")
	return t != nil && isString(t) && t.Value == "ConditionalStreams"
}

// conditional reads the ConditionalStreams n, whose streams go before the unconditional
// stream at index at. named collects the name of each of its streams.
func (l *loader) conditional(n *yaml.Node, path string, at int, named func(name *yaml.Node)) *ConditionalStreams {
	c, ok := l.component(n, path, nil, "ConditionalStreams")
	if !ok {
		return nil
	}
	c.checkFields("ConditionalStreams")
	cs := &ConditionalStreams{Pos: pos(n), At: at}
	good := true
	// An empty condition is allowed (the CDK's schema asks for a string): it renders empty,
	// which is false.
	switch cn := c.get("condition"); {
	case cn == nil:
		c.require("condition")
		good = false
	case !isString(cn):
		l.at(cn, c.fieldPath("condition"), diag.CodeType, fmt.Sprintf("`condition` must be a string (a template), not %s", kindName(cn)),
			"the CDK's schema refuses anything else; write it as text, such as \"{{ config['sandbox'] }}\"")
		good = false
	default:
		p := l.tmpl(cn, c.fieldPath("condition"), "condition", conditionalVars, &cs.Condition)
		l.noParameters = append(l.noParameters, p)
	}
	sn := c.get("streams")
	switch {
	case sn == nil:
		c.require("streams")
		return nil
	case sn.Kind != yaml.SequenceNode:
		l.at(sn, c.fieldPath("streams"), diag.CodeType, fmt.Sprintf("`streams` must be a list of streams, not %s", kindName(sn)), "")
		return nil
	}
	for i, item := range sn.Content {
		ip := fmt.Sprintf("%s[%d]", c.fieldPath("streams"), i)
		if !l.conditionalItem(item, ip) {
			good = false
			continue
		}
		s, name := l.streamAt(item, ip, c.params, 0)
		if name != nil {
			named(name)
		}
		if s == nil {
			good = false
			continue
		}
		s.ConditionalAt = cs.Pos
		cs.Streams = append(cs.Streams, s)
	}
	if !good {
		return nil
	}
	return cs
}

// conditionalItem checks what the CDK's schema asks of a stream of a ConditionalStreams
// before it is read as a stream: a DeclarativeStream whose type is written (the CDK's
// manifest transformer gives a stream there no default type).
func (l *loader) conditionalItem(n *yaml.Node, path string) bool {
	if n == brokenRef || n.Kind != yaml.MappingNode {
		return true // reported as a stream
	}
	t := mapGet(n, "type")
	switch {
	case t == nil && mapGet(n, "class_name") != nil:
		return true // Python, reported as a stream
	case t == nil:
		l.at(n, path, diag.CodeMissingField, "a stream of a ConditionalStreams is missing the required field `type`",
			"write `type: DeclarativeStream`: the CDK gives the streams of a ConditionalStreams no default type and refuses the definition")
		return false
	case isString(t) && (t.Value == "ConditionalStreams" || t.Value == "StateDelegatingStream"):
		l.at(t, path+".type", diag.CodeType, fmt.Sprintf("the streams of a ConditionalStreams are DeclarativeStreams, not %s", t.Value),
			"the CDK's schema allows only DeclarativeStream here; write the stream at the top level of `streams`")
		return false
	}
	return true
}

// checkNoParameters warns about a condition that reads `parameters`: the CDK evaluates a
// ConditionalStreams condition with none, so it reads an empty mapping, here as there.
func (l *loader) checkNoParameters() {
	for _, p := range l.noParameters {
		if t := *p.dst; p.ok && t != nil && t.Reads("parameters") {
			l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeTemplate, Line: p.node.Line, Column: p.node.Column, Path: p.path,
				Message: "`condition` reads `parameters`, which is empty there: the Airbyte CDK evaluates a ConditionalStreams condition without its $parameters",
				Hint:    "read the testing values (`config`) instead"})
		}
	}
}

// conditionalName is the name of a stream of the ConditionalStreams at streams[group].
type conditionalName struct {
	name  *yaml.Node
	group int
}

// conditionalNames checks the names of the conditional streams and returns every stream
// name the definition may have. A name of an unconditional stream, or one used twice in one
// ConditionalStreams, would be used twice whenever the condition holds: an error, as a
// stream name used twice is. Two ConditionalStreams may name the same stream (a sandbox and
// a production variant under complementary conditions): pkg/dynamic.Choose refuses the
// values for which both hold.
func (l *loader) conditionalNames(names map[string]*yaml.Node, cond []conditionalName) map[string]*yaml.Node {
	if len(cond) == 0 {
		return names
	}
	known := make(map[string]*yaml.Node, len(names)+len(cond))
	for k, v := range names {
		known[k] = v
	}
	type inGroup struct {
		name  string
		group int
	}
	seen := map[inGroup]*yaml.Node{}
	for _, c := range cond {
		prev, dup := names[c.name.Value]
		if !dup {
			prev, dup = seen[inGroup{c.name.Value, c.group}]
		}
		if dup {
			l.at(c.name, "", diag.CodeType,
				fmt.Sprintf("stream name `%s` is already used by the stream at line %d:%d", c.name.Value, prev.Line, prev.Column),
				"stream names must be unique whenever the condition holds")
			continue
		}
		seen[inGroup{c.name.Value, c.group}] = c.name
		if _, ok := known[c.name.Value]; !ok {
			known[c.name.Value] = c.name
		}
	}
	return known
}
