package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// buildConnector builds the connector binary (main.go included) into a temporary folder.
func buildConnector(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "connector")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// endlessRead is an API that never runs out of pages of two records, with a definition
// that reads it and testing values pointing at it.
func endlessRead(t *testing.T) (api *recorder, def, vals string) {
	t.Helper()
	api = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		w.Write([]byte(`{"data":[{"page":` + strconv.Itoa(page) + `,"n":1},{"page":` + strconv.Itoa(page) + `,"n":2}]}`))
	})
	def = writeFile(t, "def.yaml", e2eOneStream(`
url_base: "{{ config['base_url'] }}"
path: /items`, e2eDataPath)+`      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2}
`)
	vals = writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	return api, def, vals
}

// TestE2EBrokenPipe runs the built binary as `connector read … | head -1` would: the reader
// of stdout goes away after one line. The API never runs out of pages, so only the broken
// pipe can end the read; it must end quietly with exit status 0.
func TestE2EBrokenPipe(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildConnector(t)
	api, def, vals := endlessRead(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.CommandContext(ctx, bin, "read", def, "--testing-values", vals)
	c.Stdout = w
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the child holds its own copy
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close() // head -1 exits
	if err != nil {
		t.Fatalf("reading the first line: %v", err)
	}
	if line != "{\"page\":0,\"n\":1}\n" {
		t.Errorf("first line %q", line)
	}

	err = c.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the read did not stop after stdout was closed (killed after 30 s; %d requests)", len(api.requests()))
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Errorf("exit status %s, want 0", exit.ProcessState)
	} else if err != nil {
		t.Fatal(err)
	}
	if stderr.String() != "" {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
}

// TestE2EInterrupt runs the built binary and sends it SIGINT, as Ctrl-C would, during a read
// that would never end: it exits 130, says where the stream stopped, and has written every
// record it counts there, each on a whole line.
func TestE2EInterrupt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildConnector(t)
	api, def, vals := endlessRead(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "read", def, "--testing-values", vals)
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	first, err := out.ReadString('\n') // the read is under way
	if err != nil {
		t.Fatalf("reading the first line: %v", err)
	}
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the read did not stop after SIGINT (killed after 30 s; %d requests)", len(api.requests()))
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("exit %v, want exit status 130", err)
	}
	m := regexp.MustCompile(`^interrupted: items stopped after (\d+) records? and \d+ pages?\n$`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr %q, want one line saying where the read stopped", stderr.String())
	}
	written := first + string(rest)
	lines := strings.SplitAfter(written, "\n")
	if last := lines[len(lines)-1]; last != "" {
		t.Errorf("stdout ends in a cut line %q", last)
	}
	lines = lines[:len(lines)-1]
	if strconv.Itoa(len(lines)) != m[1] {
		t.Errorf("stdout has %d records, stderr says %s were read", len(lines), m[1])
	}
	for i, line := range lines {
		want := fmt.Sprintf("{\"page\":%d,\"n\":%d}\n", i/2, i%2+1)
		if line != want {
			t.Fatalf("record %d is %q, want %q", i+1, line, want)
		}
	}
}
