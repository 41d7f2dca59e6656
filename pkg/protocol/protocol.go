// Package protocol is the Airbyte protocol entry point, run as the CDK's
// source-declarative-manifest runs it: spec, check, discover and read from a config file, an
// optional definition file (else the definition the config carries under
// __injected_declarative_manifest), a configured catalog and a state. Every outcome is a
// protocol message on the output, failures included; the error Run returns only says how
// the process should exit.
package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"connector/pkg/airbyte"
	"connector/pkg/diag"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/run"
	"connector/pkg/session"
	"connector/pkg/template"
	"connector/pkg/values"
	"connector/pkg/yamlguard"
)

// InjectedKey is the config key the Airbyte platform puts the definition under.
const InjectedKey = "__injected_declarative_manifest"

// ErrFailed is returned once a failure was written as protocol messages: the process exits 1.
var ErrFailed = errors.New("the protocol command failed")

// The limits of the input files: a config may carry a definition (16 MiB at most) besides
// the values; a catalog lists streams.
const (
	MaxConfigSize  = 32 << 20
	MaxCatalogSize = 16 << 20
)

// Request is one protocol command with the CDK's arguments.
type Request struct {
	Command string // spec, check, discover or read
	// Config, ManifestPath, Catalog and State are the files of --config, --manifest-path,
	// --catalog and --state ("" when not given).
	Config, ManifestPath, Catalog, State string
}

// Env is where the command reaches the world.
type Env struct {
	Transport http.RoundTripper
	Now       func() time.Time
	Sleep     func(ctx context.Context, d time.Duration) error
	Redactor  *redact.Redactor
	UserAgent string
	// StagingDir is where the files of streams with a file_uploader go, as the CDK's
	// get_files_directory picks it (see StagingDir); made when a stream read needs it.
	StagingDir string
}

// StagingDir is the CDK's files folder: AIRBYTE_STAGING_DIRECTORY (default /staging/files)
// when that folder exists, else /tmp/airbyte-file-transfer. getenv looks a variable up.
func StagingDir(getenv func(string) (string, bool), exists func(string) bool) string {
	dir, ok := getenv("AIRBYTE_STAGING_DIRECTORY")
	if !ok {
		dir = "/staging/files"
	}
	if exists(dir) {
		return dir
	}
	return "/tmp/airbyte-file-transfer"
}

// command is the state of one Run.
type command struct {
	req Request
	env Env
	w   *airbyte.Writer
	out io.Writer
	// configText is the config file as read; injected the definition it carried.
	configText []byte
}

// Run runs req and writes its messages to out.
func Run(ctx context.Context, req Request, env Env, out io.Writer) error {
	c := &command{req: req, env: env, out: out, w: &airbyte.Writer{W: out, Now: env.Now}}
	defName, src, config, err := c.inputs()
	if req.Command == "spec" && errors.Is(err, errNoDefinition) {
		// The CDK's source-declarative-manifest answers spec with the spec of any
		// definition: a config that carries one.
		return c.w.Spec(airbyte.GeneralSpec())
	}
	if err != nil {
		return c.fail("Error starting the sync. This could be due to an invalid configuration or catalog. Error: "+err.Error(), "")
	}
	def, err := session.Load(ctx, defName, src)
	if err != nil && !errors.Is(err, context.Canceled) && req.Command == "spec" {
		return c.fail("Invalid definition: "+Reason(err), "")
	}
	if err == nil && req.Command == "spec" {
		return c.w.Spec(airbyte.SpecOf(def))
	}
	var s *session.Session
	if err == nil {
		s, err = c.open(def, defName, config)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		why := Reason(err)
		if req.Command == "check" {
			return c.w.ConnectionStatus(false, env.Redactor.String("Config validation error: "+why))
		}
		return c.fail("Config validation error: "+why, why)
	}
	defer s.Close()
	if err := s.Resolve(ctx, nil); err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		if req.Command == "check" {
			return c.w.ConnectionStatus(false, env.Redactor.String(err.Error()))
		}
		return c.failAs(run.FailureType(err), err.Error(), "")
	}
	switch req.Command {
	case "check":
		return c.check(ctx, s)
	case "read":
		return c.read(ctx, s)
	}
	return c.w.Catalog(Catalog(s))
}

// failAs ends the command as the CDK's entry point ends on an error: a FATAL log, a TRACE
// ERROR, exit 1.
func (c *command) failAs(failureType, msg, internal string) error {
	msg = c.env.Redactor.String(msg)
	if err := c.w.Log("FATAL", msg); err != nil {
		return err
	}
	if err := c.w.Error(msg, c.env.Redactor.String(internal), failureType); err != nil {
		return err
	}
	return ErrFailed
}

func (c *command) fail(msg, internal string) error { return c.failAs("config_error", msg, internal) }

// check is check's CONNECTION_STATUS, after the LOG messages of CheckConnection.
func (c *command) check(ctx context.Context, s *session.Session) error {
	st, err := CheckConnection(ctx, s)
	if err != nil {
		return err
	}
	for _, l := range st.Logs {
		if err := c.w.Log(l.Level, l.Message); err != nil {
			return err
		}
	}
	if st.Fatal != "" {
		if err := c.w.Error("Something went wrong in the connector. See the logs for more details.", st.Fatal, run.SystemError); err != nil {
			return err
		}
		return ErrFailed
	}
	return c.w.ConnectionStatus(st.Succeeded, st.Message)
}

// Status is what a check says: whether it succeeded, the reason of a failure as the CDK
// words it (Python's repr() of the checker's message), and the LOG messages the CDK writes
// before it. Every text is redacted.
type Status struct {
	Succeeded bool
	Message   string
	Logs      []Log
	// Fatal is set when the check ends as the CDK's ends on an uncaught exception (a stream
	// the check names is not among the streams): no status, a FATAL log and a system_error.
	Fatal string
}

// Log is one LOG message of a check.
type Log struct{ Level, Message string }

// CheckConnection checks the session as the CDK's CheckStream does: the first page of each
// stream the check component names, stopping at the first that fails. The error is only an
// interrupt.
func CheckConnection(ctx context.Context, s *session.Session) (Status, error) {
	red := s.Redactor()
	failed := func(reason string) Status {
		reason = red.String(reason)
		return Status{Message: template.PyRepr(reason), Logs: []Log{{"WARN", reason}, {"ERROR", "Check failed"}}}
	}
	plan := s.CheckPlan()
	if plan.NoStreams {
		return failed("No streams to connect to from source"), nil
	}
	for _, t := range plan.Targets {
		if t.Stream == nil {
			// The CDK's CheckStream raises a ValueError, which its entry point reports as
			// an uncaught exception.
			names := make([]any, len(s.Def.Streams))
			for i, st := range s.Def.Streams {
				names[i] = st.Name
			}
			msg := red.String(fmt.Sprintf("%s is not part of the catalog. Expected one of %s.", t.Name, template.PyRepr(names)))
			return Status{Fatal: msg, Logs: []Log{{"FATAL", msg}}}, nil
		}
		res := s.CheckStream(ctx, t.Stream, false)
		if errors.Is(res.Err, context.Canceled) {
			return Status{}, res.Err
		}
		if res.Err != nil {
			return failed(fmt.Sprintf("Stream %s is not available: %s", t.Name, res.Reason)), nil
		}
	}
	return Status{Succeeded: true, Logs: []Log{{"INFO", "Check succeeded"}}}, nil
}

// Catalog is the catalog discover gives for the session's streams.
func Catalog(s *session.Session) []airbyte.Stream {
	streams := make([]airbyte.Stream, 0, len(s.Def.Streams))
	for _, st := range s.Def.Streams {
		field, allow := CursorOf(st, s.Values.Map)
		streams = append(streams, airbyte.StreamOf(st, field, allow))
	}
	return streams
}

// read reads the catalog's streams as `connector read --format airbyte` does: every message
// on the output, nothing on stderr.
func (c *command) read(ctx context.Context, s *session.Session) error {
	starting := "Error starting the sync. This could be due to an invalid configuration or catalog. Error: "
	configured, err := catalogStreams(c.req.Catalog)
	if err != nil {
		return c.fail(starting+err.Error(), "")
	}
	states, err := session.OpenState(session.StateFiles{In: c.req.State, ReadOnly: true})
	if err != nil {
		return c.fail(starting+err.Error(), "")
	}
	spec := session.ReadSpec{Out: c.out, Format: "airbyte", State: states, Prefetch: 1, Protocol: true}
	if given, err := record.Decode(c.configText); err == nil {
		spec.ConfigAsGiven = func(config map[string]any) any { return asGiven(given, config) }
	}
	s.Streams = nil
	for _, cs := range configured {
		st := s.Def.Stream(cs.Stream.Name)
		if st == nil {
			spec.Missing = append(spec.Missing, cs.Stream.Name)
			continue
		}
		st, err := withCatalogCursor(st, cs)
		if err != nil {
			return c.fail(starting+err.Error(), "")
		}
		s.Streams = append(s.Streams, st)
		if st.Files != nil && spec.FilesDir == "" && c.env.StagingDir != "" {
			if err := os.MkdirAll(c.env.StagingDir, 0o755); err != nil {
				return c.fail(starting+err.Error(), "")
			}
			spec.FilesDir = c.env.StagingDir
		}
	}
	res, err := s.Read(ctx, spec)
	var ie *session.InvalidError
	switch {
	case errors.As(err, &ie):
		return c.fail(err.Error(), "")
	case err != nil:
		return err
	case res.Stopped != nil:
		return res.Stopped
	case res.Failed > 0 || res.StateErr != nil:
		return ErrFailed
	}
	return ctx.Err()
}

// ConfiguredStream is a configured catalog's entry: the stream's name and the cursor field
// the user picked (used where the definition allows a catalog-defined cursor).
type ConfiguredStream struct {
	Stream struct {
		Name string `json:"name"`
	} `json:"stream"`
	CursorField []string `json:"cursor_field"`
}

// asGiven is config laid out like given, the config file as decoded: a key given keeps its
// place (the CDK updates its config dict in place), a new key goes last, and the
// definition the config carried (which config lacks) is kept as given.
func asGiven(given any, config any) any {
	g, ok := given.(*record.Object)
	m, isMap := config.(map[string]any)
	if !ok || !isMap {
		return config
	}
	out := &record.Object{}
	for _, k := range g.Keys() {
		gv, _ := g.Get(k)
		if v, has := m[k]; has {
			out.Set(k, asGiven(gv, v))
		} else if k == InjectedKey {
			out.Set(k, gv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !g.Has(k) {
			out.Set(k, m[k])
		}
	}
	return out
}

// catalogStreams are a configured catalog's streams, in its order.
func catalogStreams(path string) ([]ConfiguredStream, error) {
	b, err := ReadInput(path, "catalog", MaxCatalogSize)
	if err != nil {
		return nil, err
	}
	var catalog struct {
		Streams []ConfiguredStream `json:"streams"`
	}
	if err := json.Unmarshal(b, &catalog); err != nil {
		return nil, fmt.Errorf("could not read json file %s: %v", path, err)
	}
	return catalog.Streams, nil
}

// withCatalogCursor is s reading cs's cursor field when its incremental_sync allows a
// catalog-defined cursor field and the catalog names one (a cursor_field of [""] is none,
// as the platform sometimes writes it); s itself is left as it is.
func withCatalogCursor(s *manifest.Stream, cs ConfiguredStream) (*manifest.Stream, error) {
	inc := s.Incremental
	if inc == nil || !inc.AllowCatalogCursor || len(cs.CursorField) == 0 || cs.CursorField[0] == "" {
		return s, nil
	}
	if len(cs.CursorField) > 1 {
		return nil, fmt.Errorf("the `%s` stream does not support nested cursor_field. Please specify only a single cursor_field for the stream in the configured catalog", s.Name)
	}
	field, err := template.Compile(cs.CursorField[0], nil)
	if err != nil || !field.IsLiteral() {
		return nil, fmt.Errorf("the `%s` stream's cursor_field %q in the configured catalog is not a plain field name", s.Name, cs.CursorField[0])
	}
	ci := *inc
	ci.CursorField = field
	cs2 := *s
	cs2.Incremental = &ci
	return &cs2, nil
}

// CursorOf is a stream's cursor field rendered with the config ("" without
// incremental_sync) and whether the catalog may choose another.
func CursorOf(s *manifest.Stream, config map[string]any) (string, bool) {
	inc := s.Incremental
	if inc == nil && s.Delegating != nil && s.Delegating.Incremental != nil {
		inc = s.Delegating.Incremental.Incremental
	}
	if inc == nil || inc.CursorField == nil {
		return "", false
	}
	field, err := inc.CursorField.Render(template.Globals{Config: config}.Vars(inc.Parameters))
	if err != nil {
		return "", false
	}
	return field, inc.AllowCatalogCursor
}

// errNoDefinition is a protocol command given no definition: neither --manifest-path nor
// the config's __injected_declarative_manifest.
var errNoDefinition = fmt.Errorf("invalid config: `%s` should be provided at the root of the config or using the --manifest-path argument", InjectedKey)

// ReadInput reads the input file at path (what names it: config, catalog) within limit
// bytes.
func ReadInput(path, what string, limit int64) ([]byte, error) {
	b, err := yamlguard.ReadFile(path, limit)
	var tl *yamlguard.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Errorf("the %s %s is %v (a limit of connector)", what, path, err)
	case err != nil:
		return nil, fmt.Errorf("cannot read the %s: %s", what, pathError(err))
	}
	return b, nil
}

// pathError words a file error as "PATH: reason".
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// inputs reads the definition and the config: the definition of --manifest-path, or the
// one the config carries under __injected_declarative_manifest (named by that key in
// messages), and the config without that key.
func (c *command) inputs() (defName string, src []byte, config []byte, err error) {
	var fields map[string]json.RawMessage
	if c.req.Config != "" {
		b, err := ReadInput(c.req.Config, "config", MaxConfigSize)
		if err != nil {
			return "", nil, nil, err
		}
		c.configText = b
		if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
			return "", nil, nil, fmt.Errorf("could not read json file %s: it is not a JSON object", c.req.Config)
		}
	}
	injected, has := fields[InjectedKey]
	delete(fields, InjectedKey)
	switch {
	case c.req.ManifestPath != "":
		if _, err := os.Stat(c.req.ManifestPath); err != nil {
			return "", nil, nil, fmt.Errorf("failed to load manifest file from %s: %s", c.req.ManifestPath, pathError(err))
		}
		var diags diag.List
		if src, diags = manifest.ReadFile(c.req.ManifestPath); diags.HasErrors() {
			return "", nil, nil, errors.New(session.FirstError(diags))
		}
		defName = c.req.ManifestPath
	case !has:
		keys := slices.Sorted(maps.Keys(fields))
		return "", nil, nil, fmt.Errorf("%w; config only has keys: [%s]", errNoDefinition, strings.Join(keys, ", "))
	default:
		// Kept as written: JSON is YAML, and the definition's key order is the spec's.
		if t := bytes.TrimSpace(injected); len(t) == 0 || t[0] != '{' {
			return "", nil, nil, fmt.Errorf("invalid config: `%s` should be a dictionary", InjectedKey)
		}
		defName, src = InjectedKey, injected
	}
	if fields != nil {
		if config, err = json.Marshal(fields); err != nil {
			return "", nil, nil, err
		}
	}
	return defName, src, config, nil
}

// Open opens a session as the protocol commands do, from a definition already loaded and a
// config's JSON without the injected definition (nil: no config); configName names the
// config in messages.
func Open(def *manifest.Definition, defName, configName string, config []byte, env Env) (*session.Session, error) {
	c := &command{req: Request{Config: configName}, env: env}
	return c.open(def, defName, config)
}

// open opens the session of a protocol command: the config as the testing values, as
// given (the CDK validates it without filling the spec's defaults), token requests
// form-encoded as the CDK sends them, rotated tokens kept in memory (the platform stores
// the config of the CONTROL message). discover, like the CDK's, asks no initial access
// token of a refresh_token_updater: it sends no data request.
func (c *command) open(def *manifest.Definition, defName string, config []byte) (*session.Session, error) {
	vals := values.None()
	if config != nil {
		var err error
		if vals, err = values.Parse(c.req.Config, config); err != nil {
			return nil, err
		}
	}
	vals.Noun = "config value"
	in := session.Inputs{DefName: defName, Def: def, Values: vals, FormTokenRequests: true,
		NoTokenChecks: c.req.Command == "discover"}
	return session.Open(in, session.Env{
		Transport: c.env.Transport, Now: c.env.Now, Sleep: c.env.Sleep, Redactor: c.env.Redactor,
		Timeout: 60 * time.Second, MaxBody: httpx.DefaultMaxBody, UserAgent: c.env.UserAgent,
	})
}

// Reason is what a protocol message says of a definition or config that cannot run: the
// first error of its diagnostics, else the error itself.
func Reason(err error) string {
	var de *session.DefinitionError
	var ve *session.ValuesError
	var dl diag.List
	switch {
	case errors.As(err, &de):
		return session.FirstError(de.Diags)
	case errors.As(err, &ve):
		return session.FirstError(ve.Diags)
	case errors.As(err, &dl):
		return session.FirstError(dl)
	}
	return err.Error()
}

// OpenConfig opens a session of def (read from defPath) with the config file at path, as the
// protocol commands open theirs. A config that cannot be read is an *InputError.
func OpenConfig(def *manifest.Definition, defPath, path string, env Env) (*session.Session, error) {
	c := &command{req: Request{Config: path, ManifestPath: defPath}, env: env}
	_, _, config, err := c.inputs()
	if err != nil {
		return nil, &InputError{err}
	}
	return c.open(def, defPath, config)
}

// InputError is a protocol input file that cannot be read or is not what it should be.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }
