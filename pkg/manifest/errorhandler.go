package manifest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Error handler component types, as written in definitions.
const (
	DefaultErrorHandler     = "DefaultErrorHandler"
	CompositeErrorHandler   = "CompositeErrorHandler"
	HTTPResponseFilter      = "HttpResponseFilter"
	ExponentialBackoff      = "ExponentialBackoffStrategy"
	ConstantBackoff         = "ConstantBackoffStrategy"
	WaitTimeFromHeader      = "WaitTimeFromHeader"
	WaitUntilTimeFromHeader = "WaitUntilTimeFromHeader"
)

// Response filter actions.
const (
	ActionSuccess     = "SUCCESS"
	ActionFail        = "FAIL"
	ActionRetry       = "RETRY"
	ActionIgnore      = "IGNORE"
	ActionRateLimited = "RATE_LIMITED"
	// ActionResetPagination starts the slice's pagination again (see PaginationReset).
	ActionResetPagination = "RESET_PAGINATION"
)

var (
	filterActions = []string{ActionSuccess, ActionFail, ActionRetry, ActionIgnore, ActionRateLimited, ActionResetPagination}
	failureTypes  = []string{"system_error", "config_error", "transient_error"}
)

// Template variables of the error handler fields.
var (
	handlerConfigVars  = []string{"config", "parameters"}
	responseFilterVars = []string{"config", "parameters", "response", "headers"}
)

// ErrorHandler is the error_handler of a requester: a DefaultErrorHandler or a
// CompositeErrorHandler. It decides, for every response and network error, whether the
// request succeeded, failed, is retried, or is ignored (no records, end of the stream).
type ErrorHandler struct {
	Type string
	Pos  Pos
	// Handlers are the children of a CompositeErrorHandler, in order.
	Handlers []*ErrorHandler
	// Filters are the response_filters of a DefaultErrorHandler, checked in order.
	Filters []*ResponseFilter
	// Backoff are the backoff_strategies; the first that yields a wait is used.
	Backoff []*BackoffStrategy
	// MaxRetries is max_retries (an integer or a template on config); nil means 5.
	MaxRetries *template.Template
	// MaxTime is max_time in seconds (an integer or a template on config); nil means 600.
	MaxTime    *template.Template
	Parameters map[string]any
}

// ResponseFilter is an HttpResponseFilter. A response matches when its status is one of
// HTTPCodes, or Predicate is true, or its error message contains ErrorMessageContains.
type ResponseFilter struct {
	Pos Pos
	// Action is one of the Action* constants; empty means the filter never matches.
	Action string
	// FailureType is kept as written (system_error, config_error, transient_error).
	FailureType          string
	HTTPCodes            []int
	ErrorMessageContains string
	// Predicate (variables response, headers, config, parameters), nil when absent.
	Predicate *template.Template
	// ErrorMessage (variables response, headers, config, parameters), nil when absent.
	ErrorMessage *template.Template
	Parameters   map[string]any
}

// BackoffStrategy is one backoff strategy; Type says which fields apply. Number fields are
// templates on config (a literal number is a literal template).
type BackoffStrategy struct {
	Type string
	Pos  Pos
	// Factor of ExponentialBackoffStrategy (nil means 5): the wait is factor × 2^attempts.
	Factor *template.Template
	// Seconds is ConstantBackoffStrategy.backoff_time_in_seconds.
	Seconds *template.Template
	// Header, Regex, MaxWaiting (max_waiting_time_in_seconds) and MinWait (only
	// WaitUntilTimeFromHeader) of the header strategies; nil when absent.
	Header, Regex, MaxWaiting, MinWait *template.Template
	Parameters                         map[string]any
}

var errorHandlerFields = map[string][]string{
	DefaultErrorHandler:   {"type", "response_filters", "backoff_strategies", "max_retries", "max_time", "$parameters"},
	CompositeErrorHandler: {"type", "error_handlers", "$parameters"},
	HTTPResponseFilter: {"type", "action", "failure_type", "error_message", "error_message_contains", "http_codes",
		"predicate", "$parameters"},
	// jitter_range_in_seconds only lengthens the CDK's wait at random: waiting the base time is
	// one of its outcomes, so it is accepted and not applied.
	ExponentialBackoff:      {"type", "factor", "jitter_range_in_seconds", "$parameters"},
	ConstantBackoff:         {"type", "backoff_time_in_seconds", "jitter_range_in_seconds", "$parameters"},
	WaitTimeFromHeader:      {"type", "header", "regex", "max_waiting_time_in_seconds", "$parameters"},
	WaitUntilTimeFromHeader: {"type", "header", "min_wait", "regex", "max_waiting_time_in_seconds", "$parameters"},
}

func init() {
	for t, fs := range errorHandlerFields {
		fields[t] = fs
		fieldSets[t] = map[string]bool{}
		for _, f := range fs {
			fieldSets[t][f] = true
		}
	}
}

// errorHandler reads the error_handler of a requester; nil when absent or unusable (the
// problem is reported).
func (l *loader) errorHandler(n *yaml.Node, path string, parent *params) *ErrorHandler {
	if isEmpty(n) {
		return nil
	}
	c, ok := l.component(n, path, parent, DefaultErrorHandler)
	if !ok {
		return nil
	}
	switch c.typ {
	case DefaultErrorHandler:
		return l.defaultErrorHandler(c)
	case CompositeErrorHandler:
		c.checkFields(CompositeErrorHandler)
		h := &ErrorHandler{Type: CompositeErrorHandler, Pos: pos(n), Parameters: c.params.values()}
		if c.require("error_handlers") == nil {
			return nil
		}
		var ok bool
		if h.Handlers, ok = componentList(l, c, "error_handlers", "a list of error handlers", l.errorHandler); !ok {
			return nil
		}
		return h
	default:
		l.unsupported(n, path, c.typ, lastSeg(path))
		return nil
	}
}

func (l *loader) defaultErrorHandler(c *comp) *ErrorHandler {
	c.checkFields(DefaultErrorHandler)
	h := &ErrorHandler{Type: DefaultErrorHandler, Pos: pos(c.n), Parameters: c.params.values()}
	l.number(c, "max_retries", true, &h.MaxRetries)
	l.number(c, "max_time", true, &h.MaxTime)
	filters, okFilters := componentList(l, c, "response_filters", "a list of HttpResponseFilter", l.responseFilter)
	backoff, okBackoff := componentList(l, c, "backoff_strategies", "a list", l.backoffStrategy)
	if !okFilters || !okBackoff {
		return nil
	}
	h.Filters, h.Backoff = filters, backoff
	return h
}

// componentList reads the list field of c whose items are components, each with read. A
// field that is not a list is reported as "`field` must be WHAT"; ok is false when the field
// or any item is unusable (their problems are reported). An absent field is an empty list.
func componentList[T any](l *loader, c *comp, field, what string, read func(*yaml.Node, string, *params) *T) (items []*T, ok bool) {
	list := c.get(field)
	if isEmpty(list) {
		return nil, true
	}
	if list.Kind != yaml.SequenceNode {
		l.at(list, c.fieldPath(field), diag.CodeType, fmt.Sprintf("`%s` must be %s, not %s", field, what, kindName(list)), "")
		return nil, false
	}
	ok = true
	for i, item := range list.Content {
		v := read(item, fmt.Sprintf("%s[%d]", c.fieldPath(field), i), c.params)
		if v == nil {
			ok = false
			continue
		}
		items = append(items, v)
	}
	return items, ok
}

// responseFilter reads an HttpResponseFilter.
func (l *loader) responseFilter(n *yaml.Node, path string, parent *params) *ResponseFilter {
	c, ok := l.component(n, path, parent, HTTPResponseFilter)
	if !ok {
		return nil
	}
	if c.typ != HTTPResponseFilter {
		l.unsupported(n, path, c.typ, "response_filters")
		return nil
	}
	c.checkFields(HTTPResponseFilter)
	f := &ResponseFilter{Pos: pos(n), Parameters: c.params.values()}
	good := true
	if a := c.get("action"); a != nil {
		switch {
		case a.Kind != yaml.ScalarNode || !slices.Contains(filterActions, a.Value):
			hint := ""
			if s := suggest(strings.ToUpper(a.Value), filterActions); s != "" && a.Kind == yaml.ScalarNode {
				hint = fmt.Sprintf("did you mean `%s`?", s)
			}
			l.at(a, c.fieldPath("action"), diag.CodeType, fmt.Sprintf("`action` must be one of %s, not %s", strings.Join(filterActions, ", "), describe(a)), hint)
			good = false
		default:
			f.Action = a.Value
		}
	} else {
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeMissingField, Line: n.Line, Column: n.Column, Path: path,
			Message: "HttpResponseFilter has no `action`, so it never matches; it is ignored",
			Hint:    "add `action: " + strings.Join(filterActions, " | ") + "`"})
	}
	if ft := c.get("failure_type"); ft != nil {
		if ft.Kind != yaml.ScalarNode || !slices.Contains(failureTypes, ft.Value) {
			l.at(ft, c.fieldPath("failure_type"), diag.CodeType, fmt.Sprintf("`failure_type` must be one of %s, not %s", strings.Join(failureTypes, ", "), describe(ft)), "")
		} else {
			f.FailureType = ft.Value
		}
	}
	if codes := c.get("http_codes"); codes != nil {
		if codes.Kind != yaml.SequenceNode {
			l.at(codes, c.fieldPath("http_codes"), diag.CodeType, fmt.Sprintf("`http_codes` must be a list of HTTP status codes, not %s", kindName(codes)), "")
			good = false
		} else {
			for i, item := range codes.Content {
				code, err := strconv.Atoi(item.Value)
				if item.Kind != yaml.ScalarNode || item.Tag == "!!float" || err != nil || code < 100 || code > 599 {
					l.at(item, fmt.Sprintf("%s[%d]", c.fieldPath("http_codes"), i), diag.CodeType,
						fmt.Sprintf("an HTTP status code must be an integer from 100 to 599, not %s", describe(item)), "")
					good = false
					continue
				}
				f.HTTPCodes = append(f.HTTPCodes, code)
			}
		}
	}
	if m := c.get("error_message_contains"); m != nil {
		if m.Kind != yaml.ScalarNode {
			l.at(m, c.fieldPath("error_message_contains"), diag.CodeType, fmt.Sprintf("`error_message_contains` must be a string, not %s", kindName(m)), "")
		} else {
			f.ErrorMessageContains = m.Value
		}
	}
	if p := c.get("predicate"); p != nil && !(isString(p) && p.Value == "") {
		l.stringTemplate(c, "predicate", responseFilterVars, &f.Predicate)
	}
	if m := c.get("error_message"); m != nil && !(isString(m) && m.Value == "") {
		l.stringTemplate(c, "error_message", responseFilterVars, &f.ErrorMessage)
	}
	if f.Action != "" && isEmpty(c.get("http_codes")) && c.get("predicate") == nil && c.get("error_message_contains") == nil {
		// The CDK's factory builds such a filter (no codes, an empty predicate) and it never
		// matches: a definition that has one runs, the filter doing nothing.
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeMissingField, Path: path, Line: n.Line, Column: n.Column,
			Message: "HttpResponseFilter has an `action` but nothing to match, so it never applies (the Airbyte CDK ignores it the same way)",
			Hint:    "set `http_codes`, `predicate` or `error_message_contains`, or remove the filter"})
	}
	if !good {
		return nil
	}
	return f
}

// backoffStrategy reads one of the four backoff strategies.
func (l *loader) backoffStrategy(n *yaml.Node, path string, parent *params) *BackoffStrategy {
	c, ok := l.component(n, path, parent, "")
	if !ok {
		return nil
	}
	s := &BackoffStrategy{Type: c.typ, Pos: pos(n), Parameters: c.params.values()}
	switch c.typ {
	case ExponentialBackoff:
		l.number(c, "factor", false, &s.Factor)
	case ConstantBackoff:
		if c.require("backoff_time_in_seconds") == nil {
			return nil
		}
		l.number(c, "backoff_time_in_seconds", false, &s.Seconds)
	case WaitTimeFromHeader, WaitUntilTimeFromHeader:
		if c.require("header") == nil {
			return nil
		}
		l.stringTemplate(c, "header", handlerConfigVars, &s.Header)
		l.stringTemplate(c, "regex", handlerConfigVars, &s.Regex)
		l.number(c, "max_waiting_time_in_seconds", false, &s.MaxWaiting)
		if c.typ == WaitUntilTimeFromHeader {
			l.number(c, "min_wait", false, &s.MinWait)
		}
	default:
		l.unsupported(n, path, c.typ, "backoff_strategies")
		return nil
	}
	c.checkFields(c.typ)
	return s
}

// number reads a field that is a number (an integer when integer is set) or a template on
// config; a literal is compiled as a literal template.
func (l *loader) number(c *comp, f string, integer bool, dst **template.Template) {
	v := c.get(f)
	if v == nil {
		return
	}
	what := "a number"
	if integer {
		what = "an integer"
	}
	bad := func() {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be %s or a template, not %s", f, what, describe(v)), "")
	}
	if v.Kind != yaml.ScalarNode {
		bad()
		return
	}
	switch {
	case v.Tag == "!!int", v.Tag == "!!float" && !integer:
	case isString(v) && strings.Contains(v.Value, "{"):
	case isString(v):
		var err error
		if integer {
			_, err = strconv.Atoi(strings.TrimSpace(v.Value))
		} else {
			_, err = strconv.ParseFloat(strings.TrimSpace(v.Value), 64)
		}
		if err != nil {
			bad()
			return
		}
	default:
		bad()
		return
	}
	l.tmpl(v, c.fieldPath(f), f, handlerConfigVars, dst)
}
