package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/demoapi"
)

type demoAPIOptions struct {
	io   *ioStreams
	env  *Env
	addr string
	log  bool
}

func newCmdDemoAPI(io *ioStreams, env *Env, runF func(*demoAPIOptions) error) *cobra.Command {
	opts := &demoAPIOptions{io: io, env: env}
	c := &cobra.Command{
		Use:   "demo-api",
		Short: "Serve a local demo API with every authentication and pagination style",
		Long: `demo-api serves a small fictional API on a local address, with every authentication method
(Basic, Bearer, API key in each place, OAuth refresh and client credentials with expiring and
rotating tokens, session login) and every pagination style (offset, page, cursor in the body,
in a header, in a Link header, next-page URL), and time-filtered collections (events, the
reviews of an author: since/until) for incremental reads. The examples in definitions/ run
against it with testing-values.example.yaml. It runs until interrupted (Ctrl-C).`,
		Example: `  connector demo-api &
  connector read definitions/offset-pagination.yaml --testing-values testing-values.example.yaml`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("demo-api takes no arguments, got %q\nRun 'connector demo-api --help' for usage.", args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return demoAPIRun(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:8787", "`host:port` to listen on")
	c.Flags().BoolVar(&opts.log, "log", true, "log one line per request on stderr")
	return c
}

func demoAPIRun(ctx context.Context, opts *demoAPIOptions) error {
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("demo-api cannot listen on %s: %w (is another demo-api running? choose another --addr)", opts.addr, err)
	}
	o := demoapi.Options{Now: opts.env.clock()}
	if opts.log {
		o.Log = opts.io.Err
	}
	srv := &http.Server{Handler: demoapi.New(o), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(opts.io.Err, "demo API listening on http://%s (Ctrl-C to stop)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
		fmt.Fprintln(opts.io.Err, "demo API stopped")
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}
