package cmd

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// fileUploaderDef is definitions/file-uploader.yaml, its filename_extractor replaced by
// name when name is not "".
func fileUploaderDef(t *testing.T, name string) string {
	t.Helper()
	def, err := os.ReadFile(filepath.Join("..", "definitions", "file-uploader.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		return string(def)
	}
	const was = `filename_extractor: "{{ record.id }}/{{ record.file_name }}"`
	if !strings.Contains(string(def), was) {
		t.Fatal("definitions/file-uploader.yaml has no filename_extractor to replace")
	}
	return strings.Replace(string(def), was, "filename_extractor: "+name, 1)
}

// filesIn lists the files under dir as "size path" lines, paths relative to dir.
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%d %s", info.Size(), filepath.ToSlash(rel)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out // in lexical order of the paths, as WalkDir goes
}

// definitions/file-uploader.yaml with `read --files-dir`: the list, then one download per
// record; each file written whole under DIR/attachments/ID/NAME; the envelope format gives
// each record's file_reference.
func TestFileUploaderDefinition(t *testing.T) {
	api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
	dir := filepath.Join(t.TempDir(), "files") // made by read
	res := e2eRead(t, api, fileUploaderDef(t, ""), "", "--files-dir", dir, "--format", "envelope")
	abs, _ := filepath.Abs(dir)
	var want strings.Builder
	for id := 1; id <= demoapi.Attachments; id++ {
		a := demoapi.Attachment("public", id)
		rel := fmt.Sprintf("attachments/%d/%s", id, a.FileName)
		fmt.Fprintf(&want, `{"stream":"attachments","data":{"id":%d,"book_id":%d,"file_name":%q,"content_type":%q,"size":%d,"content_url":"http://API/v1/public/attachments/%d/content"},"file_reference":{"staging_file_url":%q,"source_file_relative_path":%q,"file_size_bytes":%d}}`+"\n",
			id, a.BookID, a.FileName, a.ContentType, a.Size, id, abs+"/"+rel, rel, a.Size)
	}
	res.Stdout = strings.ReplaceAll(res.Stdout, api.URL, "http://API")
	e2eCheckResult(t, api, res, 0, want.String(), "")
	e2eCheckRequests(t, api,
		e2eRequest{Method: "GET", URL: "/v1/public/attachments"},
		e2eRequest{Method: "GET", URL: "/v1/public/attachments/1/content"},
		e2eRequest{Method: "GET", URL: "/v1/public/attachments/2/content"},
		e2eRequest{Method: "GET", URL: "/v1/public/attachments/3/content"})
	got := filesIn(t, dir)
	wantFiles := []string{"52 attachments/1/cover.txt", "26624 attachments/2/chapter 1.txt", "7 attachments/3/notes.csv"}
	if fmt.Sprint(got) != fmt.Sprint(wantFiles) {
		t.Errorf("files %q, want %q (no temporary file left)", got, wantFiles)
	}
	for id := 1; id <= demoapi.Attachments; id++ {
		a := demoapi.Attachment("public", id)
		b, err := os.ReadFile(filepath.Join(dir, "attachments", fmt.Sprint(id), a.FileName))
		if err != nil || string(b) != string(demoapi.AttachmentContent(id)) {
			t.Errorf("attachment %d: content differs (%v)", id, err)
		}
	}
}

// Without --files-dir a stream with a file_uploader is refused before any request; the
// records format writes the records alone.
func TestFileUploaderFilesDir(t *testing.T) {
	api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
	res := e2eRead(t, api, fileUploaderDef(t, ""), "")
	e2eCheckResult(t, api, res, 2, "", "error: stream attachments has a file_uploader, which downloads a file for each record: --files-dir DIR says where they go (a folder per stream in DIR); or leave the stream out with --stream\n")
	e2eCheckRequests(t, api)

	dir := t.TempDir()
	res = e2eRead(t, api, fileUploaderDef(t, ""), "", "--files-dir", dir, "--max-records", "1")
	want := `{"id":1,"book_id":10,"file_name":"cover.txt","content_type":"text/plain","size":52,"content_url":"` + api.URL + `/v1/public/attachments/1/content"}` + "\n"
	if res.Code != 0 || res.Stdout != want {
		t.Errorf("exit %d, stdout %s, stderr %s", res.Code, res.Stdout, res.Stderr)
	}
	if got := filesIn(t, dir); fmt.Sprint(got) != "[52 attachments/1/cover.txt]" {
		t.Errorf("files %q", got)
	}
}

// A file name that would leave the stream's folder is refused before its download, and
// nothing is written outside --files-dir; an absolute name is read from the folder, as the
// CDK strips its leading slashes. A symbolic link inside the folder that leads out of it
// is not followed. (The CDK writes "../../x" two folders above its staging folder.)
func TestFileUploaderHostileNames(t *testing.T) {
	tests := []struct {
		name, filename string
		code           int
		files          []string
		stderr         string
	}{
		{"a name climbing out", `"../../{{ record.file_name }}"`, 1, nil,
			`error: stream attachments, page 1: file_uploader: filename_extractor: the file name "../../cover.txt" has a ".." segment, which would leave the stream's folder (0 records written before the failure)` + "\n"},
		{"a name climbing out midway", `"{{ record.id }}/../../../x"`, 1, nil,
			`error: stream attachments, page 1: file_uploader: filename_extractor: the file name "1/../../../x" has a ".." segment, which would leave the stream's folder (0 records written before the failure)` + "\n"},
		{"an empty name", `"{{ '' }}"`, 1, nil,
			`error: stream attachments, page 1: file_uploader: filename_extractor: the file name "" is empty once its slashes and "." are left out (0 records written before the failure)` + "\n"},
		{"an absolute name stays inside", `"/etc/{{ record.id }}.txt"`, 0,
			[]string{"52 attachments/etc/1.txt", "26624 attachments/etc/2.txt", "7 attachments/etc/3.txt"}, ""},
		{"dots and doubled slashes are dropped, as pathlib does", `"./{{ record.id }}//{{ record.file_name }}/"`, 0,
			[]string{"52 attachments/1/cover.txt", "26624 attachments/2/chapter 1.txt", "7 attachments/3/notes.csv"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
			top := t.TempDir()
			dir := filepath.Join(top, "a", "b", "files")
			res := e2eRead(t, api, fileUploaderDef(t, tt.filename), "", "--files-dir", dir)
			if res.Code != tt.code || e2eScrub(res.Stderr, api) != tt.stderr {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", res.Code, res.Stderr, tt.code, tt.stderr)
			}
			if got := filesIn(t, top); fmt.Sprint(got) != fmt.Sprint(prefixed("a/b/files/", tt.files)) {
				t.Errorf("files %q, want %q", got, prefixed("a/b/files/", tt.files))
			}
			if tt.code != 0 && len(api.requests()) != 1 {
				t.Errorf("%d requests, want only the list (no download for a refused name)", len(api.requests()))
			}
		})
	}
	t.Run("a symbolic link leading out is not followed", func(t *testing.T) {
		api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
		top := t.TempDir()
		dir, outside := filepath.Join(top, "files"), filepath.Join(top, "outside")
		os.MkdirAll(dir, 0o755)
		os.MkdirAll(outside, 0o755)
		if err := os.Symlink(outside, filepath.Join(dir, "attachments")); err != nil {
			t.Skip(err)
		}
		res := e2eRead(t, api, fileUploaderDef(t, ""), "", "--files-dir", dir)
		if res.Code != 1 || !strings.Contains(res.Stderr, "path escapes from parent") {
			t.Errorf("exit %d, stderr %s", res.Code, res.Stderr)
		}
		if got := filesIn(t, outside); len(got) != 0 {
			t.Errorf("files written outside: %q", got)
		}
	})
}

func prefixed(p string, names []string) []string {
	out := []string{}
	for _, n := range names {
		size, path, _ := strings.Cut(n, " ")
		out = append(out, size+" "+p+path)
	}
	return out
}

// A download over --max-body fails at the limit, unretried, and leaves no file; a body cut
// short is downloaded again, and only the whole one is put in place.
func TestFileUploaderLimitsAndRetries(t *testing.T) {
	t.Run("a file over --max-body", func(t *testing.T) {
		api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
		dir := t.TempDir()
		res := e2eRead(t, api, fileUploaderDef(t, ""), "", "--files-dir", dir, "--max-body", "1KiB")
		want := `{"id":1,"book_id":10,"file_name":"cover.txt","content_type":"text/plain","size":52,"content_url":"http://API/v1/public/attachments/1/content"}` + "\n"
		res.Stdout = strings.ReplaceAll(res.Stdout, api.URL, "http://API")
		e2eCheckResult(t, api, res, 1, want,
			"error: stream attachments, page 1: file_uploader: GET http://API/v1/public/attachments/2/content answered 200 with a body larger than 1 KiB (--max-body raises the limit) (1 record written before the failure)\n")
		if got := filesIn(t, dir); fmt.Sprint(got) != "[52 attachments/1/cover.txt]" {
			t.Errorf("files %q", got)
		}
		if n := len(api.requests()); n != 3 {
			t.Errorf("%d requests, want 3 (the list, two downloads, no retry)", n)
		}
	})
	t.Run("a body cut short is downloaded again", func(t *testing.T) {
		demo := demoapi.Handler(demoapi.Options{})
		cut := 0
		api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/public/attachments/2/content" && cut == 0 {
				cut++
				w.Header().Set("Content-Length", "26624")
				w.Write([]byte("partial"))
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
			demo.ServeHTTP(w, r)
		})
		dir := t.TempDir()
		env := testEnv(nil)
		env.Sleep = func(context.Context, time.Duration) error { return nil }
		defPath := writeFile(t, "def.yaml", fileUploaderDef(t, ""))
		vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
		res := runCLIEnv(t, env, "", "read", defPath, "--testing-values", vals, "--files-dir", dir, "--quiet")
		if res.Code != 0 {
			t.Fatalf("exit %d: %s", res.Code, res.Stderr)
		}
		if got := filesIn(t, dir); fmt.Sprint(got) != "[52 attachments/1/cover.txt 26624 attachments/2/chapter 1.txt 7 attachments/3/notes.csv]" {
			t.Errorf("files %q", got)
		}
		if n := len(api.requests()); n != 5 {
			t.Errorf("%d requests, want 5 (the list, three downloads, the second one twice)", n)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "attachments", "2", "chapter 1.txt"))
		if string(b) != string(demoapi.AttachmentContent(2)) {
			t.Error("attachment 2 is not the whole body of the second attempt")
		}
	})
}

// The protocol entry point against the CDK on the same input (testdata/file-uploader-cdk,
// README.md there): discover says is_file_based, read sends the same requests and writes
// the same RECORD messages (file_reference included), the same LOG lines for each file, and
// the same files in the folder that AIRBYTE_STAGING_DIRECTORY names.
func TestFileUploaderCDKGolden(t *testing.T) {
	golden := filepath.Join("testdata", "file-uploader-cdk")
	readGolden := func(name string) string {
		b, err := os.ReadFile(filepath.Join(golden, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
	staging := t.TempDir()
	env := testEnv(map[string]string{"AIRBYTE_STAGING_DIRECTORY": staging})
	defPath := writeFile(t, "def.yaml", fileUploaderDef(t, ""))
	config := writeFile(t, "config.json", `{"base_url": "`+api.URL+`"}`)

	res := runCLIEnv(t, env, "", "airbyte", "discover", "--config", config, "--manifest-path", defPath)
	if got := protocolLines(res.Stdout, "CATALOG"); got != readGolden("discover.out") {
		t.Errorf("catalog:\n%s\nthe CDK's:\n%s", got, readGolden("discover.out"))
	}
	catalog := writeFile(t, "catalog.json", `{"streams":[{"stream":{"name":"attachments","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`)
	res = runCLIEnv(t, env, "", "airbyte", "read", "--config", config, "--catalog", catalog, "--manifest-path", defPath)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stdout)
	}
	scrub := func(s string) string {
		s = strings.ReplaceAll(s, api.URL, "http://API")
		s = strings.ReplaceAll(s, staging, "STAGING")
		return regexp.MustCompile(`"emitted_at":[0-9.]+`).ReplaceAllString(s, `"emitted_at":0`)
	}
	if got, want := protocolLines(scrub(res.Stdout), "RECORD"), protocolLines(readGolden("read.out"), "RECORD"); got != want {
		t.Errorf("records:\n%s\nthe CDK's:\n%s", got, want)
	}
	fileLogs := func(out string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(protocolLines(out, "LOG"), "\n") {
			if strings.Contains(l, `"message":"File `) {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	if got, want := fileLogs(scrub(res.Stdout)), fileLogs(readGolden("read.out")); got != want || want == "" {
		t.Errorf("the LOG lines of the files:\n%s\nthe CDK's:\n%s", got, want)
	}
	var reqs []string // discover sends none
	for _, r := range api.requests() {
		reqs = append(reqs, r.Method+" "+r.URL+" 200")
	}
	if got := strings.Join(reqs, "\n") + "\n"; got != readGolden("requests.txt") {
		t.Errorf("requests:\n%s\nthe CDK's:\n%s", got, readGolden("requests.txt"))
	}
	var files []string
	for _, f := range filesIn(t, staging) {
		size, rel, _ := strings.Cut(f, " ")
		b, _ := os.ReadFile(filepath.Join(staging, rel))
		files = append(files, fmt.Sprintf("%s %x ./%s", size, sha256.Sum256(b), rel))
	}
	if got := strings.Join(files, "\n") + "\n"; got != readGolden("files.txt") {
		t.Errorf("files:\n%s\nthe CDK's:\n%s", got, readGolden("files.txt"))
	}
}

// protocolLines are the lines of out of one message type, in order.
func protocolLines(out, typ string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"type":"`+typ+`"`) {
			b.WriteString(sc.Text() + "\n")
		}
	}
	return b.String()
}

// A read recorded with its downloads replays with them: `test` downloads the files again,
// from the recording, into a folder of its own.
func TestFileUploaderReplay(t *testing.T) {
	api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
	dir := t.TempDir()
	har, expect := filepath.Join(dir, "f.har"), filepath.Join(dir, "f.jsonl")
	res := e2eRead(t, api, fileUploaderDef(t, ""), "", "--files-dir", filepath.Join(dir, "files"), "--record", har)
	if res.Code != 0 {
		t.Fatalf("read: exit %d: %s", res.Code, res.Stderr)
	}
	if err := os.WriteFile(expect, []byte(res.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	def := writeFile(t, "def.yaml", fileUploaderDef(t, ""))
	res = runCLI(t, "", "test", def, "--replay", har, "--expect", expect)
	if res.Code != 0 || !strings.Contains(res.Stdout, "PASS") || !strings.Contains(res.Stdout, "3 records as expected") || !strings.Contains(res.Stdout, "4 requests replayed") {
		t.Errorf("test: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// The Connector Builder's test read (paginate-trace --format builder, as serve and dev) of a
// stream with a file_uploader, against the CDK's (testdata/file-uploader-cdk/builder.json):
// each file is requested and dropped, its record gets source_file_relative_path, and the
// downloads are no auxiliary requests.
func TestFileUploaderBuilderCDKGolden(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "file-uploader-cdk", "builder.json"))
	if err != nil {
		t.Fatal(err)
	}
	api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
	defPath := writeFile(t, "def.yaml", fileUploaderDef(t, ""))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	res := runCLI(t, "", "paginate-trace", defPath, "--testing-values", vals, "--format", "builder", "--stream", "attachments")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	var sr struct {
		Slices []struct {
			Pages []struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
				Records []json.RawMessage `json:"records"`
			} `json:"pages"`
		} `json:"slices"`
		Aux []json.RawMessage `json:"auxiliary_requests"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &sr); err != nil {
		t.Fatal(err)
	}
	type page struct {
		URL     string            `json:"url"`
		Records []json.RawMessage `json:"records"`
	}
	got := struct {
		Pages []page            `json:"pages"`
		Aux   []json.RawMessage `json:"auxiliary_requests"`
	}{Aux: sr.Aux}
	for _, s := range sr.Slices {
		for _, p := range s.Pages {
			got.Pages = append(got.Pages, page{URL: p.Request.URL, Records: p.Records})
		}
	}
	if got.Aux == nil {
		got.Aux = []json.RawMessage{}
	}
	b, _ := json.MarshalIndent(got, "", " ")
	if g := strings.ReplaceAll(string(b), api.URL, "http://API") + "\n"; !jsonEqual(t, g, string(want)) {
		t.Errorf("test read:\n%s\nthe CDK's:\n%s", g, want)
	}
	if n := len(api.requests()); n != 4 {
		t.Errorf("%d requests, want 4 (the list and three downloads)", n)
	}
}

// A record without a download target, or whose target is not a string, fails the stream,
// as the CDK's ValueError does, after the records before it are written.
func TestFileUploaderBadTarget(t *testing.T) {
	for _, tt := range []struct{ path, stderr string }{
		{"[missing]", "error: stream attachments, page 1: file_uploader: the download_target_extractor finds no download target in the record (0 records written before the failure)\n"},
		{"[id]", "error: stream attachments, page 1: file_uploader: the download target must be a string, not a number (the download_target_extractor's first value) (0 records written before the failure)\n"},
	} {
		api := newRecorder(t, demoapi.Handler(demoapi.Options{}).ServeHTTP)
		def := strings.Replace(fileUploaderDef(t, ""), "field_path:\n            - content_url", "field_path: "+tt.path, 1)
		res := e2eRead(t, api, def, "", "--files-dir", t.TempDir())
		e2eCheckResult(t, api, res, 1, "", tt.stderr)
		if n := len(api.requests()); n != 1 {
			t.Errorf("%s: %d requests, want the list only", tt.path, n)
		}
	}
}
