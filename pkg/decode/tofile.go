package decode

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"connector/pkg/manifest"
)

// toFileDecoder is the ResponseToFileExtractor of the Airbyte CDK, which saves the body to
// a file and reads that file back with pandas.read_csv(dialect="unix", dtype=object). Here
// the body (in memory, or on disk as pkg/run spools it) is inflated and parsed as a stream,
// a record at a time, so that neither the decompressed text nor the records are ever held
// whole.
//
// What the CDK does, reproduced:
//   - a body that starts as a gzip or zlib stream is decompressed (zlib's automatic header
//     detection), any other body is read as it is; NUL bytes are dropped;
//   - the text is UTF-8, whatever the Content-Type says, and its line ends are read as
//     Python's text files read them ("\r\n" and "\r" are "\n", inside quotes too);
//   - the first row that is not blank names the columns: an empty name is "Unnamed: i"
//     (i its column), a repeated name gets ".1", ".2", … as pandas renames it;
//   - every value is a string: pandas reads with dtype=object, so nothing becomes a number;
//   - a missing value is null: an empty cell, a cell missing at the end of a short row, and,
//     unless preserve_na_values, pandas' default missing-value texts (naTexts);
//   - blank lines, and lines of spaces and tabs only, are skipped;
//   - when the first data row has more cells than the header, pandas takes the extra
//     leading cells of every row as the frame's index, which the records leave out; a later
//     row with more cells than that is an error, as it is for pandas' C parser;
//   - an empty body is no records.
//
// Where it differs, on purpose: a compressed body that is cut short or corrupt is an error
// (the CDK would keep what it inflated, or write the compressed bytes as text).
func toFileDecoder(d *Decoder, m *manifest.Decoder, in input) (values, error) {
	r, err := d.inflateAuto(in)
	if err != nil {
		return nil, err
	}
	return &frame{t: newRunes(dropNUL{r}, "utf-8-sig"), preserve: m.PreserveNA}, nil
}

// naTexts are the cell texts pandas 2.2 reads as missing by default (keep_default_na), the
// empty cell aside (always missing).
var naTexts = map[string]bool{
	"#N/A": true, "#N/A N/A": true, "#NA": true, "-1.#IND": true, "-1.#QNAN": true, "-NaN": true,
	"-nan": true, "1.#IND": true, "1.#QNAN": true, "<NA>": true, "N/A": true, "NA": true, "NULL": true,
	"NaN": true, "None": true, "n/a": true, "nan": true, "null": true,
}

// inflateAuto undoes a gzip or zlib compression that the body itself carries (not its
// Content-Encoding, which the HTTP client undid), as zlib's automatic header detection
// does; a body with neither header is read as it is. What it inflates to is bounded by the
// body limit. A gzip stream ends at its first member, as zlib's decompressor does.
func (d *Decoder) inflateAuto(in input) (io.Reader, error) {
	br := bufio.NewReader(in.reader())
	head, _ := br.Peek(2)
	var zr io.Reader
	switch {
	case len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b:
		g, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("the gzip content cannot be read: %w", err)
		}
		g.Multistream(false)
		zr = g
	case len(head) == 2 && isZlibHeader(head):
		z, err := zlib.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("the zlib content cannot be read: %w", err)
		}
		zr = z
	default:
		return br, nil
	}
	left := d.limit
	return &gzipErrs{&capped{r: zr, left: &left, err: &TooLargeError{What: "the compressed content", Limit: d.limit, Flag: d.flag}}}, nil
}

// isZlibHeader reports whether b starts a zlib stream (RFC 1950): deflate with a window of
// at most 32 KiB, no preset dictionary, and the check on the two bytes.
func isZlibHeader(b []byte) bool {
	return b[0]&0x0f == 8 && b[0]>>4 <= 7 && b[1]&0x20 == 0 && (uint(b[0])<<8|uint(b[1]))%31 == 0
}

// dropNUL reads r without its NUL bytes (the CDK filters them out of the body).
type dropNUL struct{ r io.Reader }

func (n dropNUL) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		if k > 0 && bytes.IndexByte(p[:k], 0) >= 0 {
			kept := p[:0]
			for _, c := range p[:k] {
				if c != 0 {
					kept = append(kept, c)
				}
			}
			k = len(kept)
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

// frame reads CSV as pandas' C parser does with the unix dialect (delimiter ',', quote '"'
// doubled inside quotes, no escape character) and its defaults (blank lines skipped,
// spaces kept), a record at a time.
type frame struct {
	t        *runes
	preserve bool
	// keys are the column names, JSON encoded; lead is the number of leading cells that
	// pandas makes the index; width is the most cells a row may have.
	keys        [][]byte
	lead, width int
	sized       bool
	lines       int // lines read
	start       int // the line the record being read starts at
	buf         []byte
	ends        []int
}

func (f *frame) where() string { return fmt.Sprintf("line %d", f.start) }

func (f *frame) next() ([]byte, error) {
	if f.keys == nil {
		h, err := f.record()
		if err != nil {
			return nil, err // io.EOF: an empty body, no records (pandas' EmptyDataError)
		}
		f.header(h)
	}
	cells, err := f.record()
	if err != nil {
		return nil, err
	}
	if !f.sized {
		// The first data row sets the width; cells beyond the header's are the index.
		f.sized = true
		f.width = max(len(cells), len(f.keys))
		f.lead = f.width - len(f.keys)
	}
	if len(cells) > f.width {
		return nil, fmt.Errorf("%d cells where %d are expected (pandas refuses the row: \"Expected %d fields in line %d, saw %d\")",
			len(cells), f.width, f.width, f.start, len(cells))
	}
	out := make([]byte, 0, len(f.buf)+16*len(f.keys))
	out = append(out, '{')
	for i, k := range f.keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, k...)
		out = append(out, ':')
		if j := f.lead + i; j < len(cells) && !f.missing(cells[j]) {
			out = appendString(out, cells[j])
		} else {
			out = append(out, "null"...)
		}
	}
	return append(out, '}'), nil
}

// missing reports whether a cell is a missing value.
func (f *frame) missing(s string) bool {
	return s == "" || !f.preserve && naTexts[s]
}

// header names the columns as pandas does: "Unnamed: i" for an empty name, then a repeated
// name renamed "name.1", "name.2", … (skipping names already taken).
func (f *frame) header(cells []string) {
	counts := map[string]int{}
	f.keys = make([][]byte, len(cells))
	for i, name := range cells {
		if name == "" {
			name = "Unnamed: " + strconv.Itoa(i)
		}
		n := counts[name]
		for n > 0 {
			counts[name] = n + 1
			name = name + "." + strconv.Itoa(n)
			n = counts[name]
		}
		counts[name] = n + 1
		f.keys[i] = appendString(nil, name)
	}
}

// The states of pandas' tokenizer (tokenizer.c) that the unix dialect reaches.
const (
	frStartRecord = iota
	frWhitespaceLine
	frStartField
	frInField
	frInQuoted
	frQuoteInQuoted
)

// record reads the next row that is not blank, or io.EOF.
func (f *frame) record() ([]string, error) {
	f.buf, f.ends = f.buf[:0], f.ends[:0]
	state := frStartRecord
	end := func() { f.ends = append(f.ends, len(f.buf)) }
	for {
		r, err := f.t.next()
		if err == io.EOF {
			switch state {
			case frStartRecord, frWhitespaceLine:
				return nil, io.EOF
			case frInQuoted:
				return nil, fmt.Errorf("the text ends inside a quoted cell (pandas: \"EOF inside string starting at row …\")")
			}
			end()
			return f.out(), nil
		}
		if err != nil {
			f.start = f.lines + 1 // the line the text could not be read on
			return nil, err
		}
		if state == frStartRecord {
			f.start = f.lines + 1
		}
		if r == '\n' {
			f.lines++
		}
		switch state {
		case frStartRecord:
			switch r {
			case '\n':
				continue // a blank line
			case ' ', '\t':
				f.buf = append(f.buf, byte(r))
				state = frWhitespaceLine
				continue
			}
			state = f.startField(r, end)
		case frWhitespaceLine:
			switch r {
			case '\n':
				f.buf = f.buf[:0] // a line of spaces is blank
				state = frStartRecord
			case ' ', '\t':
				f.buf = append(f.buf, byte(r))
			default:
				// The spaces start the first cell, as pandas reads the line again.
				state = f.inField(r, end)
			}
		case frStartField:
			state = f.startField(r, end)
		case frInField:
			state = f.inField(r, end)
		case frInQuoted:
			if r == '"' {
				state = frQuoteInQuoted
			} else {
				f.buf = utf8.AppendRune(f.buf, r)
			}
		case frQuoteInQuoted:
			switch r {
			case '"':
				f.buf = append(f.buf, '"')
				state = frInQuoted
			case ',':
				end()
				state = frStartField
			case '\n':
				end()
				return f.out(), nil
			default:
				f.buf = utf8.AppendRune(f.buf, r)
				state = frInField
			}
		}
		if state == -1 {
			return f.out(), nil
		}
	}
}

// startField reads r at the start of a cell; -1 when the row ends.
func (f *frame) startField(r rune, end func()) int {
	switch r {
	case '\n':
		end()
		return -1
	case '"':
		return frInQuoted
	case ',':
		end()
		return frStartField
	}
	f.buf = utf8.AppendRune(f.buf, r)
	return frInField
}

// inField reads r inside an unquoted cell, where a quote is a character like any other;
// -1 when the row ends.
func (f *frame) inField(r rune, end func()) int {
	switch r {
	case '\n':
		end()
		return -1
	case ',':
		end()
		return frStartField
	}
	f.buf = utf8.AppendRune(f.buf, r)
	return frInField
}

// out returns the cells read.
func (f *frame) out() []string { return cellsOf(f.buf, f.ends) }
