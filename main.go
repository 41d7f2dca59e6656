// Command connector runs and tests API connectors defined in the Airbyte declarative format.
package main

import (
	"os"

	"connector/cmd"
)

func main() {
	os.Exit(cmd.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
