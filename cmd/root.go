// Package cmd is the command line of connector: the Cobra tree, flag and settings parsing, and
// the one place that prints errors and picks exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"connector/pkg/diag"
	"connector/pkg/typo"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInvalid     = 3
	exitInterrupted = 130
)

// version is set at build time with -ldflags "-X connector/cmd.version=…".
var version = "dev"

// usageError is a mistake on the command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// invalidError is an invalid definition or invalid testing values (exit 3).
type invalidError struct{ err error }

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// silentError carries an exit code for a failure that was already reported.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Execute runs the command line with the given arguments in env and returns the exit code.
// main passes os.Args[1:], the process's environment and a context that Ctrl-C and SIGTERM
// cancel: a run whose context ends exits 130.
func Execute(ctx context.Context, args []string, env Env) int {
	env = env.withDefaults()
	io := newIOStreams(env.Stdin, env.Stdout, env.Stderr)
	io.noColorEnv = env.noColor()
	// A hidden switch for performance work: CONNECTOR_CPUPROFILE=cpu.out writes a CPU
	// profile of the run (go tool pprof connector cpu.out).
	if path, _ := env.lookup("CONNECTOR_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}

	root := newRootCmd(io, &env)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	err := root.ExecuteContext(ctx)
	defer io.Err.(*redactingWriter).Flush()
	code := exitCode(err)
	if err != nil && code != exitOK && code != exitInterrupted {
		var se *silentError
		if !errors.As(err, &se) {
			io.printError(err)
		}
	}
	if code == exitOK && ctx.Err() != nil {
		code = exitInterrupted
	}
	return code
}

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var se *silentError
	var ue *usageError
	var ie *invalidError
	var dl diag.List
	switch {
	case errors.As(err, &se):
		return se.code
	case errors.Is(err, syscall.EPIPE):
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ie), errors.As(err, &dl):
		return exitInvalid
	}
	return exitFailure
}

func newRootCmd(io *ioStreams, env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "connector",
		Short: "Run and test API connectors defined in the Airbyte declarative YAML format",
		Long: `connector loads a connector definition (an Airbyte declarative manifest) and the testing
values that hold its credentials, builds the authenticator and the paginator, and streams the
records of the API as JSON lines on stdout. Progress, warnings and errors go to stderr.

Exit codes: 0 ok, 1 runtime failure (network, HTTP error, authentication, pagination guard),
2 usage error (unknown command or flag, a flag value refused, a file that cannot be read),
3 invalid definition or testing values, 130 interrupted.

Flag values come from, first to last: the command line; the environment, as
CONNECTOR_<FLAG> (dashes become underscores: CONNECTOR_MAX_RECORDS=10; a repeatable flag
takes one value there); the settings file (--settings FILE or CONNECTOR_SETTINGS, YAML, JSON
or TOML); the flag's default. In the settings file, a top-level key is a flag name and applies
to every command that has that flag; a section named after a command (validate:, check:,
read:, paginate-trace:, streams:, infer-schema:, resolve:, init-values:, test:, oauth:,
demo-api:, serve:, dev:) applies to that command only and wins over the top level. An unknown key is an error, and so is a top-level
value that a command's flag refuses (format: envelope suits read, not check): move it under
that command's section.

  # settings.yaml
  testing-values: creds.yaml      # every command that reads testing values
  timeout: 30s
  read:
    format: envelope              # read only: check's --format is text or json
    max-records: 100
  paginate-trace:
    max-pages: 3`,
		Example: `  connector validate def.yaml
  connector check def.yaml --testing-values creds.yaml
  connector read def.yaml --testing-values creds.yaml | jq .
  connector paginate-trace def.yaml --testing-values creds.yaml --max-pages 3
  connector read def.yaml --testing-values creds.yaml --record def.har && connector test def.yaml --replay def.har --update
  connector read def.yaml --settings settings.yaml
  CONNECTOR_MAX_RECORDS=5 connector read def.yaml --testing-values creds.yaml
  connector demo-api`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		// A word that is not a command is a usage error (exit 2), not cobra's plain error.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(c, args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := loadSettings(c, env); err != nil {
				return err
			}
			noColor, _ := c.Flags().GetBool("no-color")
			io.setColor(!noColor)
			return nil
		},
	}
	root.PersistentFlags().Bool("no-color", false, "never colour the output (colour is used only on a terminal and when NO_COLOR is unset or empty)")
	root.PersistentFlags().String("settings", "", "a settings `file` (YAML, JSON or TOML) with flag values: top-level keys for every command, a section per command (see above)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			return flagError(bad.GetFlag(), bad.GetValue(), bad.Unwrap(), "")
		}
		msg := err.Error()
		if near := nearestFlag(c, msg); near != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", near)
		}
		return usagef("%s\nRun '%s --help' for usage.", msg, c.CommandPath())
	})
	root.SetHelpCommand(newCmdHelp(root))
	root.AddCommand(
		newCmdValidate(io, nil),
		newCmdRead(io, env, nil),
		newCmdCheck(io, env, nil),
		newCmdTrace(io, env, nil),
		newCmdStreams(io, env, nil),
		newCmdResolve(io, env, nil),
		newCmdInitValues(io, nil),
		newCmdDemoAPI(io, env, nil),
		newCmdServe(io, env, nil),
		newCmdInferSchema(io, env, nil),
		newCmdDev(io, env, nil),
		newCmdOAuth(io, env, nil),
		newCmdAirbyte(io, env, nil),
		newCmdTest(io, env, nil),
		newCmdState(io),
	)
	// Before the completion command is made: cobra's takes the output it has then.
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	registerCompletions(root, env)
	return root
}

// newCmdHelp is `connector help [command]`: cobra's help, except that a topic naming no
// command is a usage error (exit 2) instead of the root's help and exit 0.
func newCmdHelp(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help shows the help of a command: connector help read is connector read --help.",
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			target, _, err := root.Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range target.Commands() {
				if sub.IsAvailableCommand() && sub.Name() != "help" {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err == nil && target == root && len(args) > 0 {
				return unknownCommand(root, args[0])
			}
			if err != nil || len(rest) > 0 {
				return usagef("no help topic %q: %s has no such command\nRun '%s --help' for usage.",
					strings.Join(args, " "), target.CommandPath(), target.CommandPath())
			}
			return target.Help()
		},
	}
}

// unknownCommand is the usage error for a first word that names no command.
func unknownCommand(root *cobra.Command, word string) error {
	names := commandNames(root)
	hint := "the commands are " + strings.Join(names, ", ")
	if word == "version" {
		hint = "connector --version prints the version"
	} else if near := nearest(word, names); near != "" {
		hint = fmt.Sprintf("did you mean %q?", near)
	}
	return usagef("unknown command %q; %s\nRun 'connector --help' for usage.", word, hint)
}

// nearestFlag returns the flag of c that an unknown flag is a typo of, from pflag's message
// ("unknown flag: --max-recods", or "unknown shorthand flag: 'm' in -max-records" for a
// long name written with one dash), else "".
func nearestFlag(c *cobra.Command, msg string) string {
	var word string
	if rest, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		word = rest
	} else if _, rest, ok := strings.Cut(msg, "' in -"); ok && strings.HasPrefix(msg, "unknown shorthand flag: ") && len(rest) > 1 {
		word = rest
	}
	word, _, _ = strings.Cut(word, "=")
	if word == "" {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" {
			names = append(names, f.Name)
		}
	})
	if slices.Contains(names, word) {
		return word
	}
	return nearest(word, names)
}

// commandNames lists the commands of connector, in the order of the help.
func commandNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.Runnable() && !c.Hidden && c.Name() != "help" && c.Name() != "completion" {
			names = append(names, c.Name())
		}
	}
	return names
}

// nearest returns the name closest to s when it is close enough to be a typo, else "".
func nearest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := typo.Distance(s, n); d < bestD && d < len([]rune(n)) {
			best, bestD = n, d
		}
	}
	return best
}

// isBrokenPipe reports a write to a closed pipe (`connector read … | head -1`).
func isBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE)
}
