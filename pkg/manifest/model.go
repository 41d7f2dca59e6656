package manifest

import (
	"time"

	"connector/pkg/template"
)

// Pos is a position in the definition file (1-based line and column).
type Pos struct {
	Line, Column int
}

// Definition is a loaded, validated connector definition: every component the tool runs, with
// its templates compiled. It is built by Load and never changed afterwards.
type Definition struct {
	File string
	// Streams in definition order: those of `streams` that are not in a ConditionalStreams.
	Streams []*Stream
	// Conditional are the ConditionalStreams of `streams`, in definition order: their streams
	// belong to the source when their condition holds for the testing values
	// (pkg/dynamic.Choose makes the definition a run sees, with none left).
	Conditional []*ConditionalStreams
	// LeftOut are the streams of the ConditionalStreams whose condition does not hold for
	// the run's testing values, each with the position of its ConditionalStreams (set by
	// pkg/dynamic.Choose), for the messages about a stream asked for by name.
	LeftOut map[string]Pos
	// CheckStreams are the names in check.stream_names; empty means every stream.
	CheckStreams []string
	// Dynamic are the dynamic_streams (dynamic.go), in definition order; their streams are
	// made once the testing values are known.
	Dynamic []*DynamicStream
	// CheckDynamic is set when check is a CheckDynamicStream.
	CheckDynamic *CheckDynamic
	// Spec is spec.connection_specification as a plain JSON value (nil when absent).
	ConnectionSpec map[string]any
	// AdvancedAuth is spec.advanced_auth as a plain JSON value (nil when absent).
	AdvancedAuth map[string]any
	// SpecJSON is spec as written, for the protocol's SPEC message: its
	// connection_specification and advanced_auth as ordered values (*record.Object) and
	// its documentation_url ("" when absent).
	SpecJSON struct {
		ConnectionSpec, AdvancedAuth any
		DocumentationURL             string
	}
	// ConfigNormalization is spec.config_normalization_rules (nil when absent): applied to
	// the testing values before use.
	ConfigNormalization *ConfigNormalization
	// Authenticator is the one authenticator of the connector (validate checks that every
	// stream resolves to the same one). Nil means no authentication.
	Authenticator *Authenticator
	// Concurrency is concurrency_level (nil when absent).
	Concurrency *ConcurrencyLevel
	// Budget is api_budget: how requests are paced (nil: they are not).
	Budget *APIBudget
	// Groups is stream_groups: each grouped stream's group, by stream name (groups.go).
	Groups map[string]string
}

// ConcurrencyLevel is concurrency_level: how many slices a read reads at once.
type ConcurrencyLevel struct {
	Pos Pos
	// Fixed is default_concurrency written as an integer: used as it is, max_concurrency
	// does not bound it (as in the CDK).
	Fixed int
	// Default is default_concurrency written as a string: a template on config whose
	// value max_concurrency bounds. Nil when Fixed is used.
	Default *template.Template
	// Max is max_concurrency (0 when absent).
	Max int
}

// Stream returns the stream with the given name, or nil.
func (d *Definition) Stream(name string) *Stream {
	for _, s := range d.Streams {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Stream is a DeclarativeStream with a SimpleRetriever.
type Stream struct {
	Name       string
	Pos        Pos
	PrimaryKey any // as written: a string, a list of strings or a list of lists
	Requester  *Requester
	Selector   *Selector
	// Paginator is nil for NoPagination.
	Paginator *Paginator
	// Router is the partition router, nil when the stream has one partition.
	Router *Router
	// Incremental is incremental_sync, nil for a full refresh stream.
	Incremental *Incremental
	// Async is set for a stream with an AsyncRetriever (async.go): Requester is then its
	// creation_requester, and DownloadView is the stream its downloads are read as.
	Async *Async
	// Delegating is set for a StateDelegatingStream: the stream read depends on the state.
	Delegating *Delegating
	// Transformations are applied to each record, in order.
	Transformations []*Transformation
	// StateMigrations change the stream's input state, in order, before its cursor reads it
	// (statemigration.go).
	StateMigrations []*StateMigration
	// IgnoreSlicerOnPaginated is ignore_stream_slicer_parameters_on_paginated_requests:
	// the partition's request options go on the first request of a slice only.
	IgnoreSlicerOnPaginated bool
	// PaginationReset is the retriever's pagination_reset (nil: none; a RESET_PAGINATION
	// answer then starts the slice again once, as the CDK's default does).
	PaginationReset *PaginationReset
	// Decoder is the retriever's decoder; nil for JsonDecoder.
	Decoder *Decoder
	// Schema is the stream's JSON schema from its schema_loader, decoded as record.Decode
	// decodes JSON (*record.Object, []any, json.Number, …); nil when the stream has none
	// (the CDK's DefaultSchemaLoader finds no file for a manifest-only connector).
	Schema any
	// DynamicSchema is the stream's DynamicSchemaLoader (dynschema.go), nil without one: its
	// schema is read from the API when the stream's records are normalized to it.
	DynamicSchema *DynamicSchema
	// ConditionalAt is the position of the ConditionalStreams the stream belongs to; zero for
	// a stream that is not in one.
	ConditionalAt Pos
	// Group is the stream group the stream is in ("" for none): no other stream of the
	// group is read while it is (groups.go).
	Group string
	// Files is the stream's file_uploader (files.go), nil without one.
	Files *FileUploader
}

// PrimaryKeyPaths is the primary key as a list of field paths, as the Airbyte catalog
// writes it: a string is one key, a list of strings several one-field keys, a list of
// lists field paths as written; nil without a primary key.
func (s *Stream) PrimaryKeyPaths() [][]string {
	switch k := s.PrimaryKey.(type) {
	case string:
		if k == "" {
			return nil
		}
		return [][]string{{k}}
	case []any:
		var out [][]string
		for _, e := range k {
			switch e := e.(type) {
			case string:
				out = append(out, []string{e})
			case []any:
				path := []string{} // [] for an empty path, never null
				for _, p := range e {
					if ps, ok := p.(string); ok {
						path = append(path, ps)
					}
				}
				out = append(out, path)
			}
		}
		return out
	}
	return nil
}

// Requester is an HttpRequester: where and how to send a request. It is also the login
// requester of a session token authenticator.
type Requester struct {
	Pos Pos
	// URLBase and Path are joined; URL is used when URLBase is absent. Nil when absent.
	URLBase, Path, URL *template.Template
	Method             string // "GET" or "POST"
	// Request options as written, string leaves compiled. Nil when absent.
	Params, Headers, BodyData, BodyJSON *Tree
	// Authenticator of this requester; nil means NoAuth.
	Authenticator *Authenticator
	// ErrorHandler is the requester's error_handler; nil means the default behaviour (429,
	// 5xx and network errors retried, other statuses ≥ 400 fail). A session token's login
	// requester has its own.
	ErrorHandler *ErrorHandler
	// Parameters is the merged $parameters of the requester (template variable `parameters`).
	Parameters map[string]any
	// QueryProperties is the QueryProperties of request_parameters or query_properties
	// (nil: none).
	QueryProperties *QueryProperties
	// UseCache is use_cache as written (nil: not written); see Cached.
	UseCache *bool
}

// Selector is a RecordSelector with a DpathExtractor and an optional RecordFilter.
type Selector struct {
	// FieldPath segments; "*" matches every key or index. Empty means the whole body.
	FieldPath []*template.Template
	// Filter is the RecordFilter condition (variable `record`), nil when absent.
	Filter *template.Template
	// FilterFirst is the opposite of transform_before_filtering: the filter sees the
	// records before the transformations. The CDK's default is true, false for a
	// client-side incremental stream; orderWritten says the definition sets it.
	FilterFirst  bool
	orderWritten bool
	Parameters   map[string]any
	// FilterParameters are the record filter's $parameters: the selector's, with the
	// filter's own over them.
	FilterParameters map[string]any
	// Normalization is schema_normalization: NormalizationNone or NormalizationDefault
	// (cast the record's values to the stream's Schema, pkg/normalize).
	Normalization string
	// ToFile is set when the extractor is a ResponseToFileExtractor (files.go): the
	// retriever then reads its bodies with it, and FieldPath is empty.
	ToFile *Decoder
}

// Authenticator types, as written in definitions.
const (
	NoAuth      = "NoAuth"
	BasicAuth   = "BasicHttpAuthenticator"
	BearerAuth  = "BearerAuthenticator"
	APIKeyAuth  = "ApiKeyAuthenticator"
	OAuthAuth   = "OAuthAuthenticator"
	SessionAuth = "SessionTokenAuthenticator"
	// SelectiveAuth chooses one of several authenticators from the testing values.
	SelectiveAuth = "SelectiveAuthenticator"
	// LegacySessionAuth is the deprecated session token authenticator (login_url,
	// validate_session_url).
	LegacySessionAuth = "LegacySessionTokenAuthenticator"
)

// Authenticator is one of the supported authenticators; Type says which fields are set.
type Authenticator struct {
	Type string
	Pos  Pos
	// Key is the authenticator as it applies to a stream, in a canonical text: two
	// authenticators with one Key are one, and share one token.
	Key string
	// Basic: Username, Password (Password may be nil = empty). Bearer and ApiKey: APIToken.
	Username, Password, APIToken *template.Template
	// Inject is where ApiKeyAuthenticator puts the key (the legacy `header: NAME` becomes a
	// header RequestOption). Also used by a session token's ApiKey request_authentication.
	Inject *RequestOption
	// OAuth is set for OAuthAuthenticator.
	OAuth *OAuth
	// Session is set for SessionTokenAuthenticator.
	Session *Session
	// Selective is set for SelectiveAuthenticator; Select picks the alternative.
	Selective *Selective
	// Legacy is set for LegacySessionTokenAuthenticator.
	Legacy *LegacySession
	// JWT is set for JwtAuthenticator.
	JWT *JWT
	// RateLimited is set for RateLimitedMultipleTokenAuthenticator.
	RateLimited *RateLimited
	Parameters  map[string]any
}

// OAuth is the partial (refresh-based) OAuthAuthenticator.
type OAuth struct {
	// TokenRefreshEndpoint is nil in the access token flow: no endpoint, and an
	// access_token_value sent as a bearer token as it is, never refreshed (the CDK's
	// _is_access_token_flow); the flow reads no other field.
	TokenRefreshEndpoint *template.Template
	ClientID             *template.Template
	ClientSecret         *template.Template
	RefreshToken         *template.Template // nil for client_credentials
	// Names of the request properties, with their defaults applied (added by the loader):
	// client_id, client_secret, refresh_token, grant_type.
	ClientIDName, ClientSecretName, RefreshTokenName, GrantTypeName string
	// GrantType as written (a template; checked once the testing values are known when it
	// is not a literal). Nil means refresh_token.
	GrantType *template.Template
	// Scopes, nil when unset (nothing is sent).
	Scopes []*template.Template
	// Response property names, with their defaults already applied.
	AccessTokenName string // access_token
	ExpiresInName   string // expires_in
	// TokenExpiryDateFormat is the strftime-style format of the expiry property; empty means
	// the property is a number of seconds.
	TokenExpiryDateFormat string
	// Initial token from the testing values, nil when absent.
	AccessTokenValue, TokenExpiryDate *template.Template
	RefreshRequestBody                *Tree
	RefreshRequestHeaders             *Tree
	// Updater is the refresh_token_updater, nil when absent.
	Updater *TokenUpdater
	// UseProfileAssertion asks for a token with the JWT bearer grant: the token request
	// sends only the grant type and the JWT that ProfileAssertion (a JwtAuthenticator) signs.
	UseProfileAssertion bool
	ProfileAssertion    *Authenticator
}

// TokenUpdater is refresh_token_updater: where rotated tokens are written in the testing values.
type TokenUpdater struct {
	RefreshTokenName          string   // refresh_token
	AccessTokenConfigPath     []string // credentials.access_token
	RefreshTokenConfigPath    []string // credentials.refresh_token
	TokenExpiryDateConfigPath []string // credentials.token_expiry_date
}

// Session is a SessionTokenAuthenticator.
type Session struct {
	Login     *Requester
	TokenPath []string
	// Expiration is expiration_duration; zero means unset (log in before every data request).
	Expiration time.Duration
	// RequestAuth is "Bearer" or "ApiKey"; for ApiKey, Inject says where (header or
	// request_parameter).
	RequestAuth string
	Inject      *RequestOption
	// Token is the value sent: the ApiKey api_token of request_authentication, default
	// `{{ session_token }}` (variables config, parameters, session_token). Added by the loader.
	Token *template.Template
}

// Request option places.
const (
	InjectHeader    = "header"
	InjectParameter = "request_parameter"
	InjectBodyData  = "body_data"
	InjectBodyJSON  = "body_json"
	// InjectPath is a RequestPath page token: the token replaces the URL.
	InjectPath = "path"
)

// RequestOption says where a value goes in a request.
type RequestOption struct {
	Pos        Pos
	InjectInto string // one of the Inject* constants
	// FieldName for header, request_parameter, body_data and a top-level body_json field.
	FieldName *template.Template
	// FieldPath for a nested body_json property (nil otherwise).
	FieldPath []*template.Template
}

// Paginator is a DefaultPaginator.
type Paginator struct {
	Pos      Pos
	Strategy *Strategy
	// PageTokenOption is nil when absent (custom injection through next_page_token).
	PageTokenOption *RequestOption
	// PageSizeOption is nil when absent (the page size is not sent).
	PageSizeOption *RequestOption
	Parameters     map[string]any
}

// Pagination strategy types, as written in definitions.
const (
	OffsetIncrement  = "OffsetIncrement"
	PageIncrement    = "PageIncrement"
	CursorPagination = "CursorPagination"
)

// Strategy is a pagination strategy; Type says which fields apply.
type Strategy struct {
	Type string
	Pos  Pos
	// PageSize is nil when absent; it may be a template such as {{ config['page_size'] }}.
	PageSize *template.Template
	// StartFromPage is PageIncrement.start_from_page (default 0).
	StartFromPage int
	// InjectOnFirstRequest is false only when `inject_on_first_request: false` is written
	// (the seed: the first request carries offset 0 / the start page).
	InjectOnFirstRequest bool
	// CursorValue and StopCondition for CursorPagination (StopCondition nil when absent).
	CursorValue, StopCondition *template.Template
}

// Tree is a request option value as written (request_parameters, request_headers, bodies):
// a mapping keeps the order of its keys, and every string in it is a compiled template.
type Tree struct {
	Pos Pos
	// Exactly one of these is set, according to Kind.
	Kind     TreeKind
	Template *template.Template // KindTemplate: a string (keys of a map are templates too)
	Scalar   any                // KindScalar: bool, int, float64 or nil as written
	Entries  []TreeEntry        // KindMap
	Items    []*Tree            // KindList
}

// TreeKind says which field of a Tree is set.
type TreeKind int

// The kinds of Tree.
const (
	KindScalar TreeKind = iota
	KindTemplate
	KindMap
	KindList
)

// TreeEntry is one key of a mapping Tree.
type TreeEntry struct {
	Key   *template.Template
	Value *Tree
}
