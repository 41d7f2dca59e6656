package run

import (
	"io"
	"os"
)

// spool keeps a page's body on disk instead of in memory, for a stream whose extractor
// reads whole files (ResponseToFileExtractor: exports of any size, as the CDK saves them to
// a file): the body goes to a temporary file as it arrives, within the body limit, and the
// decoder reads it back from there, so a read's memory does not grow with the body. The
// file is removed from its folder at once where the system allows it (it lives as long as
// it is open), else when it is closed.
type spool struct {
	f    *os.File
	name string // the file's name while it is still in its folder
}

// take is the request's Sink: each attempt writes the body into a new temporary file.
func (s *spool) take(body io.Reader) (int64, error) {
	s.close()
	f, err := os.CreateTemp("", "connector-page-*")
	if err != nil {
		return 0, err
	}
	s.f = f
	if os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	n, err := io.Copy(f, body)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	return n, err
}

// close drops the body; the spool of a page that has none is fine to close.
func (s *spool) close() {
	if s == nil || s.f == nil {
		return
	}
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
	s.f, s.name = nil, ""
}
