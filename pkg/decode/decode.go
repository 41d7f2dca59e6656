// Package decode turns a response body into the values the record extractor reads, as the
// Airbyte CDK's decoders do: JSON lines, CSV, XML (xmltodict's conventions), lines of text
// (IterableDecoder), gzip and zip around them. Each value is JSON text; the extractor's field
// path is applied to each one. Values are decoded one at a time from the body, so that a
// large JSON-lines or CSV body is never held as Go values all at once, and every expansion
// (gzip, zip) is bounded by the body limit.
package decode

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"connector/pkg/manifest"
)

// Decoder decodes the bodies of one stream.
type Decoder struct {
	m *manifest.Decoder
	// limit is the most bytes any expansion (a gzip stream, the files of a zip) may give.
	limit int64
	flag  string
}

// New returns the decoder of m. limit bounds what a gzip stream or a zip file expands to;
// flag names the option that raises it, for the error.
func New(m *manifest.Decoder, limit int64, flag string) *Decoder {
	return &Decoder{m: m, limit: limit, flag: flag}
}

// Type is the decoder's type as written in the definition.
func (d *Decoder) Type() string { return d.m.Type }

// Streamed reports whether the CDK streams the responses of this decoder, so that what a
// paginator reads as `response` is an empty mapping.
func (d *Decoder) Streamed() bool { return d.m.Type != manifest.XMLDecoder }

// Values reads the values of one body, one at a time.
type Values struct {
	v   values
	err error
}

// values is one decoder's reading of its input.
type values interface {
	// next returns the next value as JSON text, or io.EOF.
	next() ([]byte, error)
	// where says where the value last returned (or the error) is: "line 3", "row 2".
	where() string
}

// Open starts reading body. The values returned may share body's memory.
func (d *Decoder) Open(body []byte) *Values {
	v, err := d.open(d.m, input{b: body})
	return &Values{v: v, err: err}
}

// OpenReader starts reading a body from r (a body spooled to disk), as Open does.
func (d *Decoder) OpenReader(r io.Reader) *Values {
	v, err := d.open(d.m, input{r: r})
	return &Values{v: v, err: err}
}

// Next returns the next value as JSON text, or io.EOF after the last. An error names where
// in the body it is.
func (vs *Values) Next() ([]byte, error) {
	if vs.err != nil {
		return nil, vs.err
	}
	b, err := vs.v.next()
	if err != nil && err != io.EOF {
		if w := vs.v.where(); w != "" {
			err = fmt.Errorf("%s: %w", w, err)
		}
		vs.err = err
	}
	return b, err
}

// Where says where the value last returned is in the body ("line 3", "file a.csv, row 2"),
// "" when the body is one value.
func (vs *Values) Where() string {
	if vs.v == nil {
		return ""
	}
	return vs.v.where()
}

// input is what a decoder reads: the body in memory, or a stream (what a gzip stream or a
// zip file expands to).
type input struct {
	b []byte
	r io.Reader
}

func (in input) reader() io.Reader {
	if in.r != nil {
		return in.r
	}
	return bytes.NewReader(in.b)
}

// all reads the whole input.
func (in input) all() ([]byte, error) {
	if in.r == nil {
		return in.b, nil
	}
	return io.ReadAll(in.r)
}

// decoderKind is a decoder of the definition format: how it opens a response's input as
// the values it yields. Each kind is next to its decoder (json.go, lines.go, items.go,
// csv.go, xml.go, zip.go; gzip here) and is registered in decoders by one line; its fields
// and their checks are the definition format's, in pkg/manifest.
type decoderKind func(d *Decoder, m *manifest.Decoder, in input) (values, error)

// decoders are the decoders, by their type in definitions. They are registered at init
// because the decoders that hold another (gzip, zip) open it through open, which looks here.
var decoders map[string]decoderKind

func init() {
	decoders = map[string]decoderKind{
		manifest.JSONDecoder:      jsonDecoder,
		manifest.JSONLDecoder:     jsonlDecoder,
		manifest.JSONItemsDecoder: itemsDecoder,
		manifest.IterableDecoder:  iterableDecoder,
		manifest.CSVDecoder:       csvDecoder,
		manifest.XMLDecoder:       xmlDecoder,
		manifest.GzipDecoder:      gzipDecoder,
		manifest.ZipfileDecoder:   zipDecoder,
		manifest.ResponseToFile:   toFileDecoder,
	}
}

func (d *Decoder) open(m *manifest.Decoder, in input) (values, error) {
	k, ok := decoders[m.Type]
	if !ok {
		return nil, fmt.Errorf("%s is not supported", m.Type)
	}
	return k(d, m, in)
}

// gzipDecoder is GzipDecoder: the gunzipped input, read by the inner decoder.
func gzipDecoder(d *Decoder, m *manifest.Decoder, in input) (values, error) {
	inner, err := d.gunzip(in)
	if err != nil {
		return nil, err
	}
	return d.open(m.Inner, inner)
}

// whole is a decoder whose input is one value.
type whole struct {
	read func() ([]byte, error)
	done bool
}

func (w *whole) next() ([]byte, error) {
	if w.done {
		return nil, io.EOF
	}
	w.done = true
	return w.read()
}

func (w *whole) where() string { return "" }

// TooLargeError is a gzip stream or zip content that expands beyond the body limit.
type TooLargeError struct {
	What  string // "the gzip content", "the content of the zip"
	Limit int64
	Flag  string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s expands to more than %s, the body limit (%s raises it)", e.What, formatSize(e.Limit), e.Flag)
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// capped reads r and fails with a *TooLargeError after left bytes.
type capped struct {
	r    io.Reader
	left *int64
	err  *TooLargeError
}

func (c *capped) Read(p []byte) (int, error) {
	if *c.left < 0 {
		return 0, c.err
	}
	if int64(len(p)) > *c.left+1 {
		p = p[:*c.left+1]
	}
	n, err := c.r.Read(p)
	*c.left -= int64(n)
	if *c.left < 0 {
		return 0, c.err
	}
	return n, err
}

// gunzip is the CDK's GzipParser: a gzip stream (it starts with 1f 8b) is decompressed, any
// other content passes through unchanged. The body's own Content-Encoding has already been
// undone by the HTTP client, as the CDK's extra GzipParser for it does.
func (d *Decoder) gunzip(in input) (input, error) {
	var head []byte
	var r io.Reader
	if in.r == nil {
		head = in.b
		r = bytes.NewReader(in.b)
	} else {
		br := bufio.NewReader(in.r)
		head, _ = br.Peek(2)
		r = br
		in = input{r: br}
	}
	if len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		return in, nil
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return input{}, fmt.Errorf("the gzip content cannot be read: %w", err)
	}
	left := d.limit
	return input{r: &gzipErrs{&capped{r: zr, left: &left, err: &TooLargeError{What: "the gzip content", Limit: d.limit, Flag: d.flag}}}}, nil
}

// gzipErrs says that an error of reading came from the gzip stream.
type gzipErrs struct{ r io.Reader }

func (g *gzipErrs) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	var tl *TooLargeError
	if err != nil && err != io.EOF && !errors.As(err, &tl) {
		err = fmt.Errorf("the gzip content cannot be read: %w", err)
	}
	return n, err
}

// jsonDecoder is JsonDecoder: the whole body is one value.
func jsonDecoder(_ *Decoder, _ *manifest.Decoder, in input) (values, error) {
	return &whole{read: func() ([]byte, error) { return in.all() }}, nil
}
