// Command connector runs and tests API connectors defined in the Airbyte declarative format.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"connector/cmd"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A read keeps little alive from page to page: collecting at 200% growth instead of
		// 100% saves about 5% of a read's time and keeps a 1M-record read under 30 MB.
		debug.SetGCPercent(200)
	}
	// Ctrl-C and SIGTERM end the run's context: a read writes out what it has read and
	// exits 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Writes to a closed pipe (`connector read … | head -1`) return EPIPE instead of
	// killing the process, so the read ends quietly.
	signal.Ignore(syscall.SIGPIPE)
	code := cmd.Execute(ctx, os.Args[1:], cmd.Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.LookupEnv,
	})
	stop()
	os.Exit(code)
}
