package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"connector/pkg/airbyte"
	"connector/pkg/dynamic"
	"connector/pkg/manifest"
	"connector/pkg/protocol"
	"connector/pkg/session"
	"connector/pkg/template"
)

// catalogOptions are the options of `connector airbyte catalog`.
type catalogOptions struct {
	io  *ioStreams
	env *Env
	// def is the definition (the argument, or --manifest-path); config the --config file.
	def, config string
	streams     []string
	incremental bool
}

// newCmdAirbyteCatalog is `connector airbyte catalog`: the configured catalog `airbyte read`
// takes, written from what discover says, so that a read of the protocol entry point needs
// no hand-written catalog.
func newCmdAirbyteCatalog(io *ioStreams, env *Env, runF func(*catalogOptions) error) *cobra.Command {
	opts := &catalogOptions{io: io, env: env}
	var manifestPath string
	c := &cobra.Command{
		Use:   "catalog DEF [--config FILE] [--stream NAME]... [--incremental]",
		Short: "Write the configured catalog that airbyte read takes, from the streams discover finds",
		Long: `catalog writes on stdout a ConfiguredAirbyteCatalog for 'connector airbyte read --catalog':
every stream discover finds (or those named with --stream, in that order), each in full
refresh with destination_sync_mode overwrite; with --incremental, the streams that support it
are incremental instead (append, or append_dedup when they have a primary key), with their
default cursor field.

The definition is DEF or --manifest-path. With --config FILE (the protocol's config, JSON) the
streams of dynamic_streams are made from it and cursor fields rendered with it; without, the
static streams are listed and nothing is requested.`,
		Example: `  connector airbyte catalog definitions/incremental-datetime.yaml > catalog.json
  connector airbyte catalog def.yaml --config config.json --stream users --stream orders --incremental > catalog.json
  connector airbyte read --manifest-path def.yaml --config config.json --catalog catalog.json`,
		Args: func(c *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				return usagef("airbyte catalog takes one definition, got %d\nRun '%s --help' for usage.", len(args), c.CommandPath())
			case len(args) == 1 && manifestPath != "":
				return usagef("give the definition once: as the argument or as --manifest-path")
			case len(args) == 0 && manifestPath == "":
				return usagef("airbyte catalog needs a definition: DEF or --manifest-path DEF\nRun '%s --help' for usage.", c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = manifestPath
			if len(args) == 1 {
				opts.def = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return catalogRun(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&manifestPath, "manifest-path", "", "the definition `file` (YAML), as the other airbyte commands take it")
	c.Flags().StringVar(&opts.config, "config", "", "the config `file` (JSON) that makes the dynamic streams, decides the ConditionalStreams (else the spec's defaults do) and renders the cursor fields")
	c.Flags().StringArrayVar(&opts.streams, "stream", nil, "put only the stream `NAME` in the catalog (repeatable; default: every stream)")
	c.Flags().BoolVar(&opts.incremental, "incremental", false, "read incrementally the streams that support it")
	return c
}

// configuredEntry is one stream of a ConfiguredAirbyteCatalog, as the platform writes it.
type configuredEntry struct {
	Stream              airbyte.Stream `json:"stream"`
	SyncMode            string         `json:"sync_mode"`
	DestinationSyncMode string         `json:"destination_sync_mode"`
	CursorField         []string       `json:"cursor_field,omitempty"`
	PrimaryKey          [][]string     `json:"primary_key,omitempty"`
}

func catalogRun(ctx context.Context, opts *catalogOptions) error {
	src, diags := manifest.ReadFile(opts.def)
	if diags.HasErrors() {
		return sessionError(opts.io, &session.DefinitionError{Name: opts.def, Diags: diags})
	}
	def, err := session.Load(ctx, opts.def, src)
	if err != nil {
		return sessionError(opts.io, err)
	}
	streams, config := def.Streams, defaultsOnly(def)
	if opts.config == "" && len(def.Conditional) > 0 {
		// Without a config, the spec's defaults decide the ConditionalStreams.
		view, err := dynamic.Choose(def, template.Globals{Config: config})
		if err != nil {
			return sessionError(opts.io, &session.InvalidError{Err: err})
		}
		streams = view.Streams
	}
	if opts.config != "" {
		p, err := protocol.OpenConfig(def, opts.def, opts.config, protocol.Env{
			Transport: opts.env.Transport, Now: opts.env.clock(), Sleep: opts.env.Sleep,
			Redactor: opts.io.redactor, UserAgent: "connector/" + version,
		})
		var ie *protocol.InputError
		if errors.As(err, &ie) {
			return usagef("%v", err)
		}
		if err != nil {
			return sessionError(opts.io, err)
		}
		defer p.Close()
		if err := p.Resolve(ctx, nil); err != nil {
			return sessionError(opts.io, err)
		}
		streams, config = p.Def.Streams, p.Values.Map
	}
	if len(opts.streams) > 0 {
		picked, err := session.Select(&manifest.Definition{Streams: streams}, opts.streams)
		if err != nil {
			return sessionError(opts.io, err)
		}
		streams = picked
	}
	entries := make([]configuredEntry, 0, len(streams))
	for _, s := range streams {
		field, allow := protocol.CursorOf(s, config)
		st := airbyte.StreamOf(s, field, allow)
		e := configuredEntry{Stream: st, SyncMode: "full_refresh", DestinationSyncMode: "overwrite", PrimaryKey: st.SourceDefinedPrimaryKey}
		if opts.incremental && slices.Contains(st.SupportedSyncModes, "incremental") {
			e.SyncMode, e.DestinationSyncMode, e.CursorField = "incremental", "append", st.DefaultCursorField
			if len(st.SourceDefinedPrimaryKey) > 0 {
				e.DestinationSyncMode = "append_dedup"
			}
		}
		entries = append(entries, e)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"streams": entries}); err != nil {
		return fmt.Errorf("writing the catalog: %w", err)
	}
	_, err = opts.io.Out.Write(b.Bytes())
	return err
}
