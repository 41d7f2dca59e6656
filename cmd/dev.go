package cmd

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/dev"
	"connector/pkg/httpx"
	"connector/pkg/serve"
	"connector/pkg/session"
)

type devOptions struct {
	io            *ioStreams
	env           *Env
	defPath       string
	testingValues string
	state         string
	addr          string
	open          bool
	noBrowser     bool
	timeout       time.Duration
	maxBody       sizeFlag
	// openBrowser opens the page (--open); testRead makes the test reads (nil: the
	// Builder's); listening hears the page's URL once the server listens. Tests replace them.
	openBrowser func(url string) error
	testRead    serve.TestReader
	listening   func(url string)
}

func newCmdDev(io *ioStreams, env *Env, runF func(*devOptions) error) *cobra.Command {
	opts := &devOptions{io: io, env: env, openBrowser: openBrowser, maxBody: httpx.DefaultMaxBody}
	c := &cobra.Command{
		Use:   "dev DEF [--testing-values FILE] [--state FILE] [--addr 127.0.0.1:0] [--open | --no-browser]",
		Short: "Test-read a definition live as you edit it, on a local web page or in the terminal",
		Long: `dev validates the definition, serves a local web page and prints its URL on stderr (--open
opens it in the browser). The page shows the streams, the definition's errors and warnings with
their file:line:col, and for the stream you choose a test read with the Connector Builder's
limits (100 records, 5 pages per slice, 5 slices; change them on the page):

  Records    a table whose columns are the inferred schema's fields, nested values folded, and
             beside each record the warnings about it: a mismatch with the declared schema
             (with its JSON pointer), a primary key missing or repeated; no records at all
  Requests   slice by slice, page by page: the request (method, URL, headers, body) and the
             response (status, headers, the JSON body as a tree to fold), and the auxiliary
             requests (logins, token refreshes, parent streams, job steps) where they happened
  Schema     the inferred schema beside the declared one, differences highlighted, and a button
             that copies the inferred schema as schema_loader YAML
  State      the state after the read, and a button to read again from it
  Logs       the read's log messages

Every time you save the definition or the testing values, they are validated and the chosen
stream is read again (the read in flight is cancelled). A file with errors shows them with their
positions, the last good result greyed out beneath.

Secrets are masked everywhere on the page. The server listens on loopback unless --addr says
otherwise (then a warning), refuses requests whose Host header is not its address, and requires
the token of the printed URL in every API call the page makes.

With --no-browser nothing is served: every save reads every stream again and prints a line per
stream on stdout (records, pages, warnings, how the inferred schema differs from the declared
one). Ctrl-C stops.`,
		Example: `  connector demo-api &
  connector dev definitions/offset-pagination.yaml --testing-values testing-values.example.yaml --open
  connector dev def.yaml --testing-values creds.yaml --no-browser`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.defPath = args[0]
			if runF != nil {
				return runF(opts)
			}
			return devRun(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.testingValues, "testing-values", "", "the testing values `file` (YAML or JSON), watched like the definition")
	c.Flags().StringVar(&opts.state, "state", "", "a state `file` the test reads start from (never written)")
	c.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:0", "`host:port` the page is served on (loopback by default; port 0: a free port)")
	c.Flags().BoolVar(&opts.open, "open", false, "open the page in a browser (xdg-open or open)")
	c.Flags().BoolVar(&opts.noBrowser, "no-browser", false, "serve nothing: print a summary of every stream on stdout after every save")
	durationFlag(c.Flags(), &opts.timeout, "timeout", 60*time.Second, "timeout of each HTTP request")
	c.Flags().Var(&opts.maxBody, "max-body", "the largest response `size` read, after decompression, e.g. 64MiB")
	return c
}

func devRun(ctx context.Context, opts *devOptions) error {
	if _, err := os.Stat(opts.defPath); err != nil {
		return usagef("cannot read definition: %v", pathError(err))
	}
	switch {
	case opts.testingValues == "-":
		return usagef("--testing-values - (stdin) cannot be watched: give a file")
	case opts.testingValues != "":
		if _, err := os.Stat(opts.testingValues); err != nil {
			return usagef("cannot read testing values: %v", pathError(err))
		}
	}
	if opts.open && opts.noBrowser {
		return usagef("--open and --no-browser cannot be used together")
	}
	ws := dev.New(dev.Config{
		Definition: opts.defPath, Values: opts.testingValues, State: opts.state,
		TestRead: opts.testRead, All: opts.noBrowser,
		Env: session.Env{
			Transport: opts.env.Transport, Now: opts.env.clock(), Sleep: opts.env.Sleep,
			Redactor: opts.io.redactor, Timeout: opts.timeout, MaxBody: int64(opts.maxBody),
			UserAgent: "connector/" + version,
		},
	})
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- ws.Run(ctx) }()
	if opts.noBrowser {
		return devTerminal(ctx, opts, ws, done)
	}
	return devServe(ctx, opts, ws, done)
}

// devTerminal prints a summary of every stream after every save, until ctx ends.
func devTerminal(ctx context.Context, opts *devOptions, ws *dev.Workspace, done <-chan error) error {
	fmt.Fprintf(opts.io.Err, "watching %s; every save reads every stream again (Ctrl-C to stop)\n", watched(opts))
	wake, unsubscribe := ws.Subscribe()
	defer unsubscribe()
	p := &dev.Printer{Out: opts.io.Out}
	for {
		select {
		case err := <-done:
			return err
		case <-wake:
			if v := ws.CurrentView(); v != nil {
				p.View(v)
			}
		}
	}
}

func watched(opts *devOptions) string {
	if opts.testingValues == "" {
		return opts.defPath
	}
	return opts.defPath + " and " + opts.testingValues
}

// devServe serves the page until ctx ends.
func devServe(ctx context.Context, opts *devOptions, ws *dev.Workspace, done <-chan error) error {
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return usagef("dev cannot listen on %s: %v (choose another --addr)", opts.addr, err)
	}
	host, _, _ := net.SplitHostPort(opts.addr)
	if !isLoopback(host) {
		fmt.Fprintf(opts.io.Err, "warning: serving on %s, reachable from other machines; anyone with the URL sees the test reads\n", ln.Addr())
	}
	token := dev.NewToken()
	addr := ln.Addr().String()
	srv := &http.Server{Handler: dev.NewServer(ws, addr, host, token), ReadHeaderTimeout: 10 * time.Second}
	url := dev.URL(addr, token)
	if !isLoopback(host) && (host == "" || net.ParseIP(host).IsUnspecified()) {
		// A wildcard address is not one to browse to: the page is on loopback too.
		_, port, _ := net.SplitHostPort(addr)
		url = dev.URL(net.JoinHostPort("127.0.0.1", port), token)
	}
	// The URL carries the token: it goes to the terminal as it is, not through the
	// redactor, which would leave it alone anyway.
	fmt.Fprintf(opts.io.Err, "connector dev: watching %s\n  %s\n(Ctrl-C to stop)\n", watched(opts), url)
	if opts.listening != nil {
		opts.listening(url)
	}
	if opts.open {
		if err := opts.openBrowser(url); err != nil {
			fmt.Fprintf(opts.io.Err, "cannot open a browser (%v); open the URL above yourself\n", err)
		}
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-served:
		return err // the workspace ends with the context devRun cancels
	}
	// The event streams never end by themselves: close them at once.
	srv.Close()
	<-done
	fmt.Fprintln(opts.io.Err, "connector dev stopped")
	return nil
}
