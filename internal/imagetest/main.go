// Command imagetest proves the image of the repository's Dockerfile in a real container
// runtime (podman): it builds the image, runs the Airbyte protocol commands in it as the
// image's own user against the built-in demo API, and compares every output with the same
// command run by the same binary outside the container. `make image-test` runs it from the
// repository's root:
//
//	go run ./internal/imagetest -version dev
//
// The image is built offline. The Dockerfile's build stage (a Go image, `go build`) is stood
// in for by the files it produces, made here: the static binary built with the same flags at
// /out/connector, the empty /out/rootfs/tmp with mode 1777 and the CA roots at
// /etc/ssl/certs/ca-certificates.crt (the host's, or an empty file). Everything from the
// Dockerfile's second FROM to its end is used verbatim, so a change to the final stage is
// tested as it is written; a change to the paths the build stage produces must be made here
// too (the build then fails on the missing path).
//
// Then, each a failure with its reason:
//   - /tmp in the image is a folder with mode 1777, and the image's user can write a file
//     there (init-values -o /tmp/…);
//   - spec, check, discover and read with --manifest-path, and read with the definition in
//     the config's __injected_declarative_manifest, exit 0 in the container as outside it,
//     with the same stderr and the same stdout byte for byte, once the emitted_at times of
//     RECORD and TRACE messages are set aside (the only fields that differ between two runs).
//
// The container runs with --network host (to reach the demo API on 127.0.0.1), the
// repository mounted read-only at /data and the config and catalog at /io. When
// CONTAINERS_CONF is unset, podman reads a containers.conf written here: no default ulimits
// (podman's default nofile limit cannot be set in some sandboxes) and runc as the runtime
// when it is installed. The containers, the image, the demo API and the temporary files are
// removed on exit, interrupted or not.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"
)

type options struct {
	podmanBin  string
	dockerfile string
	definition string // relative to the repository's root, which is mounted at /data
	values     string
	version    string
	keep       bool
}

func main() {
	var o options
	flag.StringVar(&o.podmanBin, "podman", "podman", "the podman `binary`")
	flag.StringVar(&o.dockerfile, "dockerfile", "Dockerfile", "the `Dockerfile` whose final stage is tested")
	flag.StringVar(&o.definition, "definition", "definitions/bearer-auth.yaml", "the `definition` run, relative to the repository's root")
	flag.StringVar(&o.values, "values", "testing-values.example.yaml", "the testing values `file` the config is made of (base_url replaced by the demo API's)")
	flag.StringVar(&o.version, "version", "imagetest", "the `version` built in, as the Dockerfile's VERSION build argument")
	flag.BoolVar(&o.keep, "keep", false, "keep the image and the temporary folder (for a look after a failure)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	interrupted := ctx.Err() != nil
	stop()
	if interrupted {
		fmt.Fprintln(os.Stderr, "\nimage-test: interrupted (cleaned up)")
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "\nimage-test: FAILED:", err)
		os.Exit(1)
	}
}

// A test holds what run sets up, and undoes it in cleanup.
type test struct {
	options
	start     time.Time
	root      string // the repository, the working folder
	dir       string // temporary: ctx/ (the build context), io/ (config and catalog)
	bin       string
	env       []string // podman's environment
	image     string
	prefix    string // of the containers' names
	container int
	demo      *exec.Cmd
	demoErr   bytes.Buffer
	cleanups  []func()
}

func run(ctx context.Context, o options) (err error) {
	t := &test{options: o, start: time.Now()}
	defer t.cleanup()
	if t.root, err = os.Getwd(); err != nil {
		return err
	}
	if _, err := exec.LookPath(o.podmanBin); err != nil {
		return fmt.Errorf("podman is needed (apt-get install podman runc): %w", err)
	}
	if t.dir, err = os.MkdirTemp("", "connector-imagetest-"); err != nil {
		return err
	}
	if !o.keep {
		t.onExit(func() { os.RemoveAll(t.dir) })
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	t.image = "localhost/connector-imagetest:" + stamp
	t.prefix = "connector-imagetest-" + stamp
	if err := t.podmanEnv(); err != nil {
		return err
	}
	if err := t.build(ctx); err != nil {
		return err
	}
	if err := t.checkTmp(ctx); err != nil {
		return err
	}
	url, err := t.startDemo(ctx)
	if err != nil {
		return err
	}
	if err := t.writeInputs(url); err != nil {
		return err
	}
	def := "/data/" + filepath.ToSlash(o.definition)
	local := map[string]string{"DEF": o.definition, "CONFIG": t.io("config.json"), "INJECTED": t.io("injected.json"), "CATALOG": t.io("catalog.json")}
	inside := map[string]string{"DEF": def, "CONFIG": "/io/config.json", "INJECTED": "/io/injected.json", "CATALOG": "/io/catalog.json"}
	// The catalog is what discover finds, every stream configured as the platform does.
	out, err := t.local(ctx, local, "discover --config CONFIG --manifest-path DEF")
	if err != nil {
		return err
	}
	if err := writeCatalog(t.io("catalog.json"), out); err != nil {
		return err
	}
	cases := []struct{ args, want string }{
		{"spec --manifest-path DEF", `{"type":"SPEC",`},
		{"check --config CONFIG --manifest-path DEF", `"status":"SUCCEEDED"`},
		{"discover --config CONFIG --manifest-path DEF", `{"type":"CATALOG",`},
		{"read --config CONFIG --catalog CATALOG --manifest-path DEF", `{"type":"RECORD",`},
		{"read --config INJECTED --catalog CATALOG", `{"type":"RECORD",`},
	}
	for _, c := range cases {
		if err := t.compare(ctx, c.args, c.want, local, inside); err != nil {
			return err
		}
	}
	fmt.Printf("image-test: ok, %d commands the same in the image as outside it (%.1fs)\n", len(cases), time.Since(t.start).Seconds())
	return nil
}

func (t *test) onExit(f func()) { t.cleanups = append(t.cleanups, f) }

func (t *test) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

func (t *test) io(name string) string { return filepath.Join(t.dir, "io", name) }

func (t *test) step(format string, args ...any) {
	fmt.Printf("image-test: %5.1fs  %s\n", time.Since(t.start).Seconds(), fmt.Sprintf(format, args...))
}

// podmanEnv writes the containers.conf podman reads, unless CONTAINERS_CONF names one.
func (t *test) podmanEnv() error {
	t.env = os.Environ()
	if os.Getenv("CONTAINERS_CONF") != "" {
		return nil
	}
	conf := "[containers]\ndefault_ulimits = []\n"
	if _, err := exec.LookPath("runc"); err == nil {
		conf += "\n[engine]\nruntime = \"runc\"\n"
	}
	path := filepath.Join(t.dir, "containers.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return err
	}
	t.env = append(t.env, "CONTAINERS_CONF="+path)
	return nil
}

// command is exec.CommandContext, but an interrupted podman is asked to stop (SIGTERM), to
// clean up what it made, before it is killed.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	return cmd
}

// podman runs podman and returns its stdout; a failure carries its stderr.
func (t *test) podman(ctx context.Context, args ...string) ([]byte, error) {
	cmd := command(ctx, t.podmanBin, args...)
	cmd.Env = t.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("podman %s: %w\n%s", strings.Join(args, " "), err, indent(stderr.String()))
	}
	return out, nil
}

// build builds the binary, then the image: the Dockerfile's final stage on a stand-in build
// stage that holds what the real one produces.
func (t *test) build(ctx context.Context) error {
	src, err := os.ReadFile(t.dockerfile)
	if err != nil {
		return err
	}
	final, err := finalStage(string(src))
	if err != nil {
		return fmt.Errorf("%s: %w", t.dockerfile, err)
	}
	bctx := filepath.Join(t.dir, "ctx")
	t.bin = filepath.Join(bctx, "out", "connector")
	// The flags of the Dockerfile's go build.
	gobuild := command(ctx, "go", "build", "-trimpath", "-tags", "timetzdata",
		"-ldflags", "-s -w -X connector/cmd.version="+t.version, "-o", t.bin, ".")
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0")
	gobuild.Stdout, gobuild.Stderr = os.Stdout, os.Stderr
	if err := gobuild.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	tmp := filepath.Join(bctx, "out", "rootfs", "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o777|os.ModeSticky); err != nil { // not subject to the umask, as mkdir is
		return err
	}
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if errors.Is(err, os.ErrNotExist) {
		ca, err = nil, nil // the demo API is plain HTTP
	}
	if err != nil {
		return err
	}
	certs := filepath.Join(bctx, "etc", "ssl", "certs")
	if err := os.MkdirAll(certs, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(certs, "ca-certificates.crt"), ca, 0o644); err != nil {
		return err
	}
	// COPY . / keeps the modes of what it copies (not of the destination folder itself).
	containerfile := "# Written by internal/imagetest: the files the build stage of " + t.dockerfile + " produces,\n" +
		"# then its final stage verbatim.\nFROM scratch AS build\nCOPY . /\n\n" + final
	cf := filepath.Join(t.dir, "Containerfile")
	if err := os.WriteFile(cf, []byte(containerfile), 0o644); err != nil {
		return err
	}
	t.step("go build done; podman build %s", t.image)
	before, err := t.buildahContainers(ctx)
	if err != nil {
		return err
	}
	if _, err := t.podman(ctx, "build", "--quiet", "--pull=never", "--layers=false", "--build-arg", "VERSION="+t.version,
		"-t", t.image, "-f", cf, bctx); err != nil {
		if ctx.Err() != nil {
			// An interrupted podman build leaves its working containers behind (a failed one
			// does not): remove those that came during the build.
			after, _ := t.buildahContainers(context.Background())
			for id := range after {
				if !before[id] {
					t.podman(context.Background(), "rm", "--force", id)
				}
			}
		}
		return err
	}
	if !t.keep {
		t.onExit(func() {
			if _, err := t.podman(context.Background(), "rmi", "--force", t.image); err != nil {
				fmt.Fprintln(os.Stderr, "image-test: cleanup:", err)
			}
		})
	}
	out, err := t.podman(ctx, "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}", t.image)
	if err != nil {
		return err
	}
	t.step("built; user and entrypoint: %s", strings.TrimSpace(string(out)))
	return nil
}

// buildahContainers are the IDs of the containers podman build works in.
func (t *test) buildahContainers(ctx context.Context) (map[string]bool, error) {
	out, err := t.podman(ctx, "ps", "--all", "--external", "--no-trunc", "--format", "{{.ID}} {{.Status}} {{.Command}}")
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "Storage" && f[2] == "buildah" {
			ids[f[0]] = true
		}
	}
	return ids, nil
}

var fromLine = regexp.MustCompile(`(?im)^[ \t]*FROM[ \t]`)

// finalStage is the text of a Dockerfile from its second FROM to its end.
func finalStage(src string) (string, error) {
	at := fromLine.FindAllStringIndex(src, 3)
	if len(at) != 2 {
		return "", fmt.Errorf("%d FROM lines, want 2 (a build stage and the final one)", len(fromLine.FindAllStringIndex(src, -1)))
	}
	return src[at[1][0]:], nil
}

// checkTmp reads /tmp's mode from the image's files and has the image's user write there.
func (t *test) checkTmp(ctx context.Context) error {
	name := t.nextName()
	if _, err := t.podman(ctx, "create", "--name", name, t.image); err != nil {
		return err
	}
	cmd := command(ctx, t.podmanBin, "export", name)
	cmd.Env = t.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	var tmp *tar.Header
	tr := tar.NewReader(pipe)
	for {
		h, err := tr.Next()
		if err != nil {
			if err != io.EOF {
				cmd.Process.Kill()
				cmd.Wait()
				return fmt.Errorf("podman export %s: %w", name, err)
			}
			break
		}
		if strings.Trim(h.Name, "./") == "tmp" {
			tmp = h
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("podman export %s: %w\n%s", name, err, indent(stderr.String()))
	}
	if tmp == nil {
		return errors.New("the image has no /tmp")
	}
	if mode := tmp.Mode & 0o7777; tmp.Typeflag != tar.TypeDir || mode != 0o1777 {
		return fmt.Errorf("/tmp in the image: tar type %q, mode %04o, owner %d:%d; want a folder with mode 1777, that any user can write to",
			tmp.Typeflag, mode, tmp.Uid, tmp.Gid)
	}
	// atomicfile writes a temporary file beside the destination, then renames it.
	if _, err := t.podman(ctx, "run", "--rm", "--pull=never", "--name", t.nextName(), "--network", "none",
		"-v", t.root+":/data:ro", "--entrypoint", "/connector", t.image,
		"init-values", "/data/"+filepath.ToSlash(t.definition), "-o", "/tmp/values.yaml"); err != nil {
		return fmt.Errorf("the image's user cannot write to /tmp: %w", err)
	}
	t.step("/tmp is a folder with mode 1777, and the image's user writes there")
	return nil
}

// nextName names a container, to be removed on exit even if podman run is interrupted.
func (t *test) nextName() string {
	t.container++
	name := fmt.Sprintf("%s-%d", t.prefix, t.container)
	t.onExit(func() {
		// --ignore: most are gone already (--rm).
		if _, err := t.podman(context.Background(), "rm", "--force", "--ignore", name); err != nil {
			fmt.Fprintln(os.Stderr, "image-test: cleanup:", err)
		}
	})
	return name
}

// startDemo starts the demo API from the built binary on a free port.
func (t *test) startDemo(ctx context.Context) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	t.demo = exec.Command(t.bin, "demo-api", "--addr", addr, "--log=false")
	t.demo.Stderr = &t.demoErr
	if err := t.demo.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() { t.demo.Wait(); close(exited) }()
	t.onExit(func() {
		t.demo.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.demo.Process.Kill()
			<-exited
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			return "", fmt.Errorf("demo-api --addr %s: %v\n%s", addr, t.demo.ProcessState, indent(t.demoErr.String()))
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("demo-api --addr %s: not listening after 10s", addr)
		}
	}
	t.step("demo API at http://%s", addr)
	return "http://" + addr, nil
}

// writeInputs writes the config (the testing values, base_url the demo API's) and the same
// config with the definition injected, readable by the container's user.
func (t *test) writeInputs(url string) error {
	if err := os.Mkdir(filepath.Join(t.dir, "io"), 0o755); err != nil {
		return err
	}
	var config map[string]any
	if err := readYAML(t.values, &config); err != nil {
		return err
	}
	if _, ok := config["base_url"]; !ok {
		return fmt.Errorf("%s: no base_url", t.values)
	}
	config["base_url"] = url
	if err := writeJSON(t.io("config.json"), config); err != nil {
		return err
	}
	var def any
	if err := readYAML(t.definition, &def); err != nil {
		return err
	}
	config["__injected_declarative_manifest"] = def
	return writeJSON(t.io("injected.json"), config)
}

func readYAML(path string, v any) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(src, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}

// writeCatalog configures every stream of discover's catalog for a full refresh.
func writeCatalog(path string, discover []byte) error {
	for line := range strings.Lines(string(discover)) {
		var msg struct {
			Type    string
			Catalog struct{ Streams []json.RawMessage }
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Type != "CATALOG" {
			continue
		}
		var configured []map[string]any
		for _, s := range msg.Catalog.Streams {
			configured = append(configured, map[string]any{"stream": s, "sync_mode": "full_refresh", "destination_sync_mode": "overwrite"})
		}
		if len(configured) == 0 {
			return errors.New("discover: a catalog without streams")
		}
		return writeJSON(path, map[string]any{"streams": configured})
	}
	return fmt.Errorf("discover: no CATALOG message in\n%s", indent(string(discover)))
}

type result struct {
	stdout, stderr []byte
	code           int
}

func expand(args string, paths map[string]string) []string {
	words := strings.Fields(args)
	for i, w := range words {
		if p, ok := paths[w]; ok {
			words[i] = p
		}
	}
	return words
}

// local runs `connector airbyte ARGS` outside the container and wants exit 0.
func (t *test) local(ctx context.Context, paths map[string]string, args string) ([]byte, error) {
	r, err := t.exec(ctx, t.bin, append([]string{"airbyte"}, expand(args, paths)...))
	if err != nil {
		return nil, err
	}
	if r.code != 0 {
		return nil, fmt.Errorf("connector airbyte %s: exit %d\nstderr:\n%sstdout:\n%s", args, r.code, indent(string(r.stderr)), indent(string(r.stdout)))
	}
	return r.stdout, nil
}

// exec runs a command. Outside the container, the CONNECTOR_* variables that set flags are
// left out, as the container has none.
func (t *test) exec(ctx context.Context, name string, args []string) (result, error) {
	cmd := command(ctx, name, args...)
	for _, kv := range t.env {
		if !strings.HasPrefix(kv, "CONNECTOR_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && ctx.Err() == nil {
		return result{stdout.Bytes(), stderr.Bytes(), exit.ExitCode()}, nil
	}
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return result{stdout.Bytes(), stderr.Bytes(), 0}, nil
}

// compare runs ARGS outside and inside the container.
func (t *test) compare(ctx context.Context, args, want string, local, inside map[string]string) error {
	began := time.Now()
	outside, err := t.exec(ctx, t.bin, append([]string{"airbyte"}, expand(args, local)...))
	if err != nil {
		return err
	}
	run := []string{"run", "--rm", "--pull=never", "--name", t.nextName(), "--network", "host",
		"-v", t.root + ":/data:ro", "-v", filepath.Join(t.dir, "io") + ":/io:ro", t.image}
	in, err := t.exec(ctx, t.podmanBin, append(run, expand(args, inside)...))
	if err != nil {
		return err
	}
	what := strings.Join(expand(args, inside), " ")
	var problems []string
	if outside.code != 0 {
		problems = append(problems, fmt.Sprintf("outside the container: exit %d", outside.code))
	}
	if in.code != 0 {
		problems = append(problems, fmt.Sprintf("in the container: exit %d", in.code))
	}
	if !bytes.Equal(outside.stderr, in.stderr) {
		problems = append(problems, "stderr differs")
	}
	a, b := normalise(outside.stdout), normalise(in.stdout)
	if d := diff(a, b); d != "" {
		problems = append(problems, "stdout differs (emitted_at set aside), first differences, - outside, + in the container:\n"+d)
	}
	if !strings.Contains(string(a), want) {
		problems = append(problems, fmt.Sprintf("no %s in the output outside the container", want))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s:\n  %s\nstderr outside:\n%sstderr in the container:\n%sstdout in the container (first lines):\n%s",
			what, strings.Join(problems, "\n  "), indent(string(outside.stderr)), indent(string(in.stderr)), indent(head(in.stdout, 10)))
	}
	t.step("same in the image: %s (%d lines, %.1fs)", what, bytes.Count(a, []byte("\n")), time.Since(began).Seconds())
	return nil
}

// The times two runs differ by: a RECORD's emitted_at (its last field) and a TRACE's.
var (
	recordTime = regexp.MustCompile(`(?m)^(\{"type":"RECORD",.*,"emitted_at":)\d+(\}\})$`)
	traceTime  = regexp.MustCompile(`(?m)^(\{"type":"TRACE","trace":\{"type":"[A-Z_]+","emitted_at":)\d+`)
)

func normalise(out []byte) []byte {
	out = recordTime.ReplaceAll(out, []byte("${1}EMITTED_AT${2}"))
	return traceTime.ReplaceAll(out, []byte("${1}EMITTED_AT"))
}

// diff shows where the first differing lines of a and b part, or nothing when they are equal.
func diff(a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	la, lb := strings.SplitAfter(string(a), "\n"), strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	shown := 0
	for i := 0; i < max(len(la), len(lb)) && shown < 5; i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x == y {
			continue
		}
		shown++
		at := 0
		for at < min(len(x), len(y)) && x[at] == y[at] {
			at++
		}
		fmt.Fprintf(&out, "    line %d, from byte %d:\n      - %s\n      + %s\n", i+1, at+1, excerpt(x, at), excerpt(y, at))
	}
	if na, nb := strings.Count(string(a), "\n"), strings.Count(string(b), "\n"); na != nb {
		fmt.Fprintf(&out, "    %d lines outside, %d in the container\n", na, nb)
	}
	return out.String()
}

// excerpt is line around byte at, with … where it is cut.
func excerpt(line string, at int) string {
	line = strings.TrimSuffix(line, "\n")
	from, to := max(at-40, 0), min(at+80, len(line))
	if from > to {
		return "(end of the line)"
	}
	s := line[from:to]
	if from > 0 {
		s = "…" + s
	}
	if to < len(line) {
		s += "…"
	}
	return s
}

func head(b []byte, n int) string {
	lines := strings.SplitAfter(string(b), "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}

func indent(s string) string {
	if s == "" {
		return "    (empty)\n"
	}
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}
