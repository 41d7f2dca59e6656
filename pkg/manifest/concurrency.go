package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// concurrencyLevel reads concurrency_level (ConcurrencyLevel). An integer default_concurrency
// is kept as it is; a string is a template on config, rendered when a read starts, and the
// CDK refuses one that reads config without a max_concurrency to bound what a user may
// enter, so this does too.
func (l *loader) concurrencyLevel(n *yaml.Node) *ConcurrencyLevel {
	c, ok := l.component(n, "concurrency_level", nil, "ConcurrencyLevel")
	if !ok {
		return nil
	}
	if c.typ != "ConcurrencyLevel" {
		l.at(c.vals["type"], "concurrency_level.type", diag.CodeType, fmt.Sprintf("`concurrency_level` must be a ConcurrencyLevel, not %s", c.typ), "")
		return nil
	}
	c.checkFields("ConcurrencyLevel")
	cl := &ConcurrencyLevel{Pos: pos(n)}
	if v := c.get("max_concurrency"); v != nil {
		m, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil {
			l.at(v, c.fieldPath("max_concurrency"), diag.CodeType, fmt.Sprintf("`max_concurrency` must be an integer, not %s", describe(v)), "")
		} else {
			cl.Max = m
		}
	}
	v := c.require("default_concurrency")
	switch {
	case v == nil:
	case v.Kind == yaml.ScalarNode && v.Tag == "!!int":
		cl.Fixed, _ = strconv.Atoi(v.Value)
	case isString(v):
		if strings.Contains(v.Value, "config") && cl.Max <= 0 {
			l.at(v, c.fieldPath("default_concurrency"), diag.CodeMissingField,
				"`default_concurrency` reads config, so `max_concurrency` is required: it bounds the value a user may enter",
				"add `max_concurrency: N` beside it")
		}
		l.tmpl(v, c.fieldPath("default_concurrency"), "default_concurrency", handlerConfigVars, &cl.Default)
	default:
		l.at(v, c.fieldPath("default_concurrency"), diag.CodeType, fmt.Sprintf("`default_concurrency` must be an integer or a template, not %s", describe(v)), "")
	}
	return cl
}
