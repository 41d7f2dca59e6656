package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/serve"
)

type serveOptions struct {
	io      *ioStreams
	env     *Env
	addr    string
	timeout time.Duration
	maxBody sizeFlag
}

func newCmdServe(io *ioStreams, env *Env, runF func(*serveOptions) error) *cobra.Command {
	opts := &serveOptions{io: io, env: env, maxBody: serve.DefaultMaxBody}
	c := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8788]",
		Short: "Serve the Connector Builder's API (the CDK's manifest server) from this engine",
		Long: `serve answers the HTTP API of the Airbyte CDK's manifest_server, so that the Airbyte platform's
Connector Builder can use this engine instead of the Python service:

  GET  /health/                    {"status": "ok"}
  GET  /capabilities/              {"custom_code_execution": false}
  POST /v1/manifest/test_read      a test read of one stream: the StreamRead JSON
  POST /v1/manifest/check          {"success": …, "message": …}
  POST /v1/manifest/discover       {"catalog": {"streams": […]}}
  POST /v1/manifest/resolve        the manifest resolved
  POST /v1/manifest/full_resolve   the manifest resolved, dynamic streams made

Request and response bodies are the manifest server's (record_limit 1–5000, default 100;
page_limit and slice_limit 1–20, default 5; stream_limit 1–100, default 100, the most
streams full_resolve keeps of each dynamic stream definition). resolve and full_resolve
answer the manifest as the CDK resolves it, key order included (connector resolve prints
the same for a file). A problem answers 400 {"detail": "…"} with every
secret of the request's config masked; a body that does not fit the model answers 422 with
FastAPI's list of problems. Each request is its own run: many at once share nothing.

It listens on loopback unless --addr says otherwise. When AB_JWT_SIGNATURE_SECRET is set, every
/v1 request needs "Authorization: Bearer TOKEN", an HS256 JWT signed with that secret, as the
CDK's server checks. One JSON line per request goes to stderr (method, path, status,
duration, stream; never a secret). SIGTERM or Ctrl-C lets the requests in flight finish.`,
		Example: `  connector serve
  connector serve --addr 127.0.0.1:9000 --timeout 2m
  curl -s localhost:8788/v1/manifest/check -d '{"manifest": …, "config": {…}}'`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("serve takes no arguments, got %q\nRun 'connector serve --help' for usage.", args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return serveRun(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:8788", "`host:port` to listen on (loopback by default)")
	durationFlag(c.Flags(), &opts.timeout, "timeout", serve.DefaultTimeout, "the longest one request may take")
	c.Flags().Var(&opts.maxBody, "max-body", "the largest request body `size` read, e.g. 32MiB")
	return c
}

func serveRun(ctx context.Context, opts *serveOptions) error {
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("serve cannot listen on %s: %w (choose another --addr)", opts.addr, err)
	}
	if host, _, _ := net.SplitHostPort(opts.addr); !isLoopback(host) {
		fmt.Fprintf(opts.io.Err, "warning: serving on %s, reachable from other machines; the API runs any definition it is sent against any host\n", ln.Addr())
	}
	secret, _ := opts.env.Getenv("AB_JWT_SIGNATURE_SECRET")
	h := serve.New(serve.Config{
		Transport: opts.env.Transport, Now: opts.env.clock(), Sleep: opts.env.Sleep,
		UserAgent: "connector/" + version, JWTSecret: secret,
		MaxBody: int64(opts.maxBody), Timeout: opts.timeout, AccessLog: opts.io.Err,
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	auth := "no token needed"
	if secret != "" {
		auth = "bearer tokens signed with AB_JWT_SIGNATURE_SECRET required"
	}
	fmt.Fprintf(opts.io.Err, "serving the Connector Builder API on http://%s (%s; Ctrl-C to stop)\n", ln.Addr(), auth)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		// Let the requests in flight finish, within their own time limit.
		drain, cancel := context.WithTimeout(context.Background(), opts.timeout)
		defer cancel()
		err := srv.Shutdown(drain)
		fmt.Fprintln(opts.io.Err, "serve stopped")
		return err
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// isLoopback says whether host (of --addr) is reachable from this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
