// Package cmd is the command line of connector: the Cobra tree, flag and settings parsing, and
// the one place that prints errors and picks exit codes.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"connector/pkg/diag"
)

// Exit codes (SPEC section 1).
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

// Execute runs the command line with the given arguments and streams and returns the exit
// code. main passes os.Args[1:] and the process streams.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	io := newIOStreams(stdin, stdout, stderr)
	// A hidden switch for performance work: CONNECTOR_CPUPROFILE=cpu.out writes a CPU
	// profile of the run (go tool pprof connector cpu.out).
	if path := os.Getenv("CONNECTOR_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Writes to a closed pipe (`connector read … | head -1`) return EPIPE instead of
	// killing the process, so the read ends quietly.
	signal.Ignore(syscall.SIGPIPE)

	root := newRootCmd(io)
	root.SetArgs(args)
	root.SetIn(stdin)
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

func newRootCmd(io *ioStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "connector",
		Short: "Run and test API connectors defined in the Airbyte declarative YAML format",
		Long: `connector loads a connector definition (an Airbyte declarative manifest) and the testing
values that hold its credentials, builds the authenticator and the paginator, and streams the
records of the API as JSON lines on stdout. Progress, warnings and errors go to stderr.

Exit codes: 0 ok, 1 runtime failure (network, HTTP error, authentication, pagination guard),
2 usage error, 3 invalid definition or testing values, 130 interrupted.

Every flag can also be set through the environment as CONNECTOR_<FLAG> (dashes become
underscores: CONNECTOR_TESTING_VALUES=creds.yaml) or in a settings file (--settings).`,
		Example: `  connector validate def.yaml
  connector check def.yaml --testing-values creds.yaml
  connector read def.yaml --testing-values creds.yaml | jq .
  connector paginate-trace def.yaml --testing-values creds.yaml --max-pages 3
  connector demo-api`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := loadSettings(c); err != nil {
				return err
			}
			noColor, _ := c.Flags().GetBool("no-color")
			io.setColor(!noColor)
			return nil
		},
	}
	root.PersistentFlags().Bool("no-color", false, "never colour the output (colour is used only on a terminal and when NO_COLOR is unset)")
	root.PersistentFlags().String("settings", "", "a settings `file` (YAML, JSON or TOML) with default flag values, keyed by flag name")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	root.AddCommand(
		newCmdValidate(io, nil),
		newCmdRead(io, nil),
		newCmdCheck(io, nil),
		newCmdTrace(io, nil),
		newCmdDemoAPI(io, nil),
		newCmdOAuth(io, nil),
	)
	return root
}

// loadSettings fills flags the user did not set from CONNECTOR_* environment variables and
// the settings file, through viper. Definitions and testing values are not read here.
func loadSettings(c *cobra.Command) error {
	v := viper.New()
	v.SetEnvPrefix("CONNECTOR")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if file, _ := c.Flags().GetString("settings"); file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return usagef("settings file %s: %v", file, err)
		}
	} else if file := os.Getenv("CONNECTOR_SETTINGS"); file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return usagef("settings file %s (from CONNECTOR_SETTINGS): %v", file, err)
		}
	}
	var firstErr error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || firstErr != nil || f.Name == "settings" || f.Name == "help" {
			return
		}
		if !v.IsSet(f.Name) {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			if err := sv.Replace(v.GetStringSlice(f.Name)); err != nil {
				firstErr = usagef("setting %s: %v", f.Name, err)
			}
			return
		}
		if err := f.Value.Set(v.GetString(f.Name)); err != nil {
			firstErr = usagef("setting %s=%q: %v", f.Name, v.GetString(f.Name), err)
		}
	})
	return firstErr
}

// isBrokenPipe reports a write to a closed pipe (`connector read … | head -1`).
func isBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE)
}
