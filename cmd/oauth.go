package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/manifest"
	"connector/pkg/oauthflow"
)

type oauthOptions struct {
	io            *ioStreams
	env           *Env
	defPath       string
	testingValues string
	assign        []assignment
	port          int
	open          bool
	timeout       time.Duration
	// openBrowser opens a URL in the user's browser (--open); tests replace it.
	openBrowser func(url string) error
}

func newCmdOAuth(io *ioStreams, env *Env, runF func(*oauthOptions) error) *cobra.Command {
	opts := &oauthOptions{io: io, env: env, openBrowser: openBrowser}
	c := &cobra.Command{
		Use:   "oauth DEF --testing-values FILE",
		Short: "Run the definition's OAuth 2.0 consent flow and store the tokens in the testing values",
		Long: `oauth runs the authorization-code flow that spec.advanced_auth of the definition describes
(declarative OAuth 2.0). It reads the client id and secret from the testing values, listens on
http://127.0.0.1:PORT/callback, prints the consent URL on stderr (and opens it with --open),
waits for the provider to redirect back, checks the state (a redirect with another state is
answered 400 and refused, and the wait goes on until --timeout), exchanges the code at the token
endpoint and writes the tokens into the testing values file at the paths the definition gives,
keeping the file's comments and mode. Token values are never printed.

Register http://127.0.0.1:PORT/callback as a redirect URI of your OAuth app, and pass the same
--port.`,
		Example: `  connector demo-api &
  cp testing-values.example.yaml my-values.yaml
  connector oauth definitions/declarative-oauth.yaml --testing-values my-values.yaml --open`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.defPath = args[0]
			if runF != nil {
				return runF(opts)
			}
			return oauthRun(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.testingValues, "testing-values", "", "the testing values `file` with the client id and secret; the tokens are written back to it")
	assignFlags(c.Flags(), &opts.assign,
		"override or add a testing value, as `key.path=value` (repeatable, not written back); text unless spec.connection_specification types the key otherwise",
		"override or add a testing value given as JSON, as `key.path=JSON` (repeatable, not written back)")
	intFlag(c.Flags(), &opts.port, "port", 0, "local `port` of the callback listener (default: a free port)", 0, "must be a port number from 0 (any free port) to 65535", 65535, "must be a port number from 0 (any free port) to 65535")
	c.Flags().BoolVar(&opts.open, "open", false, "open the consent URL in a browser (xdg-open or open)")
	durationFlag(c.Flags(), &opts.timeout, "timeout", 5*time.Minute, "how long to wait for the authorization callback; a callback with a wrong state is refused and the wait goes on")
	return c
}

func oauthRun(ctx context.Context, opts *oauthOptions) error {
	s := opts.io
	if _, err := os.Stat(opts.defPath); err != nil {
		return usagef("cannot read definition: %v", pathError(err))
	}
	if opts.testingValues == "" {
		return usagef("--testing-values is required: the file with the client id and secret, where the tokens are written")
	}
	if opts.testingValues == "-" {
		return usagef("--testing-values - (stdin) cannot be used with oauth: the tokens are written back to the file")
	}
	// Only spec is needed: a connector whose streams use components this tool does not run
	// yet can still get its tokens.
	def, diags := manifest.LoadSpec(opts.defPath)
	if diags.HasErrors() {
		diags.Sort()
		printDiagnostics(s, s.Err, diags)
		s.summary(opts.defPath, diags)
		return &silentError{code: exitInvalid}
	}
	spec, err := oauthflow.Parse(def.AdvancedAuth)
	if err != nil {
		return &invalidError{fmt.Errorf("%s: %w", opts.defPath, err)}
	}
	// The defaults are used by the flow, never written to the file.
	vals, _, err := loadTestingValues(s, opts.defPath, def.ConnectionSpec, opts.testingValues, opts.assign, true)
	if err != nil {
		return err
	}
	var predicate []oauthflow.Write
	if len(spec.PredicateKey) > 0 {
		got, ok := vals.Get(spec.PredicateKey)
		switch {
		case !ok || got == nil:
			predicate = append(predicate, oauthflow.Write{Path: spec.PredicateKey, Value: spec.PredicateValue})
		case fmt.Sprint(got) != spec.PredicateValue:
			return &invalidError{fmt.Errorf("%s: %s is %q, but spec.advanced_auth applies when it is %q",
				vals.File, strings.Join(spec.PredicateKey, "."), fmt.Sprint(got), spec.PredicateValue)}
		}
	}

	cb, err := oauthflow.Listen(opts.port)
	if err != nil {
		return err
	}
	defer cb.Close()
	flow, err := spec.Start(vals.Map, cb.RedirectURI())
	if err != nil {
		return &invalidError{fmt.Errorf("%s: %w", vals.File, err)}
	}
	flow.UserAgent = "connector/" + version
	flow.Refused = func() {
		fmt.Fprintln(s.Err, "refused a redirect whose state does not match the one sent (a stale or forged redirect); still waiting for the right one")
	}
	s.redactor.Add(flow.ClientID, flow.ClientSecret)
	consent, err := flow.ConsentURL()
	if err != nil {
		return &invalidError{fmt.Errorf("%s: %w", opts.defPath, err)}
	}

	fmt.Fprintln(s.Err, "Open this URL in a browser and grant access:")
	// The consent URL is what the user must open, client id included, so it bypasses the
	// redactor; nothing else does.
	fmt.Fprintln(rawErr(s), consent)
	fmt.Fprintf(s.Err, "Waiting for the redirect to %s (timeout %s)…\n", cb.RedirectURI(), diag.Duration(opts.timeout))
	if opts.open {
		if err := opts.openBrowser(consent); err != nil {
			fmt.Fprintf(s.Err, "cannot open a browser (%v); open the URL above yourself\n", err)
		}
	}

	wctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	code, err := flow.Wait(wctx, cb, opts.timeout)
	if err != nil {
		return err
	}
	s.redactor.Add(code)
	client := &http.Client{Timeout: 60 * time.Second, Transport: opts.env.Transport}
	resp, err := flow.Exchange(ctx, client, code)
	if err != nil {
		return err
	}
	now := opts.env.clock()
	writes, err := spec.Writes(resp, now())
	if err != nil {
		return err
	}
	writes = append(writes, predicate...)
	updates := map[string]any{}
	var keys []string
	for _, w := range writes {
		if str, ok := w.Value.(string); ok {
			s.redactor.Add(str)
		}
		key := strings.Join(w.Path, ".")
		if _, dup := updates[key]; !dup {
			keys = append(keys, key)
		}
		updates[key] = w.Value
	}
	if err := vals.WriteBack(vals.File, updates); err != nil {
		return fmt.Errorf("cannot write the tokens to %s: %w", vals.File, err)
	}
	fmt.Fprintf(s.Err, "Authorized. Wrote %s to %s.\n", strings.Join(keys, ", "), vals.File)
	return nil
}

// rawErr is stderr without the redactor, for the one line that must reach the user as is.
func rawErr(s *ioStreams) io.Writer {
	if rw, ok := s.Err.(*redactingWriter); ok {
		rw.Flush()
		return rw.w
	}
	return s.Err
}

// openBrowser starts xdg-open (or open on macOS) with url and does not wait for it.
func openBrowser(url string) error {
	for _, name := range []string{"xdg-open", "open"} {
		if path, err := exec.LookPath(name); err == nil {
			cmd := exec.Command(path, url)
			if err := cmd.Start(); err != nil {
				return err
			}
			go cmd.Wait()
			return nil
		}
	}
	return errors.New("neither xdg-open nor open is installed")
}
