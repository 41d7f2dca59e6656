// Command connector runs and tests API connectors defined in the Airbyte declarative format.
package main

import (
	"os"
	"runtime/debug"

	"connector/cmd"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A read keeps little alive from page to page: collecting at 200% growth instead of
		// 100% saves about 5% of a read's time and keeps a 1M-record read under 30 MB.
		debug.SetGCPercent(200)
	}
	os.Exit(cmd.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
