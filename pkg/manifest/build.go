package manifest

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Template variables of each kind of field.
var (
	requestVars = []string{"config", "parameters", "next_page_token", "stream_slice", "stream_partition",
		"stream_interval", "stream_state"}
	authVars   = []string{"config", "parameters"}
	cursorVars = []string{"config", "parameters", "response", "headers", "last_records", "last_record",
		"last_page_size", "next_page_token", "stream_slice", "stream_partition", "stream_interval", "stream_state"}
	// cdkCursorVars are the variables the CDK 7 gives CursorPagination's cursor_value and
	// stop_condition (CursorPaginationStrategy.next_page_token); connector gives more.
	cdkCursorVars = []string{"config", "parameters", "response", "headers", "last_record", "last_page_size"}
	sizeVars      = []string{"config", "parameters"}
	fieldPathVars = []string{"config", "parameters", "stream_slice", "stream_partition", "stream_interval"}
	filterVars    = []string{"record", "config", "parameters", "next_page_token", "stream_slice",
		"stream_partition", "stream_interval", "stream_state"}
	sessionTokenVars = []string{"config", "parameters", "session_token"}
)

func pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{}
	}
	return Pos{Line: n.Line, Column: n.Column}
}

// buildDefinition reads the top level and every component the tool runs.
func (l *loader) buildDefinition(root *yaml.Node) *Definition {
	def := &Definition{File: l.file}
	top, ok := l.component(root, "", nil, "DeclarativeSource")
	if !ok {
		return nil
	}
	if top.typ != "DeclarativeSource" {
		l.at(top.vals["type"], "type", diag.CodeType, fmt.Sprintf("the top-level type must be DeclarativeSource, not %s", top.typ), "")
	}
	top.checkFields("DeclarativeSource")
	if d := top.vals["definitions"]; !isNull(d) && d.Kind != yaml.MappingNode {
		l.at(d, "definitions", diag.CodeType, fmt.Sprintf("`definitions` must be a mapping, not %s", kindName(d)), "")
	}
	if v := top.vals["version"]; !isNull(v) && v.Kind != yaml.ScalarNode {
		l.at(v, "version", diag.CodeType, fmt.Sprintf("`version` must be a string, not %s", kindName(v)), "")
	}
	for _, k := range []string{"metadata", "schemas"} {
		if v := top.vals[k]; !isNull(v) && v.Kind != yaml.MappingNode {
			l.at(v, k, diag.CodeType, fmt.Sprintf("`%s` must be a mapping, not %s", k, kindName(v)), "")
		}
	}
	if bn := top.vals["api_budget"]; !isNull(bn) {
		def.Budget = l.apiBudget(bn)
	}
	l.jobLimit(top)
	dynamic := top.vals["dynamic_streams"]
	def.Dynamic = l.dynamicStreams(dynamic)

	names := map[string]*yaml.Node{}
	var condNames []conditionalName
	condBroken := false // a ConditionalStreams not read: its names are unknown
	streams := top.vals["streams"]
	switch {
	case isNull(streams):
		if isEmpty(dynamic) {
			l.at(root, "", diag.CodeMissingField, "the definition is missing the required field `streams`", "")
		}
	case streams.Kind != yaml.SequenceNode:
		l.at(streams, "streams", diag.CodeType, fmt.Sprintf("`streams` must be a list, not %s", kindName(streams)), "")
	default:
		for i, sn := range streams.Content {
			if isConditional(sn) {
				cs := l.conditional(sn, fmt.Sprintf("streams[%d]", i), len(def.Streams), func(name *yaml.Node) {
					condNames = append(condNames, conditionalName{name, i})
				})
				if cs != nil {
					def.Conditional = append(def.Conditional, cs)
				} else {
					condBroken = true
				}
				continue
			}
			s, name := l.stream(sn, fmt.Sprintf("streams[%d]", i))
			if name != nil {
				if prev, dup := names[name.Value]; dup {
					l.at(name, fmt.Sprintf("streams[%d].name", i), diag.CodeType,
						fmt.Sprintf("stream name `%s` is already used by the stream at line %d:%d", name.Value, prev.Line, prev.Column),
						"stream names must be unique")
				} else {
					names[name.Value] = name
				}
			}
			if s != nil {
				def.Streams = append(def.Streams, s)
			}
		}
	}

	known := l.conditionalNames(names, condNames)
	if !condBroken {
		var where map[string]*yaml.Node
		def.Groups, where = l.streamGroups(top.vals["stream_groups"], known, !isEmpty(dynamic))
		l.checkGroupAncestry(def, def.Groups, where)
		ApplyGroups(allStreams(def), def.Groups)
	}
	if cn := top.vals["check"]; !isNull(cn) {
		def.CheckStreams = l.check(cn, known, isEmpty(dynamic) && !condBroken)
		def.CheckDynamic = l.checkDyn
	}
	if sn := top.vals["spec"]; !isNull(sn) {
		def.ConnectionSpec, def.AdvancedAuth = l.spec(sn, def)
		def.ConfigNormalization = l.norm
	}
	if cl := top.vals["concurrency_level"]; !isNull(cl) {
		def.Concurrency = l.concurrencyLevel(cl)
	}
	return def
}

// check reads check: CheckStream{stream_names}.
func (l *loader) check(n *yaml.Node, names map[string]*yaml.Node, verifyNames bool) []string {
	c, ok := l.component(n, "check", nil, "CheckStream")
	if !ok {
		return nil
	}
	if c.typ == "CheckDynamicStream" {
		l.checkDyn = l.checkDynamic(c)
		return nil
	}
	if c.typ != "CheckStream" {
		l.unsupported(n, "check", c.typ, "check")
		return nil
	}
	c.checkFields("CheckStream")
	sn := c.get("stream_names")
	if isNull(sn) {
		return nil
	}
	if sn.Kind != yaml.SequenceNode {
		l.at(sn, "check.stream_names", diag.CodeType, fmt.Sprintf("`stream_names` must be a list of stream names, not %s", kindName(sn)), "")
		return nil
	}
	var out []string
	for i, item := range sn.Content {
		p := fmt.Sprintf("check.stream_names[%d]", i)
		if item.Kind != yaml.ScalarNode {
			l.at(item, p, diag.CodeType, fmt.Sprintf("a stream name must be a string, not %s", kindName(item)), "")
			continue
		}
		if _, ok := names[item.Value]; !ok && verifyNames {
			known := make([]string, 0, len(names))
			for k := range names {
				known = append(known, k)
			}
			hint := ""
			if s := suggest(item.Value, known); s != "" {
				hint = fmt.Sprintf("did you mean `%s`?", s)
			}
			l.at(item, p, diag.CodeType, fmt.Sprintf("check names the stream `%s`, which is not defined", item.Value), hint)
			continue
		}
		out = append(out, item.Value)
	}
	return out
}

// spec reads spec: Spec{connection_specification, advanced_auth}, and sets def.SpecJSON.
func (l *loader) spec(n *yaml.Node, def *Definition) (conn, adv map[string]any) {
	c, ok := l.component(n, "spec", nil, "Spec")
	if !ok {
		return nil, nil
	}
	if c.typ != "Spec" {
		l.at(c.vals["type"], "spec.type", diag.CodeType, fmt.Sprintf("`spec` must be a Spec, not %s", c.typ), "")
		return nil, nil
	}
	c.checkFields("Spec")
	if cs := c.require("connection_specification"); cs != nil {
		if cs.Kind != yaml.MappingNode {
			l.at(cs, "spec.connection_specification", diag.CodeType, fmt.Sprintf("`connection_specification` must be a mapping (a JSON schema), not %s", kindName(cs)), "")
		} else {
			conn, _ = toValue(cs).(map[string]any)
			def.SpecJSON.ConnectionSpec = l.schemaValue(cs, "spec.connection_specification")
		}
	}
	if aa := c.get("advanced_auth"); aa != nil {
		if aa.Kind != yaml.MappingNode {
			l.at(aa, "spec.advanced_auth", diag.CodeType, fmt.Sprintf("`advanced_auth` must be a mapping, not %s", kindName(aa)), "")
		} else {
			adv, _ = toValue(aa).(map[string]any)
			def.SpecJSON.AdvancedAuth = l.schemaValue(aa, "spec.advanced_auth")
		}
	}
	if du := c.get("documentation_url"); du != nil && isString(du) {
		def.SpecJSON.DocumentationURL = du.Value
		if u, err := url.Parse(du.Value); err != nil || !u.IsAbs() {
			l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeType, Line: du.Line, Column: du.Column, Path: "spec.documentation_url",
				Message: fmt.Sprintf("`documentation_url` %q is not an absolute URL: the Airbyte protocol's documentationUrl is a URI, so `connector airbyte spec` leaves it out", du.Value),
				Hint:    "write the address with its scheme, as https://docs.example.com/my-source"})
		}
	}
	if r := c.get("config_normalization_rules"); !isEmpty(r) {
		l.norm = l.configNormalization(r, "spec.config_normalization_rules")
	}
	return conn, adv
}

// stream reads one entry of streams. It returns the stream (nil when it cannot be run)
// and the node of its name, for the uniqueness check.
func (l *loader) stream(n *yaml.Node, path string) (*Stream, *yaml.Node) {
	return l.streamAt(n, path, nil, 0)
}

// streamAt reads a stream: one of streams, or (parent set, depth > 0) the parent stream of a
// ParentStreamConfig, inside the $parameters of its child.
func (l *loader) streamAt(n *yaml.Node, path string, parent *params, depth int) (*Stream, *yaml.Node) {
	c, ok := l.component(n, path, parent, "DeclarativeStream")
	if !ok {
		return nil, nil
	}
	name := c.get("name")
	if name != nil && name.Kind != yaml.ScalarNode {
		l.at(name, c.fieldPath("name"), diag.CodeType, fmt.Sprintf("the stream name must be a string, not %s", kindName(name)), "")
		name = nil
	}
	if c.typ == "StateDelegatingStream" {
		return l.delegating(c, n, path, name, depth)
	}
	if c.typ != "DeclarativeStream" {
		l.unsupported(n, path, c.typ, "stream")
		return nil, name
	}
	c.checkFields("DeclarativeStream")
	if name == nil {
		c.require("name")
	}
	s := &Stream{Pos: pos(n)}
	if name != nil {
		s.Name = name.Value
	}
	if pk := c.get("primary_key"); pk != nil {
		if !primaryKeyOK(pk) {
			l.at(pk, c.fieldPath("primary_key"), diag.CodeType, fmt.Sprintf("`primary_key` must be a string, a list of strings or a list of lists of strings, not %s", kindName(pk)), "")
		}
		s.PrimaryKey = toValue(pk)
	}
	incOK, dynamic := true, false
	if in := c.get("incremental_sync"); !isEmpty(in) {
		s.Incremental, incOK = l.incremental(in, c.fieldPath("incremental_sync"), c.params, nil)
	}
	if tn := c.get("transformations"); !isEmpty(tn) {
		var good bool
		if s.Transformations, good = l.transformations(tn, c.fieldPath("transformations"), c.params); !good {
			incOK = false
		}
	}
	filesOK := true
	if fu := c.get("file_uploader"); !isEmpty(fu) {
		filesOK = l.fileUploader(fu, c.fieldPath("file_uploader"), c.params, s)
	}
	migrations, migOK := l.stateMigrations(c.get("state_migrations"), c.fieldPath("state_migrations"), c.params)
	if sl := c.get("schema_loader"); sl != nil && sl.Kind != yaml.MappingNode && sl.Kind != yaml.SequenceNode && !isRefString(sl) {
		l.at(sl, c.fieldPath("schema_loader"), diag.CodeType, fmt.Sprintf("`schema_loader` must be a mapping or a list, not %s", kindName(sl)), "")
	} else if sl != nil {
		s.Schema, s.DynamicSchema, dynamic = l.schemaLoaderDynamic(sl, c.fieldPath("schema_loader"), s.Name, c.params)
	}
	rn := c.require("retriever")
	if rn == nil {
		return nil, name
	}
	auth := &streamAuth{name: s.Name, path: path}
	if !l.retriever(rn, c.fieldPath("retriever"), c.params, s, auth, depth) || !incOK || !migOK || !filesOK {
		return nil, name
	}
	if s.StateMigrations = migrations; !l.migrationsFit(s, migrations, c.fieldPath("state_migrations")) {
		return nil, name
	}
	if sel := s.Selector; sel != nil && !sel.orderWritten && s.Incremental != nil && s.Incremental.IsClientSideIncremental {
		sel.FilterFirst = false
	}
	if dynamic && s.DynamicSchema == nil && s.Selector != nil && s.Selector.Normalization == NormalizationDefault {
		l.unsupported(c.get("schema_loader"), c.fieldPath("schema_loader"), DynamicSchemaLoader, "in a list of schema loaders, with schema_normalization: Default")
		return nil, name
	}
	return s, name
}

// delegating reads a StateDelegatingStream: its two streams, each a DeclarativeStream of its
// own, under its name.
func (l *loader) delegating(c *comp, n *yaml.Node, path string, name *yaml.Node, depth int) (*Stream, *yaml.Node) {
	c.checkFields("StateDelegatingStream")
	if name == nil {
		c.require("name")
	}
	s := &Stream{Pos: pos(n), Delegating: &Delegating{}}
	if name != nil {
		s.Name = name.Value
	}
	s.Delegating.APIRetentionPeriod = l.plainString(c, "api_retention_period", "")
	var ok = true
	for _, f := range []string{"full_refresh_stream", "incremental_stream"} {
		sn := c.require(f)
		if sn == nil {
			ok = false
			continue
		}
		inner, _ := l.streamAt(sn, c.fieldPath(f), c.params, depth+1)
		if inner == nil {
			ok = false
			continue
		}
		if f == "full_refresh_stream" {
			s.Delegating.FullRefresh = inner
		} else {
			s.Delegating.Incremental = inner
		}
	}
	if !ok {
		return nil, name
	}
	if s.Delegating.Incremental.Incremental == nil {
		l.at(n, path, diag.CodeMissingField, "the incremental_stream of a StateDelegatingStream needs an incremental_sync", "")
		return nil, name
	}
	// What the stream is until the state decides: the full refresh one.
	d := *s.Delegating.FullRefresh
	d.Name, d.Pos, d.Delegating = s.Name, s.Pos, s.Delegating
	return &d, name
}

func primaryKeyOK(n *yaml.Node) bool {
	if n.Kind == yaml.ScalarNode {
		return true
	}
	if n.Kind != yaml.SequenceNode {
		return false
	}
	for _, item := range n.Content {
		if item.Kind == yaml.SequenceNode {
			for _, x := range item.Content {
				if x.Kind != yaml.ScalarNode {
					return false
				}
			}
		} else if item.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// retriever reads a SimpleRetriever into s; false when the stream cannot be run.
func (l *loader) retriever(n *yaml.Node, path string, parent *params, s *Stream, auth *streamAuth, depth int) bool {
	c, ok := l.component(n, path, parent, "SimpleRetriever")
	if !ok {
		return false
	}
	if c.typ == "AsyncRetriever" {
		return l.asyncRetriever(c, s, auth, depth)
	}
	if c.typ != "SimpleRetriever" {
		l.unsupported(n, path, c.typ, "retriever")
		return false
	}
	c.checkFields("SimpleRetriever")
	ok = true
	if v := c.get("stream_slicer"); !isEmpty(v) {
		l.unsupportedValue(v, c.fieldPath("stream_slicer"), "stream_slicer")
		ok = false
	}
	var uses []optionUse
	if v := c.get("pagination_reset"); !isEmpty(v) {
		s.PaginationReset = l.paginationReset(v, c.fieldPath("pagination_reset"), c.params)
		ok = ok && s.PaginationReset != nil
	}
	dec, dok := l.retrieverDecoder(c)
	s.Decoder, ok = dec, ok && dok
	s.IgnoreSlicerOnPaginated, _ = l.boolField(c, "ignore_stream_slicer_parameters_on_paginated_requests")
	if v := c.get("partition_router"); !isEmpty(v) {
		r, rok := l.routers(v, c.fieldPath("partition_router"), c.params, &uses, depth)
		s.Router = r
		ok = ok && rok
	}
	if rq := c.require("requester"); rq != nil {
		rc, rok := l.component(rq, c.fieldPath("requester"), c.params, "HttpRequester")
		if rok {
			if rc.typ != "HttpRequester" {
				l.unsupported(rq, rc.path, rc.typ, "requester")
				ok = false
			} else {
				auth.requester = rq
				l.streams = append(l.streams, auth)
				s.Requester = l.requester(rc, requestVars, auth, &uses)
			}
		}
	}
	if sel := c.require("record_selector"); sel != nil {
		s.Selector = l.selector(sel, c.fieldPath("record_selector"), c.params)
	}
	if pn := c.get("paginator"); pn != nil {
		s.Paginator = l.paginator(pn, c.fieldPath("paginator"), c.params, &uses)
	}
	l.checkPaginatedDecoder(c, s.Decoder, s.Paginator)
	if s.Selector != nil && s.Selector.ToFile != nil {
		// The extractor reads the body itself; the decoder serves the paginator alone.
		s.Decoder = s.Selector.ToFile
	}
	l.conflicts = append(l.conflicts, uses)
	if pr := s.PaginationReset; pr != nil && pr.Records > 0 && !isEmpty(mapGet(c.get("record_selector"), "record_filter")) {
		// The CDK refuses to build such a retriever: the count would not see the records
		// the filter drops.
		l.at(c.get("pagination_reset"), c.fieldPath("pagination_reset"), diag.CodeType,
			"`limits` of a PaginationReset cannot be used with a record_filter (the CDK refuses it: \"PaginationResetLimits are not supported while having record filter.\")", "")
		ok = false
	}
	return ok && s.Requester != nil && s.Selector != nil
}

// decoder checks a decoder field: JsonDecoder (the default) is what the tool reads.
func (l *loader) decoder(c *comp, field string) bool {
	d := c.get(field)
	if isEmpty(d) {
		return true
	}
	dc, ok := l.component(d, c.fieldPath(field), c.params, "")
	if !ok {
		return false
	}
	if dc.typ != "JsonDecoder" {
		l.unsupported(d, dc.path, dc.typ, field)
		return false
	}
	dc.checkFields("JsonDecoder")
	return true
}

func (l *loader) boolField(c *comp, f string) (val, set bool) {
	v := c.get(f)
	if v == nil {
		return false, false
	}
	if v.Tag == "!!bool" {
		b, _ := strconv.ParseBool(v.Value)
		return b, true
	}
	if isString(v) {
		if b, err := strconv.ParseBool(strings.ToLower(v.Value)); err == nil {
			return b, true
		}
	}
	l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be true or false, not %s", f, kindName(v)), "")
	return false, false
}

// stringTemplate schedules a scalar field as a template; other kinds are type errors.
func (l *loader) stringTemplate(c *comp, f string, vars []string, dst **template.Template) *pendingTemplate {
	v := c.get(f)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.ScalarNode {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a string, not %s", f, kindName(v)), "")
		return nil
	}
	return l.tmpl(v, c.fieldPath(f), f, vars, dst)
}

// plainString reads a field that is a plain string (no template).
func (l *loader) plainString(c *comp, f, def string) string {
	v := c.get(f)
	if v == nil {
		return def
	}
	if v.Kind != yaml.ScalarNode {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a string, not %s", f, kindName(v)), "")
		return def
	}
	if v.Value == "" {
		return def
	}
	return v.Value
}

// stringList reads a list of strings.
func (l *loader) stringList(c *comp, f string) ([]string, bool) {
	v := c.get(f)
	if v == nil {
		return nil, false
	}
	if v.Kind != yaml.SequenceNode {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a list of strings, not %s", f, kindName(v)), "")
		return nil, false
	}
	out := []string{}
	for i, item := range v.Content {
		if item.Kind != yaml.ScalarNode {
			l.at(item, fmt.Sprintf("%s[%d]", c.fieldPath(f), i), diag.CodeType, fmt.Sprintf("an item of `%s` must be a string, not %s", f, kindName(item)), "")
			continue
		}
		out = append(out, item.Value)
	}
	return out, true
}

// requester reads an HttpRequester. vars are the variables of its templates; auth, when
// not nil, receives its authenticator node for the one-authenticator rule; uses collects
// the statically known option names for the conflict check.
func (l *loader) requester(c *comp, vars []string, auth *streamAuth, uses *[]optionUse) *Requester {
	c.checkFields("HttpRequester")
	r := &Requester{Pos: pos(c.n), Parameters: c.params.values(), Method: "GET"}
	l.stringTemplate(c, "url_base", vars, &r.URLBase)
	l.stringTemplate(c, "path", vars, &r.Path)
	l.stringTemplate(c, "url", vars, &r.URL)
	if c.get("url_base") == nil && c.get("url") == nil {
		l.at(c.n, c.path, diag.CodeMissingField, "HttpRequester is missing the required field `url_base` (or `url`)", "")
	}
	if m := c.get("http_method"); m != nil {
		up := strings.ToUpper(m.Value)
		if m.Kind != yaml.ScalarNode || (up != "GET" && up != "POST") {
			l.at(m, c.fieldPath("http_method"), diag.CodeType, fmt.Sprintf("`http_method` must be GET or POST, not %s", describe(m)), "")
		} else {
			r.Method = up
		}
	}
	if b, set := l.boolField(c, "use_cache"); set {
		r.UseCache = &b
	}
	if v := l.queryPropertiesParam(c, r); v != nil {
		c.vals["request_parameters"] = v
	}
	r.Params = l.optionTree(c, "request_parameters", vars, InjectParameter, "the requester", uses)
	r.Headers = l.optionTree(c, "request_headers", vars, InjectHeader, "the requester", uses)
	r.BodyJSON = l.optionTree(c, "request_body_json", vars, InjectBodyJSON, "the requester", uses)
	r.BodyData = l.optionTree(c, "request_body_data", vars, InjectBodyData, "the requester", uses)
	if r.BodyJSON != nil && r.BodyData != nil {
		l.at(c.keys["request_body_data"], c.fieldPath("request_body_data"), diag.CodeOptionConflict,
			"both `request_body_json` and `request_body_data` are set; a request has one body",
			"keep `request_body_json` for a JSON body or `request_body_data` for a form body")
	}
	l.requestBody(c, r, vars, uses)
	r.ErrorHandler = l.errorHandler(c.get("error_handler"), c.fieldPath("error_handler"), c.params)
	l.requesterQueryProperties(c, r)
	an := c.get("authenticator")
	if auth != nil {
		auth.node, auth.params = an, c.params
	}
	if an != nil {
		r.Authenticator = l.authenticator(an, c.fieldPath("authenticator"), c.params, auth == nil, uses)
		l.legacyAPIURL(r.Authenticator, c)
	}
	return r
}

func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return "`" + n.Value + "`"
	}
	return kindName(n)
}

// optionTree reads a request option field (a mapping or one template string) as a Tree.
func (l *loader) optionTree(c *comp, f string, vars []string, place, source string, uses *[]optionUse) *Tree {
	v := c.get(f)
	if isEmpty(v) {
		return nil
	}
	if v.Kind == yaml.SequenceNode {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a mapping or a template string, not a list", f), "")
		return nil
	}
	if v.Kind == yaml.MappingNode && uses != nil {
		src := fmt.Sprintf("%s's `%s`", source, f)
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i]
			if !strings.Contains(k.Value, "{") {
				*uses = append(*uses, optionUse{place: place, source: src, node: k})
			}
		}
	}
	l.literalCredentials(v, c.fieldPath(f), f, place, vars)
	return l.tree(v, c.fieldPath(f), f, vars)
}

// literalCredentials checks, in a request option mapping, the entries whose name says they
// carry a credential (Authorization, an API key, a token, a secret, a password): the value
// must come from the testing values, or from something known only at run time (a token an
// API returned), never from the definition itself (seed rule). Nested JSON body properties
// are checked too.
func (l *loader) literalCredentials(m *yaml.Node, path, field, place string, vars []string) {
	if m.Kind != yaml.MappingNode {
		return
	}
	what := map[string]string{InjectHeader: "header", InjectParameter: "query parameter",
		InjectBodyData: "form field", InjectBodyJSON: "JSON body property"}[place]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if v.Kind == yaml.MappingNode && place == InjectBodyJSON {
			l.literalCredentials(v, join(path, k.Value), field, place, vars)
			continue
		}
		if !credentialName(k.Value) {
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Tag == "!!bool" {
			continue
		}
		var t *template.Template
		p := l.tmpl(v, join(path, k.Value), field, vars, &t)
		if p != nil {
			l.creds = append(l.creds, &credential{p: p, field: configKey(k.Value), allowEmpty: true, runtime: true,
				what: fmt.Sprintf("the %s `%s`", what, k.Value)})
		}
	}
}

// credentialName reports a request option name that says its value is a credential:
// Authorization, password, secret, X-Api-Key, api_token, access_token, X-Auth-Token, a bare
// token or key (Google's `key=`); not page_token, sort_key or max_tokens.
func credentialName(name string) bool {
	words := nameWords(name)
	if len(words) > 0 && words[0] == "x" {
		words = words[1:]
	}
	if len(words) == 1 && (words[0] == "token" || words[0] == "key") {
		return true
	}
	for i, w := range words {
		switch w {
		case "authorization", "password", "passwd", "pwd", "secret", "apikey", "apitoken", "accesstoken",
			"authtoken", "credential", "credentials", "passphrase":
			return true
		case "key", "token":
			if i > 0 {
				switch words[i-1] {
				case "api", "access", "auth", "private", "secret", "client", "session", "bearer", "refresh", "id", "app":
					return true
				}
			}
		}
	}
	return false
}

// nameWords splits a name into lower-case words: "X-Api-Key" and "apiKey" → x api key.
func nameWords(name string) []string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		if r >= 'A' && r <= 'Z' && (prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9') {
			b.WriteByte('_')
		}
		b.WriteRune(r)
		prev = r
	}
	var out []string
	for _, w := range wordSplit.Split(strings.ToLower(b.String()), -1) {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// configKey suggests a testing value name for a request option: X-Api-Key → x_api_key.
func configKey(name string) string {
	return strings.Trim(wordSplit.ReplaceAllString(strings.ToLower(name), "_"), "_")
}

// treeKey identifies a converted request option mapping or list: one shared through
// aliases or $ref is converted once per field and set of variables, and its Tree is shared.
type treeKey struct {
	n     *yaml.Node
	field string
	vars  *string
}

// tree converts a request option value; strings (and mapping keys) become templates.
func (l *loader) tree(n *yaml.Node, path, field string, vars []string) *Tree {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	t := &Tree{Pos: pos(n)}
	if l.tick() {
		return t
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		key := treeKey{n: n, field: field}
		if len(vars) > 0 {
			key.vars = &vars[0]
		}
		if shared, ok := l.trees[key]; ok {
			return shared
		}
		if l.trees == nil {
			l.trees = map[treeKey]*Tree{}
		}
		l.trees[key] = t
	}
	switch n.Kind {
	case yaml.MappingNode:
		if tn := mapGet(n, "type"); tn != nil && tn.Value == "QueryProperties" {
			l.unsupported(n, path, "QueryProperties", field)
			return t
		}
		t.Kind = KindMap
		t.Entries = make([]TreeEntry, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			e := &t.Entries[i/2]
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && literal(k.Value) && literal(v.Value) {
				// The common case costs no path string.
				e.Key, _ = template.Compile(k.Value, vars)
				e.Value = l.tree(v, "", field, vars)
				continue
			}
			p := join(path, k.Value)
			l.treeTemplate(k, p, field, vars, &e.Key)
			e.Value = l.tree(v, p, field, vars)
		}
	case yaml.SequenceNode:
		t.Kind = KindList
		t.Items = make([]*Tree, len(n.Content))
		for i, item := range n.Content {
			p := ""
			if !literal(item.Value) || item.Kind != yaml.ScalarNode {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			t.Items[i] = l.tree(item, p, field, vars)
		}
	default:
		if isString(n) {
			t.Kind = KindTemplate
			l.treeTemplate(n, path, field, vars, &t.Template)
		} else {
			t.Kind = KindScalar
			t.Scalar = toValue(n)
		}
	}
	return t
}

// treeTemplate is tmpl for the strings of a request option: plain text (most of them, and
// all of a large body) is set at once, templates wait for the compile pass.
func (l *loader) treeTemplate(n *yaml.Node, path, field string, vars []string, dst **template.Template) {
	if literal(n.Value) {
		*dst, _ = template.Compile(n.Value, vars)
		return
	}
	l.tmpl(n, path, field, vars, dst)
}

// literal reports text with no template tag in it.
func literal(s string) bool {
	return !strings.Contains(s, "{{") && !strings.Contains(s, "{%") && !strings.Contains(s, "{#")
}

func mapGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// selector reads a RecordSelector with its DpathExtractor and RecordFilter.
func (l *loader) selector(n *yaml.Node, path string, parent *params) *Selector {
	c, ok := l.component(n, path, parent, "RecordSelector")
	if !ok {
		return nil
	}
	if c.typ != "RecordSelector" {
		l.unsupported(n, path, c.typ, "record_selector")
		return nil
	}
	c.checkFields("RecordSelector")
	sel := &Selector{Parameters: c.params.values()}
	good := true
	if sel.Normalization, ok = l.normalization(c); !ok {
		good = false
	}
	// The CDK 7.28.2 filters first unless told otherwise, or unless the stream is a
	// client-side incremental one (streamAt).
	sel.FilterFirst = true
	if v, set := l.boolField(c, "transform_before_filtering"); set {
		sel.FilterFirst, sel.orderWritten = !v, true
	}
	if en := c.require("extractor"); en != nil {
		ec, ok := l.component(en, c.fieldPath("extractor"), c.params, "DpathExtractor")
		switch {
		case !ok:
			good = false
		case ec.typ == ResponseToFile:
			sel.ToFile = l.toFileExtractor(ec)
		case ec.typ != "DpathExtractor":
			l.unsupported(en, ec.path, ec.typ, "extractor")
			good = false
		default:
			ec.checkFields("DpathExtractor")
			l.decoder(ec, "decoder")
			fp := ec.get("field_path")
			switch {
			case fp == nil:
				l.at(en, ec.path, diag.CodeMissingField, "DpathExtractor is missing the required field `field_path`", "write `field_path: []` to select the whole response body")
			case fp.Kind != yaml.SequenceNode:
				l.at(fp, ec.fieldPath("field_path"), diag.CodeType, fmt.Sprintf("`field_path` must be a list, not %s", kindName(fp)), "")
			default:
				sel.FieldPath = make([]*template.Template, len(fp.Content))
				for i, seg := range fp.Content {
					p := fmt.Sprintf("%s[%d]", ec.fieldPath("field_path"), i)
					if seg.Kind != yaml.ScalarNode {
						l.at(seg, p, diag.CodeType, fmt.Sprintf("a `field_path` segment must be a string, not %s", kindName(seg)), "")
						continue
					}
					l.tmpl(seg, p, "field_path", fieldPathVars, &sel.FieldPath[i])
				}
			}
		}
	}
	if fn := c.get("record_filter"); fn != nil {
		fc, ok := l.component(fn, c.fieldPath("record_filter"), c.params, "RecordFilter")
		switch {
		case !ok:
			good = false
		case fc.typ != "RecordFilter":
			l.unsupported(fn, fc.path, fc.typ, "record_filter")
			good = false
		default:
			fc.checkFields("RecordFilter")
			sel.FilterParameters = fc.params.values()
			if v := fc.get("condition"); v != nil && !(isString(v) && v.Value == "") {
				l.stringTemplate(fc, "condition", filterVars, &sel.Filter)
			}
		}
	}
	if !good {
		return nil
	}
	return sel
}

// paginator reads NoPagination (nil) or a DefaultPaginator.
func (l *loader) paginator(n *yaml.Node, path string, parent *params, uses *[]optionUse) *Paginator {
	c, ok := l.component(n, path, parent, "NoPagination")
	if !ok {
		return nil
	}
	switch c.typ {
	case "NoPagination":
		c.checkFields("NoPagination")
		return nil
	case "DefaultPaginator":
	default:
		l.unsupported(n, path, c.typ, "paginator")
		return nil
	}
	c.checkFields("DefaultPaginator")
	p := &Paginator{Pos: pos(n), Parameters: c.params.values()}
	if sn := c.require("pagination_strategy"); sn != nil {
		p.Strategy = l.strategy(sn, c.fieldPath("pagination_strategy"), c.params)
	}
	if on := c.get("page_size_option"); on != nil {
		p.PageSizeOption = l.requestOption(on, c.fieldPath("page_size_option"), c.params, false, nil, "the page_size_option", uses)
	}
	if on := c.get("page_token_option"); on != nil {
		cursor := p.Strategy != nil && p.Strategy.Type == CursorPagination
		p.PageTokenOption = l.requestOption(on, c.fieldPath("page_token_option"), c.params, cursor, nil, "the page_token_option", uses)
	}
	return p
}

// strategy reads OffsetIncrement, PageIncrement or CursorPagination.
func (l *loader) strategy(n *yaml.Node, path string, parent *params) *Strategy {
	c, ok := l.component(n, path, parent, "")
	if !ok {
		return nil
	}
	switch c.typ {
	case OffsetIncrement, PageIncrement, CursorPagination:
	default:
		l.unsupported(n, path, c.typ, "pagination_strategy")
		return nil
	}
	c.checkFields(c.typ)
	s := &Strategy{Type: c.typ, Pos: pos(n), InjectOnFirstRequest: true}
	if v := c.get("page_size"); v != nil {
		switch {
		case v.Tag == "!!int":
			l.tmpl(v, c.fieldPath("page_size"), "page_size", sizeVars, &s.PageSize)
		case isString(v) && strings.Contains(v.Value, "{"):
			l.tmpl(v, c.fieldPath("page_size"), "page_size", sizeVars, &s.PageSize)
		case isString(v):
			if _, err := strconv.Atoi(strings.TrimSpace(v.Value)); err != nil {
				l.at(v, c.fieldPath("page_size"), diag.CodeType, fmt.Sprintf("`page_size` must be an integer or a template, not %s", describe(v)), "")
			} else {
				l.tmpl(v, c.fieldPath("page_size"), "page_size", sizeVars, &s.PageSize)
			}
		default:
			l.at(v, c.fieldPath("page_size"), diag.CodeType, fmt.Sprintf("`page_size` must be an integer or a template, not %s", kindName(v)), "")
		}
	}
	if c.typ != CursorPagination {
		if b, set := l.boolField(c, "inject_on_first_request"); set && !b {
			s.InjectOnFirstRequest = false
		}
	}
	if c.typ == PageIncrement {
		if v := c.get("start_from_page"); v != nil {
			i, err := strconv.Atoi(strings.TrimSpace(v.Value))
			if v.Kind != yaml.ScalarNode || err != nil || (v.Tag != "!!int" && v.Tag != "!!str") {
				l.at(v, c.fieldPath("start_from_page"), diag.CodeType, fmt.Sprintf("`start_from_page` must be an integer, not %s", describe(v)), "")
			} else {
				s.StartFromPage = i
			}
		}
	}
	if c.typ == CursorPagination {
		if c.require("cursor_value") != nil {
			l.cdkOnly(l.stringTemplate(c, "cursor_value", cursorVars, &s.CursorValue), cdkCursorVars)
		}
		l.cdkOnly(l.stringTemplate(c, "stop_condition", cursorVars, &s.StopCondition), cdkCursorVars)
	}
	return s
}

// requestOption reads a RequestOption, or a RequestPath when allowPath. places limits
// inject_into (nil: any of the four).
func (l *loader) requestOption(n *yaml.Node, path string, parent *params, allowPath bool, places []string, source string, uses *[]optionUse) *RequestOption {
	c, ok := l.component(n, path, parent, "RequestOption")
	if !ok {
		return nil
	}
	if c.typ == "RequestPath" {
		c.checkFields("RequestPath")
		if !allowPath {
			l.at(n, path, diag.CodeType, "RequestPath is only valid as the page_token_option of a CursorPagination paginator", "use a RequestOption with inject_into")
			return nil
		}
		return &RequestOption{Pos: pos(n), InjectInto: InjectPath}
	}
	if c.typ != "RequestOption" {
		l.unsupported(n, path, c.typ, lastSeg(path))
		return nil
	}
	c.checkFields("RequestOption")
	o := &RequestOption{Pos: pos(n)}
	if places == nil {
		places = []string{InjectParameter, InjectHeader, InjectBodyData, InjectBodyJSON}
	}
	if in := c.require("inject_into"); in != nil {
		if in.Kind != yaml.ScalarNode || indexOf(places, in.Value) < 0 || places[indexOf(places, in.Value)] != in.Value {
			hint := ""
			if s := suggest(in.Value, places); s != "" && in.Kind == yaml.ScalarNode {
				hint = fmt.Sprintf("did you mean `%s`?", s)
			}
			l.at(in, c.fieldPath("inject_into"), diag.CodeType, fmt.Sprintf("`inject_into` must be one of %s, not %s", strings.Join(places, ", "), describe(in)), hint)
		} else {
			o.InjectInto = in.Value
		}
	}
	fn, fp := c.get("field_name"), c.get("field_path")
	switch {
	case fp != nil && o.InjectInto != "" && o.InjectInto != InjectBodyJSON:
		l.at(fp, c.fieldPath("field_path"), diag.CodeType, "`field_path` is only valid with `inject_into: body_json` (the Airbyte CDK refuses it too: \"Nested field injection is only supported for body JSON injection\")", "use `field_name`")
	case fp != nil:
		if fp.Kind != yaml.SequenceNode {
			l.at(fp, c.fieldPath("field_path"), diag.CodeType, fmt.Sprintf("`field_path` must be a list, not %s", kindName(fp)), "")
			break
		}
		o.FieldPath = make([]*template.Template, len(fp.Content))
		for i, seg := range fp.Content {
			p := fmt.Sprintf("%s[%d]", c.fieldPath("field_path"), i)
			if seg.Kind != yaml.ScalarNode {
				l.at(seg, p, diag.CodeType, fmt.Sprintf("a `field_path` segment must be a string, not %s", kindName(seg)), "")
				continue
			}
			l.tmpl(seg, p, "field_path", authVars, &o.FieldPath[i])
		}
	case fn != nil:
		if l.stringTemplate(c, "field_name", authVars, &o.FieldName) != nil && uses != nil && o.InjectInto != "" && !strings.Contains(fn.Value, "{") {
			*uses = append(*uses, optionUse{place: o.InjectInto, source: source, node: fn})
		}
	default:
		l.at(n, path, diag.CodeMissingField, "RequestOption is missing the required field `field_name`", "")
	}
	if fn != nil && fp != nil {
		l.at(c.keys["field_path"], c.fieldPath("field_path"), diag.CodeOptionConflict, "both `field_name` and `field_path` are set (the Airbyte CDK refuses it too: \"Only one of field_name or field_path can be provided to RequestOption\")", "keep one of them")
	}
	return o
}
