package decode

import (
	"bufio"
	"bytes"
	"connector/pkg/manifest"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// lines reads a body line by line: JsonlDecoder (one JSON value a line, lines split at
// "\n", blank lines skipped) or IterableDecoder (one {"record": line} a line, lines split at
// "\n", "\r" or "\r\n" as requests' iter_lines does, blank lines kept).
type lines struct {
	b         []byte        // the rest of the body, when it is in memory
	r         *bufio.Reader // or the stream
	text      bool          // IterableDecoder
	n         int           // the number of the line last read
	pendingCR bool          // text: the last line ended at "\r", so a "\n" first is its end
	buf       []byte
}

func newLines(in input, text bool) *lines {
	l := &lines{b: in.b, text: text}
	if in.r != nil {
		l.r = bufio.NewReaderSize(in.r, 64<<10)
	}
	return l
}

func (l *lines) where() string { return fmt.Sprintf("line %d", l.n) }

func (l *lines) next() ([]byte, error) {
	for {
		l.n++
		line, err := l.line()
		if err != nil {
			return nil, err
		}
		if !l.text {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return line, nil
		}
		if !utf8.Valid(line) {
			return nil, errors.New("the line is not UTF-8 text")
		}
		out := append(make([]byte, 0, len(line)+14), `{"record":`...)
		out = appendString(out, string(line))
		return append(out, '}'), nil
	}
}

// line returns the next line without its end, io.EOF after the last. A body that ends with
// a line end has no empty line after it.
func (l *lines) line() ([]byte, error) {
	if l.r == nil {
		if l.text && l.pendingCR && len(l.b) > 0 && l.b[0] == '\n' {
			l.b = l.b[1:]
		}
		l.pendingCR = false
		if len(l.b) == 0 {
			return nil, io.EOF
		}
		i := l.end(l.b)
		if i < 0 {
			line := l.b
			l.b = nil
			return line, nil
		}
		line := l.b[:i]
		l.pendingCR = l.b[i] == '\r'
		l.b = l.b[i+1:]
		return line, nil
	}
	if l.text && l.pendingCR {
		if c, err := l.r.ReadByte(); err == nil && c != '\n' {
			l.r.UnreadByte()
		}
	}
	l.pendingCR = false
	l.buf = l.buf[:0]
	for !l.text {
		s, err := l.r.ReadSlice('\n')
		l.buf = append(l.buf, s...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(l.buf) == 0:
			return nil, io.EOF
		case err == io.EOF:
		case err != nil:
			return nil, err
		default:
			l.buf = l.buf[:len(l.buf)-1]
		}
		return bytes.Clone(l.buf), nil
	}
	for {
		c, err := l.r.ReadByte()
		if err == io.EOF {
			if len(l.buf) == 0 {
				return nil, io.EOF
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if c == '\n' || l.text && c == '\r' {
			l.pendingCR = c == '\r'
			break
		}
		l.buf = append(l.buf, c)
	}
	// The records of a page may share this memory: a line of a stream is a copy.
	return bytes.Clone(l.buf), nil
}

// end is the index of the first line end in b, -1 when there is none.
func (l *lines) end(b []byte) int {
	if !l.text {
		return bytes.IndexByte(b, '\n')
	}
	return bytes.IndexAny(b, "\r\n")
}

// jsonlDecoder is JsonlDecoder: a JSON value per line.
func jsonlDecoder(_ *Decoder, _ *manifest.Decoder, in input) (values, error) {
	return newLines(in, false), nil
}

// iterableDecoder is IterableDecoder: a text value per line.
func iterableDecoder(_ *Decoder, _ *manifest.Decoder, in input) (values, error) {
	return newLines(in, true), nil
}
