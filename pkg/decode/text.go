package decode

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"connector/pkg/manifest"
)

// runes reads text in one of the encodings of manifest.CanonicalEncoding, strictly (a byte
// the encoding cannot decode is an error, as Python's codecs are by default), with Python's
// universal newlines: "\r\n" and "\r" read as "\n".
type runes struct {
	r    *bufio.Reader
	enc  string
	off  int64 // bytes read
	back rune  // a rune read ahead, -1 when none
	bom  bool  // utf-16: the byte order is still to be read
	le   bool  // utf-16 little endian
}

func newRunes(r io.Reader, encoding string) *runes {
	t := &runes{r: bufio.NewReaderSize(r, 64<<10), enc: manifest.CanonicalEncoding(encoding), back: -1}
	switch t.enc {
	case "utf-8-sig":
		if b, _ := t.r.Peek(3); len(b) == 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
			t.r.Discard(3)
			t.off = 3
		}
	case "utf-16":
		t.bom, t.le = true, true
	case "utf-16-le":
		t.le = true
	}
	return t
}

// DecodeError is a byte the text's encoding cannot decode.
type DecodeError struct {
	Encoding string
	Offset   int64
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("the text is not %s (byte %d cannot be decoded)", e.Encoding, e.Offset)
}

// cp1252 maps the bytes 0x80-0x9f of windows-1252; 0 marks the five it leaves undefined.
var cp1252 = [32]rune{
	0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
	0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
}

// next returns the next character, with line ends made "\n"; io.EOF at the end.
func (t *runes) next() (rune, error) {
	c, err := t.decoded()
	if err != nil || c != '\r' {
		return c, err
	}
	n, err := t.decoded()
	if err == nil && n != '\n' {
		t.back = n
	} else if err != nil && err != io.EOF {
		return 0, err
	}
	return '\n', nil
}

func (t *runes) decoded() (rune, error) {
	if t.back >= 0 {
		c := t.back
		t.back = -1
		return c, nil
	}
	at := t.off
	bad := func() error { return &DecodeError{Encoding: t.enc, Offset: at} }
	switch t.enc {
	case "utf-8", "utf-8-sig":
		if b, err := t.r.ReadByte(); err != nil {
			return 0, err
		} else if b < utf8.RuneSelf {
			t.off++
			return rune(b), nil
		}
		t.r.UnreadByte()
		c, size, err := t.r.ReadRune()
		t.off += int64(size)
		if err != nil {
			return 0, err
		}
		if c == utf8.RuneError && size == 1 {
			return 0, bad()
		}
		return c, nil
	case "latin-1", "ascii", "cp1252":
		b, err := t.r.ReadByte()
		if err != nil {
			return 0, err
		}
		t.off++
		switch {
		case b < 0x80:
			return rune(b), nil
		case t.enc == "ascii":
			return 0, bad()
		case t.enc == "cp1252" && b < 0xa0:
			if c := cp1252[b-0x80]; c != 0 {
				return c, nil
			}
			return 0, bad()
		}
		return rune(b), nil
	}
	// UTF-16.
	u, err := t.unit()
	if err != nil {
		return 0, err
	}
	if t.bom {
		t.bom = false
		switch u {
		case 0xfeff:
			return t.decoded()
		case 0xfffe:
			t.le = !t.le
			return t.decoded()
		}
	}
	if !utf16.IsSurrogate(rune(u)) {
		return rune(u), nil
	}
	u2, err := t.unit()
	if err != nil {
		return 0, bad()
	}
	c := utf16.DecodeRune(rune(u), rune(u2))
	if c == utf8.RuneError {
		return 0, bad()
	}
	return c, nil
}

func (t *runes) unit() (uint16, error) {
	var b [2]byte
	n, err := io.ReadFull(t.r, b[:])
	t.off += int64(n)
	if err == io.ErrUnexpectedEOF {
		return 0, &DecodeError{Encoding: t.enc, Offset: t.off - 1}
	}
	if err != nil {
		return 0, err
	}
	if t.le {
		return uint16(b[0]) | uint16(b[1])<<8, nil
	}
	return uint16(b[1]) | uint16(b[0])<<8, nil
}
