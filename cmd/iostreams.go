package cmd

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/fatih/color"
	"golang.org/x/term"

	"connector/pkg/redact"
)

// ioStreams are the process streams of one command, with what the command knows about them.
// Everything written to Err passes through the redactor; Out carries only the command's
// product.
type ioStreams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	redactor *redact.Redactor
	outTTY   bool
	errTTY   bool
	colorOut bool
	colorErr bool
	// noColorEnv says NO_COLOR is set to a value that is not empty in the run's environment.
	noColorEnv bool
}

func newIOStreams(in io.Reader, out, errw io.Writer) *ioStreams {
	r := &redact.Redactor{}
	s := &ioStreams{In: in, Out: out, redactor: r, outTTY: isTerminal(out), errTTY: isTerminal(errw)}
	s.Err = &redactingWriter{w: errw, r: r}
	return s
}

// outWidth is the width of the terminal stdout is, 0 when it is none.
func (s *ioStreams) outWidth() int {
	f, ok := s.Out.(*os.File)
	if !ok || !s.outTTY {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// setColor decides colour: only on a terminal, only when NO_COLOR is unset or empty, and not
// when --no-color was given.
func (s *ioStreams) setColor(allowed bool) {
	allowed = allowed && !s.noColorEnv
	s.colorOut = allowed && s.outTTY
	s.colorErr = allowed && s.errTTY
}

// paint returns a colouring function for the given stream.
func (s *ioStreams) paint(toErr bool, attrs ...color.Attribute) func(string) string {
	enabled := s.colorOut
	if toErr {
		enabled = s.colorErr
	}
	c := color.New(attrs...)
	if enabled {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return func(text string) string { return c.Sprint(text) }
}

func (s *ioStreams) printError(err error) {
	red := s.paint(true, color.FgRed, color.Bold)
	clear := ""
	if s.errTTY {
		clear = "\r\033[K" // a retry's updating line (notices) gives way
	}
	io.WriteString(s.Err, clear+red("error:")+" "+err.Error()+"\n")
}

// redactingWriter masks secrets in everything written to it. It buffers up to a newline so
// a secret split across two writes is still caught.
type redactingWriter struct {
	mu  sync.Mutex
	w   io.Writer
	r   *redact.Redactor
	buf []byte
}

func (rw *redactingWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.buf = append(rw.buf, p...)
	i := bytes.LastIndexAny(rw.buf, "\n\r")
	if i < 0 {
		return len(p), nil
	}
	chunk := rw.buf[:i+1]
	if _, err := io.WriteString(rw.w, rw.r.String(string(chunk))); err != nil {
		return 0, err
	}
	rw.buf = append(rw.buf[:0], rw.buf[i+1:]...)
	return len(p), nil
}

// Flush writes out a last line without a newline.
func (rw *redactingWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(rw.w, rw.r.String(string(rw.buf)))
	rw.buf = rw.buf[:0]
	return err
}
