//go:build !unix

package cmd

import (
	"net"
	"testing"
)

// refusedURL is the http:// address of a port on 127.0.0.1 that nobody listens on (here a
// port just closed: a server started at the same time may take it again).
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	return "http://" + l.Addr().String()
}
