package manifest

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// fields lists, per component type, every field of the Airbyte declarative component
// schema (declarative_component_schema.yaml), so that a field real definitions use is
// never "unknown" even when this tool does not act on it.
var fields = map[string][]string{
	"DeclarativeSource": {"type", "version", "check", "definitions", "streams", "dynamic_streams", "spec",
		"metadata", "schemas", "concurrency_level", "api_budget", "max_concurrent_async_job_count", "description",
		"stream_groups"},
	"ConditionalStreams": {"type", "condition", "streams", "$parameters"},
	"DeclarativeStream": {"type", "name", "retriever", "incremental_sync", "primary_key", "schema_loader",
		"transformations", "state_migrations", "file_uploader", "$parameters"},
	"SimpleRetriever": {"type", "requester", "record_selector", "paginator", "decoder", "partition_router",
		"pagination_reset", "ignore_stream_slicer_parameters_on_paginated_requests", "stream_slicer",
		"name", "primary_key", "$parameters"},
	"PaginationReset":       {"type", "action", "limits"},
	"PaginationResetLimits": {"type", "number_of_records"},
	"QueryProperties": {"type", "property_list", "always_include_properties", "property_chunking",
		"property_selector", "$parameters"},
	"PropertyChunking":           {"type", "property_limit_type", "property_limit", "record_merge_strategy", "$parameters"},
	"GroupByKeyMergeStrategy":    {"type", "key", "$parameters"},
	"PropertiesFromEndpoint":     {"type", "property_field_path", "retriever", "$parameters"},
	"JsonSchemaPropertySelector": {"type", "transformations", "$parameters"},
	"HttpRequester": {"type", "url_base", "url", "path", "http_method", "authenticator", "request_parameters",
		"request_headers", "request_body_json", "request_body_data", "request_body", "error_handler",
		"use_cache", "fetch_properties_from_endpoint", "query_properties", "name", "$parameters"},
	"AsyncRetriever": {"type", "record_selector", "status_mapping", "status_extractor", "download_target_extractor",
		"download_extractor", "creation_requester", "polling_requester", "polling_job_timeout",
		"failed_retry_wait_time_in_seconds", "download_target_requester", "download_requester", "download_paginator",
		"abort_requester", "delete_requester", "partition_router", "decoder", "download_decoder", "$parameters"},
	"AsyncJobStatusMap": {"type", "running", "completed", "failed", "timeout", "skipped"},
	"RecordSelector":    {"type", "extractor", "record_filter", "schema_normalization", "transform_before_filtering", "$parameters"},
	"DpathExtractor":    {"type", "field_path", "decoder", "record_expander", "$parameters"},
	"RecordFilter":      {"type", "condition", "$parameters"},
	"DefaultPaginator":  {"type", "pagination_strategy", "page_size_option", "page_token_option", "url_base", "decoder", "$parameters"},
	"NoPagination":      {"type", "$parameters"},
	OffsetIncrement:     {"type", "page_size", "inject_on_first_request", "$parameters"},
	PageIncrement:       {"type", "page_size", "start_from_page", "inject_on_first_request", "$parameters"},
	CursorPagination:    {"type", "cursor_value", "stop_condition", "page_size", "decoder", "$parameters"},
	"RequestOption":     {"type", "inject_into", "field_name", "field_path", "$parameters"},
	"RequestPath":       {"type", "$parameters"},
	"CheckStream":       {"type", "stream_names", "dynamic_streams_check_configs", "config_overrides", "$parameters"},
	"Spec":              {"type", "connection_specification", "documentation_url", "advanced_auth", "config_normalization_rules", "$parameters"},
	"ConcurrencyLevel":  {"type", "default_concurrency", "max_concurrency", "$parameters"},
	"JsonDecoder":       {"type", "$parameters"},
	JSONLDecoder:        {"type", "$parameters"},
	JSONItemsDecoder:    {"type", "items_path", "encoding", "$parameters"},
	XMLDecoder:          {"type", "$parameters"},
	IterableDecoder:     {"type", "$parameters"},
	CSVDecoder:          {"type", "encoding", "delimiter", "set_values_to_none", "$parameters"},
	GzipDecoder:         {"type", "decoder", "$parameters"},
	ZipfileDecoder:      {"type", "decoder", "$parameters"},
	NoAuth:              {"type", "$parameters"},
	BasicAuth:           {"type", "username", "password", "$parameters"},
	BearerAuth:          {"type", "api_token", "$parameters"},
	APIKeyAuth:          {"type", "api_token", "header", "inject_into", "$parameters"},
	OAuthAuth: {"type", "client_id_name", "client_id", "client_secret_name", "client_secret", "refresh_token_name",
		"refresh_token", "token_refresh_endpoint", "access_token_name", "access_token_value", "expires_in_name",
		"grant_type_name", "grant_type", "refresh_request_body", "refresh_request_headers", "scopes",
		"token_expiry_date", "token_expiry_date_format", "refresh_token_updater", "profile_assertion",
		"use_profile_assertion", "refresh_token_error_status_codes", "refresh_token_error_key", "refresh_token_error_values",
		"send_refresh_request_as_query_params", "$parameters"},
	SessionAuth: {"type", "login_requester", "session_token_path", "expiration_duration", "request_authentication",
		"decoder", "$parameters"},
	"refresh_token_updater": {"refresh_token_name", "access_token_config_path", "refresh_token_config_path",
		"token_expiry_date_config_path", "refresh_token_error_status_codes", "refresh_token_error_key",
		"refresh_token_error_values"},
	"Bearer":        {"type", "$parameters"},
	ListRouter:      {"type", "cursor_field", "values", "request_option", "$parameters"},
	SubstreamRouter: {"type", "parent_stream_configs", "$parameters"},
	"ParentStreamConfig": {"type", "stream", "parent_key", "partition_field", "request_option",
		"incremental_dependency", "lazy_read_pointer", "extra_fields", "$parameters"},
	GroupingRouter: {"type", "group_size", "underlying_partition_router", "deduplicate", "$parameters"},
	DatetimeCursor: {"type", "clamping", "cursor_field", "allow_catalog_defined_cursor_field", "cursor_datetime_formats",
		"start_datetime", "start_time_option", "end_datetime", "end_time_option", "datetime_format", "cursor_granularity",
		"is_data_feed", "is_client_side_incremental", "is_compare_strictly", "global_substream_cursor", "lookback_window",
		"partition_field_end", "partition_field_start", "step", "$parameters"},
	"MinMaxDatetime":        {"type", "datetime", "datetime_format", "max_datetime", "min_datetime", "$parameters"},
	"Clamping":              {"target", "target_details"},
	CountCursor:             {"type", "cursor_field", "allow_catalog_defined_cursor_field", "start_value", "start_value_option", "$parameters"},
	"StateDelegatingStream": {"type", "name", "full_refresh_stream", "incremental_stream", "api_retention_period", "$parameters"},
	UnionRouter:             {"type", "partition_field", "partition_routers", "$parameters"},
	"ApiKey":                {"type", "inject_into", "api_token", "$parameters"},
	AddFields:               {"type", "fields", "condition", "$parameters"},
	"AddedFieldDefinition":  {"type", "path", "value", "value_type", "$parameters"},
	RemoveFields:            {"type", "field_pointers", "condition", "$parameters"},
	KeysToLower:             {"type", "$parameters"},
	KeysToSnakeCase:         {"type", "$parameters"},
	KeysReplace:             {"type", "old", "new", "$parameters"},
	FlattenFields:           {"type", "flatten_lists", "$parameters"},
	DpathFlattenFields:      {"type", "field_path", "delete_origin_value", "replace_record", "key_transformation", "$parameters"},
	"KeyTransformation":     {"type", "prefix", "suffix", "$parameters"},
	InlineSchemaLoader:      {"type", "schema", "$parameters"},
	JSONFileSchemaLoader:    {"type", "file_path", "$parameters"},
	DynamicSchemaLoader: {"type", "retriever", "schema_type_identifier", "schema_transformations", "schema_filter",
		"$parameters"},
	"SchemaTypeIdentifier": {"type", "schema_pointer", "key_pointer", "type_pointer", "types_mapping", "$parameters"},
	"TypesMap":             {"type", "target_type", "current_type", "condition"},
	"ComplexFieldType":     {"type", "field_type", "items"},
	"HTTPAPIBudget": {"type", "policies", "ratelimit_reset_header", "ratelimit_remaining_header",
		"status_codes_for_ratelimit_hit", "$parameters"},
	FixedWindowPolicy:         {"type", "period", "call_limit", "matchers", "$parameters"},
	MovingWindowPolicy:        {"type", "rates", "matchers", "$parameters"},
	UnlimitedPolicy:           {"type", "matchers", "$parameters"},
	"Rate":                    {"type", "limit", "interval", "$parameters"},
	"HttpRequestRegexMatcher": {"type", "method", "url_base", "url_path_pattern", "params", "headers", "weight", "$parameters"},

	// Selective and legacy session authentication (selective.go), request_body (body.go).
	SelectiveAuth: {"type", "authenticator_selection_path", "authenticators", "$parameters"},
	LegacySessionAuth: {"type", "header", "login_url", "session_token", "session_token_response_key", "username",
		"password", "validate_session_url", "$parameters"},
	"RequestBodyJsonObject":     {"type", "value", "$parameters"},
	"RequestBodyUrlEncodedForm": {"type", "value", "$parameters"},
	"RequestBodyPlainText":      {"type", "value", "$parameters"},
	"RequestBodyGraphQL":        {"type", "value", "$parameters"},
	// spec.config_normalization_rules (confignorm.go)
	"ConfigNormalizationRules": {"type", "config_migrations", "transformations", "validations"},
	"ConfigMigration":          {"type", "description", "transformations"},
	ConfigAddFields:            {"type", "fields", "condition"},
	ConfigRemapField:           {"type", "map", "field_path"},
	ConfigRemoveFields:         {"type", "field_pointers", "condition"},
	DpathValidator:             {"type", "field_path", "validation_strategy"},
	PredicateValidator:         {"type", "value", "validation_strategy"},
	ValidateAdheresToSchema:    {"type", "base_schema"},

	// JSON Web Tokens (jwt.go).
	JWTAuth: {"type", "secret_key", "base64_encode_secret_key", "algorithm", "token_duration", "header_prefix",
		"jwt_headers", "additional_jwt_headers", "jwt_payload", "additional_jwt_payload", "passphrase",
		"request_option", "$parameters"},
	"JwtHeaders": {"kid", "typ", "cty"},
	"JwtPayload": {"iss", "sub", "aud"},

	// rotating tokens with quotas (ratelimited.go)
	RateLimitedAuth: {"type", "tokens", "token_delimiter", "auth_method", "header", "quota_status_source", "quotas",
		"max_wait_time", "budget_reserve_fraction", "budget_min_reserve", "$parameters"},
	QuotaStatusSource: {"type", "url", "http_method", "request_headers", "unavailable_status_codes", "$parameters"},
	TokenQuota: {"type", "name", "remaining_path", "reset_path", "limit_path", "matchers", "remaining_header",
		"reset_header", "limit_header", "exhaustion_status_codes", "$parameters"},

	// dynamic streams (dynamic.go)
	"DynamicDeclarativeStream":     {"type", "name", "stream_template", "components_resolver", "use_parent_parameters", "$parameters"},
	HTTPComponentsResolver:         {"type", "retriever", "components_mapping", "$parameters"},
	ConfigComponentsResolver:       {"type", "stream_config", "components_mapping", "$parameters"},
	"StreamConfig":                 {"type", "configs_pointer", "default_values", "$parameters"},
	ParametrizedComponentsResolver: {"type", "stream_parameters", "components_mapping", "$parameters"},
	"StreamParametersDefinition":   {"type", "list_of_parameters_for_stream", "$parameters"},
	"ComponentMappingDefinition":   {"type", "field_path", "value", "value_type", "create_or_update", "condition", "$parameters"},
	"CheckDynamicStream":           {"type", "stream_count", "use_check_availability", "config_overrides", "$parameters"},

	// state migrations (statemigration.go)
	LegacyToPerPartitionStateMigration: {"type", "$parameters"},
}

var fieldSets = func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for t, fs := range fields {
		out[t] = map[string]bool{}
		for _, f := range fs {
			out[t][f] = true
		}
	}
	return out
}()

// params is a merged $parameters set: inherited entries overridden by a component's own.
type params struct {
	parent *params
	// own is the component's $parameters mapping; m is the merged set.
	own   *yaml.Node
	m     map[string]*yaml.Node
	value map[string]any
	// l counts the entries copied from the parent against maxNodes.
	l *loader
}

func (p *params) get(name string) *yaml.Node {
	if p == nil {
		return nil
	}
	return p.m[name]
}

// values is the set as plain values: the template variable `parameters`. The inherited
// values are the parent's (converted once), the component's own are converted here.
func (p *params) values() map[string]any {
	if p == nil {
		return map[string]any{}
	}
	if p.value == nil {
		base := p.parent.values()
		p.l.inherit(len(base), p.own)
		p.value = make(map[string]any, len(p.m))
		for k, v := range base {
			p.value[k] = v
		}
		for i := 0; i+1 < len(p.own.Content); i += 2 {
			if _, outer := base[p.own.Content[i].Value]; outer && p.l.parentWins {
				continue // use_parent_parameters: the outer value wins
			}
			p.value[p.own.Content[i].Value] = toValue(p.own.Content[i+1])
		}
	}
	return p.value
}

// mergeParams lays the mapping own over the inherited set; own nil keeps parent.
func (l *loader) mergeParams(parent *params, own *yaml.Node) *params {
	if own == nil || own.Kind != yaml.MappingNode || len(own.Content) == 0 {
		return parent
	}
	p := &params{parent: parent, own: own, m: map[string]*yaml.Node{}, l: l}
	if parent != nil {
		l.inherit(len(parent.m), own)
		for k, v := range parent.m {
			p.m[k] = v
		}
	}
	for i := 0; i+1 < len(own.Content); i += 2 {
		p.m[own.Content[i].Value] = own.Content[i+1]
	}
	return p
}

// inherit counts n $parameters entries copied into the component whose own set is at,
// against maxNodes: a large set inherited by many components is a bomb of its own.
func (l *loader) inherit(n int, at *yaml.Node) {
	if l == nil || n == 0 {
		return
	}
	if l.inherited += n; l.inherited > maxNodes && !l.overLimit {
		l.tooBig(at, "")
		l.overLimit = true
	}
}

// comp is one component mapping being read: its type, its merged parameters, its fields.
type comp struct {
	l      *loader
	n      *yaml.Node
	typ    string
	path   string
	params *params
	keys   map[string]*yaml.Node
	vals   map[string]*yaml.Node
}

// component opens mapping n as a component. defType is the type of its slot (used when
// no `type` is written; "" means the type is required). ok is false when n is not a usable
// mapping (already reported).
func (l *loader) component(n *yaml.Node, path string, parent *params, defType string) (*comp, bool) {
	if n == nil || n == brokenRef || l.tick() {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		l.at(n, path, diag.CodeType, fmt.Sprintf("`%s` must be a mapping (a component), not %s", lastSeg(path), kindName(n)), "")
		return nil, false
	}
	c := &comp{l: l, n: n, path: path, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		c.keys[n.Content[i].Value] = n.Content[i]
		c.vals[n.Content[i].Value] = n.Content[i+1]
	}
	if own := c.vals["$parameters"]; own != nil && !isNull(own) && own.Kind != yaml.MappingNode {
		l.at(own, join(path, "$parameters"), diag.CodeType, fmt.Sprintf("`$parameters` must be a mapping, not %s", kindName(own)), "")
	}
	c.params = l.mergeParams(parent, c.vals["$parameters"])
	c.typ = defaultType(c.vals["type"], defType)
	if t := c.vals["type"]; !isNull(t) && !isString(t) {
		l.at(t, join(path, "type"), diag.CodeType, fmt.Sprintf("`type` must be a string, not %s", kindName(t)), "")
		return nil, false
	}
	if l.python(n, path, lastSeg(path)) {
		return nil, false
	}
	if c.typ == "" {
		l.at(n, path, diag.CodeMissingField, fmt.Sprintf("`%s` is missing the required field `type`", lastSeg(path)), "")
		return nil, false
	}
	return c, true
}

// defaultType is the written type, or the type of the slot when none is written.
func defaultType(written *yaml.Node, slot string) string {
	if written != nil && isString(written) && written.Value != "" {
		return written.Value
	}
	return slot
}

// get returns field name: the written value, or when it is absent or empty the inherited
// parameter of the same name. Nil when neither.
func (c *comp) get(name string) *yaml.Node {
	v := c.vals[name]
	if isEmpty(v) {
		if p := c.params.get(name); p != nil && !isNull(p) {
			return p
		}
	}
	if isNull(v) {
		return nil
	}
	return v
}

func (c *comp) fieldPath(name string) string { return join(c.path, name) }

// strict lists the component types whose CDK schema sets `additionalProperties: false`: the
// CDK refuses a field it does not name, so an unknown field there is an error. Every other
// component accepts and ignores unknown fields, so here they are warnings.
var strict = map[string]bool{"DeclarativeSource": true, "ConfigNormalizationRules": true}

// notRun lists fields of the CDK schema that this tool reads past without acting on them.
// A field whose effect shows in the requests or the records (component set) is refused as
// unsupported when it is written (and not false); the others are accepted with a warning
// that says what is skipped (skip set).
var notRun = map[string]map[string]struct{ component, skip string }{
	"DpathExtractor": {"record_expander": {component: "RecordExpander"}},
	OAuthAuth:        {"send_refresh_request_as_query_params": {component: "OAuthAuthenticator send_refresh_request_as_query_params"}},
	"CheckStream":    {"config_overrides": {skip: "`check` uses the testing values as they are"}},

	"CheckDynamicStream": {"config_overrides": {skip: "`check` uses the testing values as they are"}},
}

// checkFields reports fields not in the component's field list. Unknown fields follow the
// CDK schema: an error in a strict component (see strict), else a warning, since the CDK
// ignores them; a near miss of a known field gets a "did you mean" hint either way.
func (c *comp) checkFields(typ string) {
	known := fieldSets[typ]
	for i := 0; i+1 < len(c.n.Content); i += 2 {
		k := c.n.Content[i]
		if f, ok := notRun[typ][k.Value]; ok {
			c.notRun(typ, k, c.n.Content[i+1], f.component, f.skip)
			continue
		}
		if known[k.Value] {
			continue
		}
		sev := diag.Warning
		if strict[typ] {
			sev = diag.Error
		}
		if c.l.full() {
			c.l.add(diag.Diagnostic{Code: diag.CodeUnknownField, Severity: sev})
			continue
		}
		names := make([]string, 0, len(known))
		for f := range known {
			if f != "type" && f != "$parameters" {
				names = append(names, f)
			}
		}
		sort.Strings(names)
		d := diag.Diagnostic{Code: diag.CodeUnknownField, Severity: sev, Line: k.Line, Column: k.Column, Path: c.fieldPath(k.Value),
			Message: fmt.Sprintf("unknown field `%s` in %s", k.Value, typ)}
		if sev == diag.Warning {
			d.Message += "; it is ignored"
		}
		switch s := suggest(k.Value, names); {
		case s != "":
			d.Hint = fmt.Sprintf("did you mean `%s`?", s)
		case k.Value == "class_name":
			d.Hint = "the CDK ignores `class_name` beside a type that is not Custom*: no Python runs here"
		default:
			d.Hint = "known fields: " + strings.Join(names, ", ")
		}
		c.l.add(d)
	}
}

// notRun reports the field k (value v) of typ that this tool does not act on: unsupported
// when component is set, else a warning saying what is skipped.
func (c *comp) notRun(typ string, k, v *yaml.Node, component, skip string) {
	if isEmpty(v) || (v.Kind == yaml.ScalarNode && v.Tag == "!!bool" && v.Value == "false") {
		return
	}
	if component != "" {
		c.l.unsupported(v, c.fieldPath(k.Value), component, k.Value)
		return
	}
	c.l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeUnsupported, Line: k.Line, Column: k.Column, Path: c.fieldPath(k.Value),
		Message: fmt.Sprintf("`%s` of %s is not applied: %s", k.Value, typ, skip), Component: typ})
}

// require reports a missing required field and returns its value.
func (c *comp) require(name string) *yaml.Node {
	v := c.get(name)
	if isEmpty(v) {
		if c.vals[name] == brokenRef {
			return nil
		}
		c.l.at(c.n, c.path, diag.CodeMissingField, fmt.Sprintf("%s is missing the required field `%s`", c.typ, name), "")
		return nil
	}
	return v
}

// unsupported reports a component type this tool does not run yet, or Python code (see
// python), and the Python components nested in it.
func (l *loader) unsupported(n *yaml.Node, path, typ, where string) {
	if l.python(n, path, where) {
		return
	}
	defer l.pythonWithin(n, path, map[*yaml.Node]bool{})
	msg := fmt.Sprintf("%s is not supported yet", typ)
	if where != "" {
		msg += " (" + where + ")"
	}
	d := diag.Diagnostic{Code: diag.CodeUnsupported, Message: msg, Path: path, Component: typ}
	if _, known := fields[typ]; !known && !strings.HasPrefix(typ, "Custom") {
		types := make([]string, 0, len(fields))
		for t := range fields {
			types = append(types, t)
		}
		sort.Strings(types)
		if s := suggest(typ, types); s != "" {
			d.Hint = fmt.Sprintf("if `%s` is a typo: did you mean `%s`?", typ, s)
		}
	}
	if n != nil {
		d.Line, d.Column = n.Line, n.Column
	}
	l.add(d)
}

// unsupportedValue reports every component found in the value of an unsupported slot: a
// component, or a list of them. slot names the field, used when a component has no type.
func (l *loader) unsupportedValue(n *yaml.Node, path, slot string) {
	if isEmpty(n) {
		return
	}
	if n.Kind == yaml.SequenceNode {
		for i, item := range n.Content {
			l.unsupportedValue(item, fmt.Sprintf("%s[%d]", path, i), slot)
		}
		return
	}
	typ := slot
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "type" && isString(n.Content[i+1]) {
				typ = n.Content[i+1].Value
			}
		}
	}
	l.unsupported(n, path, typ, lastSeg(path))
}

func lastSeg(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.Index(path, "["); i > 0 {
		path = path[:i]
	}
	if path == "" {
		return "definition"
	}
	return path
}
