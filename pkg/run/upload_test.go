package run

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// The file uploader read against a local API: the list of attachments, then a download
// per record; the exact requests, the records with their file references, the files on
// disk, and the errors of a target or a name the uploader refuses.

// fileAPI serves GET /attachments (the body given, "{base}" replaced by the API's URL)
// and GET /content/NAME (the file named NAME of files). It writes down each request as
// "METHOD /path" (and " auth: VALUE" when one is sent). A download of a name in cut is
// answered with a body shorter than its Content-Length the first time it is asked for.
type fileAPI struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func serveFiles(t *testing.T, list string, files map[string]string, cut ...string) *fileAPI {
	t.Helper()
	a := &fileAPI{}
	cuts := map[string]bool{}
	for _, c := range cut {
		cuts[c] = true
	}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method + " " + r.URL.RequestURI()
		if v := r.Header.Get("Authorization"); v != "" {
			line += " auth: " + v
		}
		a.mu.Lock()
		a.got = append(a.got, line)
		first := cuts[r.URL.Path]
		delete(cuts, r.URL.Path)
		a.mu.Unlock()
		if r.URL.Path == "/attachments" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, strings.ReplaceAll(list, "{base}", "http://"+r.Host))
			return
		}
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/content/")]
		if !ok || !strings.HasPrefix(r.URL.Path, "/content/") {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"no such file"}`)
			return
		}
		if first {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			fmt.Fprint(w, body[:len(body)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection is cut mid-body
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *fileAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// uploaderDef is a stream "attachments" whose records (under "data" at /attachments) each
// name their file's URL in content_url; uploader is the file_uploader's remaining lines,
// at column 8 (filename_extractor, an authenticator, or another download_target_extractor).
func uploaderDef(uploader string) string {
	return `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: attachments
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: /attachments, http_method: GET}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
    file_uploader:
      type: FileUploader
      requester: {type: HttpRequester, url_base: "{{ download_target }}", http_method: GET}
` + uploader
}

const targetExtractor = "      download_target_extractor: {type: DpathExtractor, field_path: [content_url]}\n"

// fileEmitter keeps each record as "JSON" followed by its file reference, if any:
// " -> RELATIVE PATH (SIZE bytes) at STAGING URL".
type fileEmitter struct{ lines []string }

func (e *fileEmitter) Records(stream string, recs []record.Record) error {
	for _, r := range recs {
		b, err := r.AppendJSON(nil)
		if err != nil {
			return err
		}
		line := string(b)
		if f := r.File; f != nil {
			line += fmt.Sprintf(" -> %s (%d bytes) at %q", f.SourceFileRelativePath, f.FileSizeBytes, f.StagingFileURL)
		}
		e.lines = append(e.lines, line)
	}
	return nil
}

func (e *fileEmitter) EndPage() error { return nil }

// uploadRead reads the stream attachments of def against api, the files going where files
// says; set, when given, changes the options before the read.
func uploadRead(t *testing.T, api *fileAPI, def string, files *Files, set func(*Options)) ([]string, Result) {
	t.Helper()
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	cfg := map[string]any{"base_url": api.URL, "token": "s3cret"}
	client := &httpx.Client{HTTP: &http.Client{}, Redactor: &redact.Redactor{},
		Sleep: func(context.Context, time.Duration) error { return nil }}
	a, err := auth.New(d.Authenticator, auth.Env{Globals: template.Globals{Config: cfg}, Client: client, Redactor: client.Redactor, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	out := &fileEmitter{}
	o := &Options{Config: cfg, Auth: a, Client: client, Out: out, Files: files}
	if set != nil {
		set(o)
	}
	res := Stream(context.Background(), o, d.Stream("attachments"))
	return out.lines, res
}

// treeOf lists the files under dir as "PATH: CONTENT", paths relative to dir, temporary
// files included.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel)+": "+string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const twoAttachments = `{"data":[
  {"id":1,"name":"cover.txt","content_url":"{base}/content/a"},
  {"id":2,"name":"notes/ch 1.txt","content_url":"{base}/content/b"}]}`

var twoFiles = map[string]string{"a": "the cover", "b": "chapter one, all of it"}

// Each record's file is downloaded before the record is emitted, written as
// STREAM/NAME under the folder, and the record carries where it went and its size.
func TestUploaderWritesEachFile(t *testing.T) {
	api := serveFiles(t, twoAttachments, twoFiles)
	dir := t.TempDir()
	recs, res := uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "{{ record.id }}/{{ record.name }}"`+"\n"), &Files{Dir: dir}, nil)
	checkResult(t, res, 1, 1, 2, "")
	abs, _ := filepath.Abs(dir)
	checkLines(t, "records", recs, []string{
		fmt.Sprintf(`{"id":1,"name":"cover.txt","content_url":"%s/content/a"} -> attachments/1/cover.txt (9 bytes) at %q`, api.URL, abs+"/attachments/1/cover.txt"),
		fmt.Sprintf(`{"id":2,"name":"notes/ch 1.txt","content_url":"%s/content/b"} -> attachments/2/notes/ch 1.txt (22 bytes) at %q`, api.URL, abs+"/attachments/2/notes/ch 1.txt"),
	})
	checkLines(t, "requests", api.requests(), []string{"GET /attachments", "GET /content/a", "GET /content/b"})
	checkLines(t, "files", treeOf(t, dir), []string{
		"attachments/1/cover.txt: the cover",
		"attachments/2/notes/ch 1.txt: chapter one, all of it",
	})
}

// Without a filename_extractor each file gets a random name of 26 characters.
func TestUploaderRandomNames(t *testing.T) {
	api := serveFiles(t, twoAttachments, twoFiles)
	dir := t.TempDir()
	recs, res := uploadRead(t, api, uploaderDef(targetExtractor), &Files{Dir: dir}, nil)
	checkResult(t, res, 1, 1, 2, "")
	files := treeOf(t, dir)
	name := regexp.MustCompile(`^attachments/[A-Z2-7]{26}: `)
	if len(files) != 2 || !name.MatchString(files[0]) || !name.MatchString(files[1]) || files[0][:38] == files[1][:38] {
		t.Fatalf("files %q, want two of random names", files)
	}
	got := map[string]bool{files[0][40:]: true, files[1][40:]: true}
	if !got["the cover"] || !got["chapter one, all of it"] {
		t.Errorf("files %q", files)
	}
	for _, r := range recs {
		rel := r[strings.Index(r, " -> ")+4:][:38]
		if !strings.HasPrefix(files[0], rel) && !strings.HasPrefix(files[1], rel) {
			t.Errorf("record %s names no file written", r)
		}
	}
}

// The Builder's test read downloads each file and drops it: nothing is written, and each
// record says where its file would have gone, with no size and no staging path.
func TestUploaderBuilderDropsTheFiles(t *testing.T) {
	api := serveFiles(t, twoAttachments, twoFiles)
	dir := t.TempDir()
	recs, res := uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "{{ record.name }}"`+"\n"), &Files{Dir: dir, Builder: true}, nil)
	checkResult(t, res, 1, 1, 2, "")
	checkLines(t, "records", recs, []string{
		fmt.Sprintf(`{"id":1,"name":"cover.txt","content_url":"%s/content/a","source_file_relative_path":"attachments/cover.txt"} -> attachments/cover.txt (-1 bytes) at ""`, api.URL),
		fmt.Sprintf(`{"id":2,"name":"notes/ch 1.txt","content_url":"%s/content/b","source_file_relative_path":"attachments/notes/ch 1.txt"} -> attachments/notes/ch 1.txt (-1 bytes) at ""`, api.URL),
	})
	checkLines(t, "requests", api.requests(), []string{"GET /attachments", "GET /content/a", "GET /content/b"})
	if files := treeOf(t, dir); len(files) != 0 {
		t.Errorf("files written: %q", files)
	}
	// A failed download fails the Builder's read too, after the records before it.
	api = serveFiles(t, strings.Replace(twoAttachments, "/content/b", "/content/gone", 1), twoFiles)
	recs, res = uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "{{ record.name }}"`+"\n"), &Files{Dir: dir, Builder: true},
		func(o *Options) { o.Client.MaxRetries = -1 })
	if len(recs) != 1 || res.Err == nil || res.Err.Error() != "stream attachments, page 1: file_uploader: 404 Not Found from GET "+api.URL+`/content/gone: {"error":"no such file"}` {
		t.Errorf("records %q, error %v", recs, res.Err)
	}
}

// A download cut short is tried again, and only the whole body of the last attempt is put
// in place: no temporary file of the first attempt is left.
func TestUploaderDownloadCutShort(t *testing.T) {
	api := serveFiles(t, twoAttachments, twoFiles, "/content/b")
	dir := t.TempDir()
	recs, res := uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "{{ record.id }}.txt"`+"\n"), &Files{Dir: dir}, nil)
	checkResult(t, res, 1, 1, 2, "")
	if len(recs) != 2 || !strings.Contains(recs[1], " -> attachments/2.txt (22 bytes)") {
		t.Errorf("records %q", recs)
	}
	checkLines(t, "requests", api.requests(), []string{"GET /attachments", "GET /content/a", "GET /content/b", "GET /content/b"})
	checkLines(t, "files", treeOf(t, dir), []string{"attachments/1.txt: the cover", "attachments/2.txt: chapter one, all of it"})
}

// A file over the body limit fails the stream at once, unretried, and leaves nothing; the
// file before it stays, and its record is written.
func TestUploaderBodyLimit(t *testing.T) {
	api := serveFiles(t, twoAttachments, map[string]string{"a": "the cover", "b": strings.Repeat("x", 1025)})
	dir := t.TempDir()
	recs, res := uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "{{ record.id }}.txt"`+"\n"), &Files{Dir: dir},
		func(o *Options) { o.Client.MaxBody = 1024 })
	checkResult(t, res, 1, 1, 1, "stream attachments, page 1: file_uploader: GET "+api.URL+"/content/b answered 200 with a body larger than 1 KiB (--max-body raises the limit)")
	if len(recs) != 1 || !strings.Contains(recs[0], " -> attachments/1.txt (9 bytes)") {
		t.Errorf("records %q", recs)
	}
	checkLines(t, "requests", api.requests(), []string{"GET /attachments", "GET /content/a", "GET /content/b"})
	checkLines(t, "files", treeOf(t, dir), []string{"attachments/1.txt: the cover"})
}

// A name climbing out of the stream's folder is refused before its download, and nothing
// is written anywhere.
func TestUploaderNameClimbingOut(t *testing.T) {
	api := serveFiles(t, twoAttachments, twoFiles)
	top := t.TempDir()
	dir := filepath.Join(top, "files")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	recs, res := uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "../{{ record.name }}"`+"\n"), &Files{Dir: dir}, nil)
	checkResult(t, res, 1, 1, 0, `stream attachments, page 1: file_uploader: filename_extractor: the file name "../cover.txt" has a ".." segment, which would leave the stream's folder`)
	if len(recs) != 0 {
		t.Errorf("records %q", recs)
	}
	checkLines(t, "requests", api.requests(), []string{"GET /attachments"})
	if files := treeOf(t, top); len(files) != 0 {
		t.Errorf("files written: %q", files)
	}
}

// The download target must be a string: each other kind is named; a record without one,
// or a folder that does not exist, fails the stream before any download.
func TestUploaderRefusedTargets(t *testing.T) {
	tests := []struct{ url, err string }{
		{`{"x":1}`, "the download target must be a string, not an object"},
		{`[[1]]`, "the download target must be a string, not a list"},
		{`[1]`, "the download target must be a string, not a number"}, // a list's items are the values
		{`true`, "the download target must be a string, not a boolean"},
		{`4.5`, "the download target must be a string, not a number"},
	}
	for _, tt := range tests {
		api := serveFiles(t, `{"data":[{"id":1,"content_url":`+tt.url+`}]}`, twoFiles)
		dir := t.TempDir()
		_, res := uploadRead(t, api, uploaderDef(targetExtractor), &Files{Dir: dir}, nil)
		checkResult(t, res, 1, 1, 0, "stream attachments, page 1: file_uploader: "+tt.err+" (the download_target_extractor's first value)")
		checkLines(t, tt.url+": requests", api.requests(), []string{"GET /attachments"})
	}
	if got := kindOf("x"); got != "a string" {
		t.Errorf("kindOf(string) = %q", got)
	}
	if got := kindOf(map[string]any{}); got != "an object" {
		t.Errorf("kindOf(map) = %q", got)
	}

	for _, rec := range []string{`{"id":1}`, `{"id":1,"content_url":null}`, `{"id":1,"content_url":[]}`} {
		api := serveFiles(t, `{"data":[`+rec+`]}`, twoFiles)
		_, res := uploadRead(t, api, uploaderDef(targetExtractor), &Files{Dir: t.TempDir()}, nil)
		checkResult(t, res, 1, 1, 0, "stream attachments, page 1: file_uploader: the download_target_extractor finds no download target in the record")
	}

	api := serveFiles(t, twoAttachments, twoFiles)
	missing := filepath.Join(t.TempDir(), "nowhere")
	_, res := uploadRead(t, api, uploaderDef(targetExtractor), &Files{Dir: missing}, nil)
	checkResult(t, res, 1, 1, 0, "stream attachments, page 1: file_uploader: open "+missing+": no such file or directory")
	checkLines(t, "requests", api.requests(), []string{"GET /attachments"})
	if _, err := os.Stat(missing); err == nil {
		t.Error("the missing folder was made")
	}
}

// A download that fails (a 404, not retried by the default error handler) fails the stream
// and leaves no temporary file; a filename_extractor that cannot be rendered fails it
// before the download.
func TestUploaderFailedDownload(t *testing.T) {
	api := serveFiles(t, strings.Replace(twoAttachments, "/content/b", "/content/gone", 1), twoFiles)
	dir := t.TempDir()
	recs, res := uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "{{ record.id }}.txt"`+"\n"), &Files{Dir: dir}, nil)
	if res.Err == nil || res.Err.Error() != "stream attachments, page 1: file_uploader: 404 Not Found from GET "+api.URL+`/content/gone: {"error":"no such file"}` {
		t.Errorf("error %v", res.Err)
	}
	if len(recs) != 1 {
		t.Errorf("records %q, want the first one", recs)
	}
	checkLines(t, "files", treeOf(t, dir), []string{"attachments/1.txt: the cover"})

	api = serveFiles(t, twoAttachments, twoFiles)
	_, res = uploadRead(t, api, uploaderDef(targetExtractor+`      filename_extractor: "{{ record.id / 0 }}"`+"\n"), &Files{Dir: dir}, nil)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "file_uploader: filename_extractor: ") {
		t.Errorf("error %v", res.Err)
	}
	checkLines(t, "requests", api.requests(), []string{"GET /attachments"})
}

// The download's requester sends its authenticator's credentials, as AuthFor makes them.
func TestUploaderAuthenticator(t *testing.T) {
	api := serveFiles(t, twoAttachments, twoFiles)
	dir := t.TempDir()
	const bearer = `authenticator: {type: BearerAuthenticator, api_token: "{{ config['token'] }}"}}`
	def := uploaderDef(targetExtractor + `      filename_extractor: "{{ record.id }}"` + "\n")
	def = strings.Replace(def, `path: /attachments, http_method: GET}`, `path: /attachments, http_method: GET, `+bearer, 1)
	def = strings.Replace(def, `url_base: "{{ download_target }}", http_method: GET}`, `url_base: "{{ download_target }}", http_method: GET, `+bearer, 1)
	var asked []string
	_, res := uploadRead(t, api, def, &Files{Dir: dir}, func(o *Options) {
		o.AuthFor = func(m *manifest.Authenticator) (auth.Authenticator, error) {
			asked = append(asked, m.Type)
			return auth.New(m, auth.Env{Globals: template.Globals{Config: o.Config}, Client: o.Client, Redactor: o.Client.Redactor, Now: time.Now})
		}
	})
	checkResult(t, res, 1, 1, 2, "")
	checkLines(t, "requests", api.requests(), []string{"GET /attachments auth: Bearer s3cret", "GET /content/a auth: Bearer s3cret", "GET /content/b auth: Bearer s3cret"})
	if fmt.Sprint(asked) != "[BearerAuthenticator BearerAuthenticator BearerAuthenticator]" {
		t.Errorf("AuthFor asked for %q", asked)
	}
	checkLines(t, "files", treeOf(t, dir), []string{"attachments/1: the cover", "attachments/2: chapter one, all of it"})

	// An authenticator that cannot be made for the downloads fails the stream before the
	// first of them.
	api = serveFiles(t, twoAttachments, twoFiles)
	_, res = uploadRead(t, api, def, &Files{Dir: dir}, func(o *Options) {
		n := 0
		o.AuthFor = func(m *manifest.Authenticator) (auth.Authenticator, error) {
			if n++; n > 1 {
				return nil, fmt.Errorf("no token for the downloads")
			}
			return auth.New(m, auth.Env{Globals: template.Globals{Config: o.Config}, Client: o.Client, Redactor: o.Client.Redactor, Now: time.Now})
		}
	})
	checkResult(t, res, 1, 1, 0, "stream attachments, page 1: no token for the downloads")
	checkLines(t, "requests", api.requests(), []string{"GET /attachments auth: Bearer s3cret"})
}
