package run

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// Files says where the files of the streams with a file_uploader go: each stream's in a
// folder named after it under Dir. Without it (Options.Files nil) such a stream's records
// are emitted without their files.
type Files struct {
	// Dir is the folder the files go in; it must exist.
	Dir string
	// Builder is the Connector Builder's test read, as the CDK's ConnectorBuilderFileUploader
	// does it: each file is downloaded and dropped (Dir is not used), and its record gets
	// the key source_file_relative_path.
	Builder bool
	// Log, when set, hears the INFO lines the CDK's DefaultFileUploader logs for each file
	// written (the protocol entry point writes them as LOG messages).
	Log func(text string)
}

// upload downloads the file of one record emitted by a stream with a file_uploader, as
// the CDK's DefaultFileUploader does: the download_target_extractor's first value in the
// record is the URL its requester is sent with (variable download_target), and the whole
// body is the file, written under Files.Dir as STREAM/NAME, NAME being what
// filename_extractor renders (a random UUID without one). The body goes to disk as it
// arrives, within the body limit, into a temporary file renamed into place once whole. A
// name that would leave the stream's folder is refused, not written.
func (r *sliceReader) upload(rec record.Record) (*record.FileRef, error) {
	st := r.st
	u := st.s.Files
	data, err := rec.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	value, err := record.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("file_uploader: %w", err)
	}
	g := st.o.globals()
	vars := map[string]any{}
	g.Set(vars)
	p, err := renderPath(u.TargetPath, withParams(vars, u.Parameters))
	if err != nil {
		return nil, fmt.Errorf("file_uploader: download_target_extractor: %w", err)
	}
	targets, err := dpathValues(data, p)
	if err != nil {
		return nil, fmt.Errorf("file_uploader: download_target_extractor: %w", err)
	}
	if len(targets) == 0 {
		return nil, errors.New("file_uploader: the download_target_extractor finds no download target in the record")
	}
	target, ok := targets[0].(string)
	if !ok {
		return nil, fmt.Errorf("file_uploader: the download target must be a string, not %s (the download_target_extractor's first value)", kindOf(targets[0]))
	}
	name := ""
	if u.Filename != nil {
		fv := map[string]any{"record": value}
		g.Set(fv)
		if name, err = u.Filename.Render(withParams(fv, u.Parameters)); err != nil {
			return nil, fmt.Errorf("file_uploader: filename_extractor: %w", err)
		}
	} else {
		name = rand.Text() // 26 random characters, where the CDK takes a random UUID
	}
	rel, err := filePath(st.s.Name, name)
	if err != nil {
		return nil, fmt.Errorf("file_uploader: filename_extractor: %w", err)
	}
	// The request: the requester's templates see download_target, and the slice's extra
	// fields hold it, as in the CDK.
	extra := map[string]any{"download_target": target}
	rv := newSliceVars(extend(slice.New(nil), extra), st.in).vars(g, nil, true)
	rv["download_target"] = target
	q := u.Requester
	b, err := request.FromRequester("file", q, request.NewScope(withParams(rv, q.Parameters), st.o.Client.Redactor))
	if err != nil {
		return nil, fmt.Errorf("file_uploader: %w", err)
	}
	if q.Authenticator != nil {
		a, err := st.o.authFor(q.Authenticator)
		if err != nil {
			return nil, err
		}
		if err := a.Apply(r.ctx, b); err != nil {
			return nil, err
		}
	}
	req, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("file_uploader: %w", err)
	}
	req.Handler, req.Stream = st.fileHandler, st.s.Name
	if st.o.Files.Builder {
		req.Sink = func(body io.Reader) (int64, error) { return io.Copy(io.Discard, body) }
		if _, err := st.send(r.ctx, req); err != nil {
			return nil, fmt.Errorf("file_uploader: %w", err)
		}
		return &record.FileRef{SourceFileRelativePath: rel, FileSizeBytes: -1}, nil // the CDK's NoopFileWriter
	}
	w, err := newFileWriter(st.o.Files.Dir, rel)
	if err != nil {
		return nil, fmt.Errorf("file_uploader: %w", err)
	}
	defer w.abort()
	req.Sink = w.take
	if _, err := st.send(r.ctx, req); err != nil {
		return nil, fmt.Errorf("file_uploader: %w", err)
	}
	if err := w.commit(); err != nil {
		return nil, fmt.Errorf("file_uploader: %w", err)
	}
	abs, err := filepath.Abs(filepath.Join(st.o.Files.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	if log := st.o.Files.Log; log != nil {
		log("File uploaded successfully")
		log("File url: " + abs)
		log("File size: " + template.PyRepr(float64(w.size)/1024) + " KB")
		log("File relative path: " + rel)
	}
	return &record.FileRef{StagingFileURL: abs, SourceFileRelativePath: rel, FileSizeBytes: w.size}, nil
}

// kindOf names the kind of a JSON value, for a message.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case *record.Object, map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	}
	return "a number"
}

// filePath is where the file named name of a stream goes, relative to the files folder:
// STREAM/NAME, with the name's leading slashes dropped and its empty and "." segments
// left out, as the CDK's pathlib joins them. A ".." segment, in the name or in the stream's
// name, would leave the folder: it is refused, as is a name that is left empty.
func filePath(stream, name string) (string, error) {
	var segs []string
	for i, part := range []string{stream, strings.TrimLeft(name, "/")} {
		kept := 0
		for _, seg := range strings.Split(part, "/") {
			switch {
			case seg == "" || seg == ".":
				continue
			case seg == "..":
				what := fmt.Sprintf("the file name %q", name)
				if i == 0 {
					what = fmt.Sprintf("the stream name %q", stream)
				}
				return "", fmt.Errorf("%s has a \"..\" segment, which would leave the stream's folder", what)
			case strings.ContainsRune(seg, 0):
				return "", fmt.Errorf("the file name %q has a NUL character", name)
			}
			segs = append(segs, seg)
			kept++
		}
		if kept == 0 {
			if i == 0 {
				return "", fmt.Errorf("the stream name %q gives no folder to write its files in", stream)
			}
			return "", fmt.Errorf("the file name %q is empty once its slashes and \".\" are left out", name)
		}
	}
	return path.Join(segs...), nil
}

// fileWriter writes a downloaded file: each attempt into a new temporary file beside it,
// the last one renamed into place by commit. Every path is opened within the files folder
// through an os.Root, so that no name and no symbolic link leads out of it.
type fileWriter struct {
	root *os.Root
	rel  string
	tmp  string // the temporary file of the last attempt, "" when none
	size int64
}

func newFileWriter(dir, rel string) (*fileWriter, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
		root.Close()
		return nil, err
	}
	return &fileWriter{root: root, rel: rel}, nil
}

// take is the request's Sink: it writes one attempt's body to a new temporary file.
func (w *fileWriter) take(body io.Reader) (int64, error) {
	w.drop()
	dir, base := path.Split(w.rel)
	w.tmp = dir + "." + base + ".tmp-" + rand.Text()[:12]
	f, err := w.root.OpenFile(w.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		w.tmp = ""
		return 0, err
	}
	n, err := io.Copy(f, body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	w.size = n
	return n, err
}

// commit puts the last attempt's file in place, replacing a file of that name.
func (w *fileWriter) commit() error {
	if w.tmp == "" {
		return errors.New("no body was written")
	}
	if err := w.root.Rename(w.tmp, w.rel); err != nil {
		return err
	}
	w.tmp = ""
	return nil
}

// drop removes the temporary file of an attempt that did not end in a commit.
func (w *fileWriter) drop() {
	if w.tmp != "" {
		w.root.Remove(w.tmp) // at worst a leftover with a .tmp- name
		w.tmp = ""
	}
}

// abort drops what commit did not put in place and closes the folder.
func (w *fileWriter) abort() {
	w.drop()
	w.root.Close()
}
