package cmd

// Shell completion. Cobra's `completion bash|zsh|fish|powershell` writes the script; the
// script asks the hidden `__complete` command, which calls the functions registered here:
// definition files for DEF, the definition's stream names for --stream, each command's
// own values for --format, and files of the right kind for the flags that take one.
// Completion reads files and never reaches the network: --stream offers the static streams
// and the dynamic streams of a ConfigComponentsResolver (made from the testing values given
// on the line or through CONNECTOR_TESTING_VALUES or the settings file), not those an
// HttpComponentsResolver would request.

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"connector/pkg/dynamic"
	"connector/pkg/manifest"
	"connector/pkg/template"
	"connector/pkg/transform"
)

// Extensions offered for each kind of file.
var (
	definitionFiles = []string{"yaml", "yml"}
	valuesFiles     = []string{"yaml", "yml", "json"}
	jsonFiles       = []string{"json"}
	settingsFiles   = []string{"yaml", "yml", "json", "toml"}
)

// fileFlags are the flags that name a file, with the extensions offered.
var fileFlags = map[string][]string{
	"testing-values":     valuesFiles,
	"testing-values-out": valuesFiles,
	"output":             valuesFiles,
	"state":              jsonFiles,
	"state-out":          jsonFiles,
	"config":             jsonFiles,
	"catalog":            jsonFiles,
	"manifest-path":      definitionFiles,
	"settings":           settingsFiles,
}

// registerCompletions registers the completion of every command of the tree under root,
// and gives cobra's completion command examples.
func registerCompletions(root *cobra.Command, env *Env) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = `  source <(connector completion bash)                  # this shell
  connector completion bash > /etc/bash_completion.d/connector
  connector completion zsh > "${fpath[1]}/_connector"
  connector completion fish > ~/.config/fish/completions/connector.fish`
			for _, sh := range c.Commands() {
				sh.Example = "  connector completion " + sh.Name() + " > connector." + sh.Name()
			}
		}
	}
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) { registerFlag(root, f, env) })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.ValidArgsFunction == nil && !c.HasSubCommands() {
			c.ValidArgsFunction = completeArgs(c)
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { registerFlag(c, f, env) })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, c := range root.Commands() {
		walk(c)
	}
}

// completeArgs completes the positional arguments of c: definition files where its usage
// names DEF (every argument for DEF..., the first otherwise), nothing else.
func completeArgs(c *cobra.Command) cobra.CompletionFunc {
	use := strings.Fields(c.Use)
	many := slices.Contains(use, "DEF...")
	one := slices.Contains(use, "DEF")
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if many || one && len(args) == 0 {
			return definitionFiles, cobra.ShellCompDirectiveFilterFileExt
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// registerFlag registers the completion of flag f of c: its allowed words, stream names,
// files of its kind, or nothing (a number, a duration: no file names).
func registerFlag(c *cobra.Command, f *pflag.Flag, env *Env) {
	var fn cobra.CompletionFunc
	switch v := f.Value.(type) {
	case *enumValue:
		fn = completeWords(v.allowed)
	default:
		switch exts, isFile := fileFlags[f.Name]; {
		case f.Name == "stream":
			fn = completeStreams(env)
		case isFile:
			fn = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return exts, cobra.ShellCompDirectiveFilterFileExt
			}
		case f.Value.Type() == "bool":
			return // takes no value
		default:
			fn = cobra.NoFileCompletions
		}
	}
	// A flag registered twice (a persistent flag seen again) keeps its first function.
	_ = c.RegisterFlagCompletionFunc(f.Name, fn)
}

// completeWords offers the allowed words that start with what was typed.
func completeWords(words []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(words, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeStreams offers the stream names of the definition given as the first argument,
// in definition order, less those already named with --stream.
func completeStreams(env *Env) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// The testing values may come from CONNECTOR_TESTING_VALUES or the settings file.
		_ = loadSettings(c, env)
		given, _ := c.Flags().GetStringArray("stream")
		var names []string
		for _, n := range streamNames(c, args[0]) {
			if !slices.Contains(given, n) {
				names = append(names, n)
			}
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// streamNames are the names of the static streams of the definition at path, those of its
// ConditionalStreams (whatever their conditions), and those of the dynamic streams its
// ConfigComponentsResolvers and ParametrizedComponentsResolvers make from the testing
// values of c's flags; none when the definition does not load.
func streamNames(c *cobra.Command, path string) []string {
	def, diags := manifest.Load(path)
	if diags.HasErrors() {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	add := func(s *manifest.Stream) {
		if !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	for _, s := range def.Streams {
		add(s)
	}
	for _, cs := range def.Conditional {
		for _, s := range cs.Streams {
			add(s)
		}
	}
	for _, s := range configStreams(c, def) {
		add(s)
	}
	return names
}

// configStreams makes the streams of the definition's ConfigComponentsResolvers and
// ParametrizedComponentsResolvers, which need no request, from the testing values of c's
// flags (nil when there are none, or they do not load).
func configStreams(c *cobra.Command, def *manifest.Definition) []*manifest.Stream {
	view := *def
	view.Dynamic, view.Streams, view.Conditional = nil, nil, nil
	for _, d := range def.Dynamic {
		if d.Type != manifest.HTTPComponentsResolver {
			view.Dynamic = append(view.Dynamic, d)
		}
	}
	tv := c.Flags().Lookup("testing-values")
	if len(view.Dynamic) == 0 || tv == nil || tv.Value.String() == "" || tv.Value.String() == "-" {
		return nil
	}
	var assign []assignment
	if f := c.Flags().Lookup("set"); f != nil {
		if set, ok := f.Value.(*assignValue); ok {
			assign = *set.list
		}
	}
	quiet := newIOStreams(strings.NewReader(""), io.Discard, io.Discard)
	vals, _, err := loadTestingValues(quiet, def.File, def.ConnectionSpec, tv.Value.String(), assign, true)
	if err != nil || transform.MigrateConfig(def.ConfigNormalization, template.Globals{Config: vals.Map}) != nil {
		return nil
	}
	streams, err := dynamic.Resolve(context.Background(), &view, template.Globals{Config: vals.Map}, func(context.Context, *manifest.Stream, func(rec, sl any)) error {
		return errors.New("no request from completion") // unreachable: config resolvers only
	})
	if err != nil {
		return nil
	}
	return streams
}

// withPrefix keeps the words that start with prefix.
func withPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
