package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
