package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/airbyte"
	"connector/pkg/diag"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/output"
	"connector/pkg/record"
	"connector/pkg/run"
	"connector/pkg/session"
	"connector/pkg/template"
	"connector/pkg/values"
	"connector/pkg/yamlguard"
)

// injectedKey is the config key the Airbyte platform puts the definition under.
const injectedKey = "__injected_declarative_manifest"

type airbyteOptions struct {
	io      *ioStreams
	env     *Env
	command string // spec, check, discover or read
	// config, manifestPath, catalog and state are the CDK's --config, --manifest-path,
	// --catalog and --state.
	config, manifestPath, catalog, state string
	// injected is the definition as the config carried it (nil with --manifest-path).
	injected json.RawMessage
	// configText is the config file as read.
	configText []byte
}

// The limits of the protocol's input files: a config may carry a definition (16 MiB at
// most) besides the values; a catalog lists streams.
const (
	maxConfigSize  = 32 << 20
	maxCatalogSize = 16 << 20
)

// readInput reads the protocol input file at path (what names it: config, catalog) within
// limit bytes.
func readInput(path, what string, limit int64) ([]byte, error) {
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

// newCmdAirbyte is `connector airbyte`: the Airbyte protocol entry point, taking the
// arguments of the CDK's source-declarative-manifest so the binary can replace that image.
func newCmdAirbyte(io *ioStreams, env *Env, runF func(*airbyteOptions) error) *cobra.Command {
	c := &cobra.Command{
		Use:   "airbyte spec|check|discover|read [--manifest-path DEF] --config FILE",
		Short: "Speak the Airbyte protocol, as the CDK's source-declarative-manifest does",
		Long: `airbyte takes the arguments of the Airbyte CDK's source-declarative-manifest and writes
only Airbyte protocol messages on stdout, one JSON object per line. The definition is
--manifest-path, or else the config's __injected_declarative_manifest key, as the Airbyte
platform passes it.

  spec       the definition's spec as a SPEC message (--config is optional)
  check      one CONNECTION_STATUS: SUCCEEDED, or FAILED with the (redacted) reason, after the
             definition's check (CheckStream, CheckDynamicStream)
  discover   a CATALOG with every stream, dynamic ones resolved
  read       the catalog's streams (--catalog, a ConfiguredAirbyteCatalog), in its order, as
             'connector read --format airbyte' writes them: RECORD, STATE at checkpoints, TRACE
             stream statuses and errors, CONTROL. A catalog stream the definition lacks gets an
             INCOMPLETE status. --state is Airbyte's list of STATE messages; it is only read
             (the platform keeps the state from the STATE messages). Exit 1 when a stream failed.

An invalid config is reported as the CDK reports it: check answers FAILED ("Config validation
error: ...") and exits 0; discover and read write a TRACE ERROR (failure_type config_error) and
exit 1.`,
		Example: `  connector airbyte spec --manifest-path def.yaml
  connector airbyte check --manifest-path def.yaml --config config.json
  connector airbyte discover --config config-with-injected-manifest.json
  connector airbyte read --manifest-path def.yaml --config config.json --catalog catalog.json --state state.json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown airbyte command %q: use spec, check, discover or read\nRun '%s --help' for usage.", args[0], c.CommandPath())
			}
			return usagef("airbyte needs a command: spec, check, discover or read\nRun '%s --help' for usage.", c.CommandPath())
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	for _, name := range []string{"spec", "check", "discover", "read"} {
		opts := &airbyteOptions{io: io, env: env, command: name}
		use := name + " [--manifest-path DEF] --config FILE"
		if name == "read" {
			use += " --catalog FILE [--state FILE]"
		}
		sub := &cobra.Command{
			Use:     use,
			Short:   "The Airbyte protocol's " + name,
			Example: airbyteExamples[name],
			Args:    cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if opts.command != "spec" && opts.config == "" {
					return usagef("airbyte %s needs --config FILE", opts.command)
				}
				if opts.command == "read" && opts.catalog == "" {
					return usagef("airbyte read needs --catalog FILE")
				}
				if runF != nil {
					return runF(opts)
				}
				return airbyteRun(c.Context(), opts)
			},
		}
		sub.Flags().StringVar(&opts.config, "config", "", "the config `file` (JSON): the connector's configuration, and the definition under __injected_declarative_manifest when --manifest-path is absent")
		sub.Flags().StringVar(&opts.manifestPath, "manifest-path", "", "the definition `file` (YAML); without it the config's __injected_declarative_manifest is the definition")
		if name == "read" {
			sub.Flags().StringVar(&opts.catalog, "catalog", "", "the configured catalog `file` (JSON): the streams to read, in order")
			sub.Flags().StringVar(&opts.state, "state", "", "the state `file` (JSON): Airbyte's list of STATE messages; read, never written")
		}
		c.AddCommand(sub)
	}
	c.AddCommand(newCmdAirbyteCatalog(io, env, nil))
	return c
}

// airbyteExamples are the examples of each protocol command's help.
var airbyteExamples = map[string]string{
	"spec": `  connector airbyte spec --manifest-path def.yaml
  connector airbyte spec          # without a definition: the spec of a config that carries one`,
	"check": `  connector airbyte check --manifest-path def.yaml --config config.json
  connector airbyte check --config config-with-injected-manifest.json | jq .connectionStatus`,
	"discover": `  connector airbyte discover --manifest-path def.yaml --config config.json
  connector airbyte discover --manifest-path def.yaml --config config.json | jq -r '.catalog.streams[].name'`,
	"read": `  connector airbyte catalog def.yaml --incremental > catalog.json
  connector airbyte read --manifest-path def.yaml --config config.json --catalog catalog.json
  connector airbyte read --manifest-path def.yaml --config config.json --catalog catalog.json --state state.json | jq -c 'select(.type == "STATE")'`,
}

// airbyteRun runs one protocol command. Every failure is reported on stdout as a protocol
// message; the returned error only carries the exit code.
func airbyteRun(ctx context.Context, opts *airbyteOptions) error {
	w := &airbyte.Writer{W: opts.io.Out, Now: opts.env.clock()}
	// failAs ends the command as the CDK's entry point ends on an error: a FATAL log, a TRACE
	// ERROR, exit 1.
	failAs := func(failureType, msg, internal string) error {
		msg = opts.io.redactor.String(msg)
		if err := w.Log("FATAL", msg); err != nil {
			return err
		}
		if err := w.Error(msg, opts.io.redactor.String(internal), failureType); err != nil {
			return err
		}
		return &silentError{code: exitFailure}
	}
	fail := func(msg, internal string) error { return failAs("config_error", msg, internal) }
	defName, src, config, err := opts.inputs()
	if opts.command == "spec" && errors.Is(err, errNoDefinition) {
		// The CDK's source-declarative-manifest answers spec with the spec of any
		// definition: a config that carries one.
		return w.Spec(airbyte.GeneralSpec())
	}
	if err != nil {
		return fail("Error starting the sync. This could be due to an invalid configuration or catalog. Error: "+err.Error(), "")
	}
	def, err := session.Load(ctx, defName, src)
	if err != nil && !errors.Is(err, context.Canceled) && opts.command == "spec" {
		return fail("Invalid definition: "+reason(err), "")
	}
	if err == nil && opts.command == "spec" {
		return w.Spec(airbyte.SpecOf(def))
	}
	var p *prepared
	if err == nil {
		p, err = opts.open(def, defName, config)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		why := reason(err)
		if opts.command == "check" {
			return w.ConnectionStatus(false, opts.io.redactor.String("Config validation error: "+why))
		}
		return fail("Config validation error: "+why, why)
	}
	if err := p.Resolve(ctx, nil); err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		if opts.command == "check" {
			return w.ConnectionStatus(false, opts.io.redactor.String(err.Error()))
		}
		return failAs(run.FailureType(err), err.Error(), "")
	}
	switch opts.command {
	case "check":
		return airbyteCheck(ctx, p, w, opts.io)
	case "read":
		return airbyteRead(ctx, opts, p, fail)
	}
	streams := make([]airbyte.Stream, 0, len(p.Def.Streams))
	for _, s := range p.Def.Streams {
		field, allow := cursorOf(s, p.Values.Map)
		streams = append(streams, airbyte.StreamOf(s, field, allow))
	}
	return w.Catalog(streams)
}

// airbyteCheck is check's CONNECTION_STATUS: the first page of each stream the check
// component names, stopping at the first that fails, as the CDK's CheckStream does. As in
// the CDK, the reason of a FAILED status is Python's repr() of the checker's message, after
// a WARN and an ERROR log.
func airbyteCheck(ctx context.Context, p *prepared, w *airbyte.Writer, s *ioStreams) error {
	failed := func(reason string) error {
		reason = s.redactor.String(reason)
		if err := w.Log("WARN", reason); err != nil {
			return err
		}
		if err := w.Log("ERROR", "Check failed"); err != nil {
			return err
		}
		return w.ConnectionStatus(false, template.PyRepr(reason))
	}
	succeeded := func() error {
		if err := w.Log("INFO", "Check succeeded"); err != nil {
			return err
		}
		return w.ConnectionStatus(true, "")
	}
	streams := checkTargets(p.Def)
	if cd := p.Def.CheckDynamic; cd != nil {
		if len(streams) == 0 {
			return failed("No streams to connect to from source")
		}
		if !cd.UseCheckAvailability {
			return succeeded()
		}
		streams = streams[:min(cd.StreamCount, len(streams))]
	}
	ro := p.Options()
	ro.MaxSlices, ro.MaxPages = 1, 1
	for _, st := range streams {
		res := run.Stream(ctx, ro, st)
		if errors.Is(res.Err, context.Canceled) {
			return res.Err
		}
		if res.Err != nil {
			return failed(fmt.Sprintf("Stream %s is not available: %s", st.Name, failureReason(res.Err, st)))
		}
	}
	return succeeded()
}

// airbyteRead reads the catalog's streams through readStreams, the code of
// `read --format airbyte`, with stderr silenced: stdout carries every message.
func airbyteRead(ctx context.Context, opts *airbyteOptions, p *prepared, fail func(msg, internal string) error) error {
	starting := "Error starting the sync. This could be due to an invalid configuration or catalog. Error: "
	configured, err := catalogStreams(opts.catalog)
	if err != nil {
		return fail(starting+err.Error(), "")
	}
	states, err := session.OpenState(session.StateFiles{In: opts.state, ReadOnly: true})
	if err != nil {
		return fail(starting+err.Error(), "")
	}
	quiet := *opts.io
	quiet.Err, quiet.errTTY = io.Discard, false
	ro := &readOptions{io: &quiet, env: opts.env, format: output.FormatAirbyte, protocol: true}
	if given, err := record.Decode(opts.configText); err == nil {
		ro.configAsGiven = func(config map[string]any) any { return asGiven(given, config) }
	}
	ro.flags.prefetch = 1
	p.Streams = nil
	for _, cs := range configured {
		s := p.Def.Stream(cs.Stream.Name)
		if s == nil {
			ro.missing = append(ro.missing, cs.Stream.Name)
			continue
		}
		s, err := withCatalogCursor(s, cs)
		if err != nil {
			return fail(starting+err.Error(), "")
		}
		p.Streams = append(p.Streams, s)
	}
	err = readStreams(ctx, ro, p, states)
	var ie *invalidError
	if errors.As(err, &ie) {
		return fail(err.Error(), "")
	}
	return err
}

// configuredStream is a configured catalog's entry: the stream's name and the cursor
// field the user picked (used where the definition allows a catalog-defined cursor).
type configuredStream struct {
	Stream struct {
		Name string `json:"name"`
	} `json:"stream"`
	CursorField []string `json:"cursor_field"`
}

// asGiven is config laid out like given, the config file as decoded: a key given keeps its
// place (the CDK updates its config dict in place), a new key goes last, and the
// definition the config carried (__injected_declarative_manifest, which config lacks) is
// kept as given.
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
		} else if k == injectedKey {
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
func catalogStreams(path string) ([]configuredStream, error) {
	b, err := readInput(path, "catalog", maxCatalogSize)
	if err != nil {
		return nil, err
	}
	var catalog struct {
		Streams []configuredStream `json:"streams"`
	}
	if err := json.Unmarshal(b, &catalog); err != nil {
		return nil, fmt.Errorf("could not read json file %s: %v", path, err)
	}
	return catalog.Streams, nil
}

// withCatalogCursor is s reading cs's cursor field when its incremental_sync allows a
// catalog-defined cursor field and the catalog names one (a cursor_field of [""] is none,
// as the platform sometimes writes it); s itself is left as it is.
func withCatalogCursor(s *manifest.Stream, cs configuredStream) (*manifest.Stream, error) {
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

// cursorOf is a stream's cursor field rendered with the config ("" without
// incremental_sync) and whether the catalog may choose another.
func cursorOf(s *manifest.Stream, config map[string]any) (string, bool) {
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
var errNoDefinition = fmt.Errorf("invalid config: `%s` should be provided at the root of the config or using the --manifest-path argument", injectedKey)

// inputs reads the definition and the config: the definition of --manifest-path, or the
// one the config carries under __injected_declarative_manifest (named by that key in
// messages), and the config without that key.
func (o *airbyteOptions) inputs() (defName string, src []byte, config []byte, err error) {
	var fields map[string]json.RawMessage
	if o.config != "" {
		b, err := readInput(o.config, "config", maxConfigSize)
		if err != nil {
			return "", nil, nil, err
		}
		o.configText = b
		if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
			return "", nil, nil, fmt.Errorf("could not read json file %s: it is not a JSON object", o.config)
		}
	}
	injected, has := fields[injectedKey]
	delete(fields, injectedKey)
	switch {
	case o.manifestPath != "":
		if _, err := os.Stat(o.manifestPath); err != nil {
			return "", nil, nil, fmt.Errorf("failed to load manifest file from %s: %s", o.manifestPath, pathError(err))
		}
		var diags diag.List
		if src, diags = manifest.ReadFile(o.manifestPath); diags.HasErrors() {
			return "", nil, nil, errors.New(session.FirstError(diags))
		}
		defName = o.manifestPath
	case !has:
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "", nil, nil, fmt.Errorf("%w; config only has keys: [%s]", errNoDefinition, strings.Join(keys, ", "))
	default:
		// Kept as written: JSON is YAML, and the definition's key order is the spec's.
		if t := bytes.TrimSpace(injected); len(t) == 0 || t[0] != '{' {
			return "", nil, nil, fmt.Errorf("invalid config: `%s` should be a dictionary", injectedKey)
		}
		o.injected = injected
		defName, src = injectedKey, injected
	}
	if fields != nil {
		if config, err = json.Marshal(fields); err != nil {
			return "", nil, nil, err
		}
	}
	return defName, src, config, nil
}

// open opens the session of a protocol command: the config as the testing values, as
// given (the CDK validates it without filling the spec's defaults), rotated tokens kept in
// memory (the platform stores the config of the CONTROL message).
func (o *airbyteOptions) open(def *manifest.Definition, defName string, config []byte) (*prepared, error) {
	vals := values.None()
	if config != nil {
		var err error
		if vals, err = values.Parse(o.config, config); err != nil {
			return nil, err
		}
	}
	vals.Noun = "config value"
	sess, err := session.Open(session.Inputs{DefName: defName, Def: def, Values: vals, FormTokenRequests: true}, session.Env{
		Transport: o.env.Transport, Now: o.env.clock(), Sleep: o.env.Sleep, Redactor: o.io.redactor,
		Timeout: 60 * time.Second, MaxBody: httpx.DefaultMaxBody, UserAgent: "connector/" + version,
	})
	if err != nil {
		return nil, err
	}
	return &prepared{Session: sess}, nil
}

// reason is what a protocol message says of a definition or config that cannot run: the
// first error of its diagnostics, else the error itself.
func reason(err error) string {
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
