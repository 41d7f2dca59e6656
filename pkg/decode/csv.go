package decode

import (
	"fmt"
	"io"
	"unicode/utf8"

	"connector/pkg/manifest"
)

// fieldLimit is the longest field Python's csv module reads (csv.field_size_limit()).
const fieldLimit = 131072

// csvRows is the CDK's CsvParser: Python's csv.DictReader (the excel dialect: quote '"',
// doubled quotes, not strict) over text decoded with the configured encoding. The first row
// names the keys; each later row is an object of strings in header order (a later duplicate
// header replaces the value at the first one's place); a short row gets null for the missing
// keys, a long row puts its extra cells in a list under the key "null" (DictReader's None);
// blank lines are skipped; cells listed in set_values_to_none become null.
type csvRows struct {
	t      *runes
	delim  rune
	none   map[string]bool
	header []string
	row    int // the number of the record last read, the header being record 1
	line   int // the line it started at
	lines  int // lines read
	eof    bool
	// reading says a record is being read: an error is on the line being read.
	reading bool
	// buf holds the cells of the record being read, one after the other; ends says where
	// each ends.
	buf  []byte
	ends []int
	// keys are the header's distinct names, in order of first appearance, encoded; slot
	// maps each header column to its key.
	keys [][]byte
	slot []int
	vals []any
}

func newCSV(m *manifest.Decoder, in input) (*csvRows, error) {
	c := &csvRows{t: newRunes(in.reader(), m.Encoding), delim: m.Delimiter}
	if c.delim == 0 {
		c.delim = ','
	}
	if len(m.SetValuesToNone) > 0 {
		c.none = map[string]bool{}
		for _, v := range m.SetValuesToNone {
			c.none[v] = true
		}
	}
	return c, nil
}

func (c *csvRows) where() string {
	if c.reading || c.row == 0 {
		return fmt.Sprintf("line %d", c.lines+1)
	}
	return fmt.Sprintf("CSV record %d (line %d)", c.row, c.line)
}

func (c *csvRows) next() ([]byte, error) {
	if c.header == nil {
		h, err := c.record()
		if err != nil {
			return nil, err
		}
		c.header = h
	}
	var cells []string
	for {
		r, err := c.record()
		if err != nil {
			return nil, err
		}
		if len(r) > 0 {
			cells = r
			break
		}
	}
	if c.keys == nil {
		c.index()
	}
	// As DictReader: the cells set the header's keys in order (a repeated name keeps its
	// first place, the later cell wins), missing cells are null, extra ones go under None.
	for i := range c.vals {
		c.vals[i] = nil
	}
	for i, k := range c.slot {
		if i < len(cells) {
			c.vals[k] = c.value(cells[i])
		} else {
			c.vals[k] = nil
		}
	}
	out := make([]byte, 0, 16*len(c.keys)+len(c.buf))
	out = append(out, '{')
	for i, k := range c.keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, k...)
		out = append(out, ':')
		out = appendValue(out, c.vals[i])
	}
	if len(cells) > len(c.header) {
		if len(c.keys) > 0 {
			out = append(out, ',')
		}
		out = append(out, `"null":[`...)
		for i, v := range cells[len(c.header):] {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendString(out, v)
		}
		out = append(out, ']')
	}
	return append(out, '}'), nil
}

// index numbers the header's distinct names.
func (c *csvRows) index() {
	seen := map[string]int{}
	c.keys, c.slot = [][]byte{}, make([]int, len(c.header))
	for i, h := range c.header {
		k, ok := seen[h]
		if !ok {
			k = len(c.keys)
			seen[h] = k
			c.keys = append(c.keys, appendString(nil, h))
		}
		c.slot[i] = k
	}
	c.vals = make([]any, len(c.keys))
}

func (c *csvRows) value(s string) any {
	if c.none[s] {
		return nil
	}
	return s
}

// The states of Python's csv reader (Modules/_csv.c).
const (
	startRecord = iota
	startField
	inField
	inQuoted
	quoteInQuoted
	eatNewline
)

// record reads one record as Python's csv.reader does: [] for a blank line, io.EOF at the
// end.
func (c *csvRows) record() ([]string, error) {
	if c.eof {
		return nil, io.EOF
	}
	c.reading = true
	c.buf, c.ends = c.buf[:0], c.ends[:0]
	n := 0 // characters in the field
	state := startRecord
	save := func() {
		c.ends = append(c.ends, len(c.buf))
		n = 0
	}
	add := func(r rune) error {
		if n >= fieldLimit {
			return fmt.Errorf("field larger than field limit (%d)", fieldLimit)
		}
		n++
		c.buf = utf8.AppendRune(c.buf, r)
		return nil
	}
	started := false
	for {
		r, err := c.t.next()
		if err == io.EOF {
			c.eof = true
			if !started {
				return nil, io.EOF
			}
			// The last line had no line end: its end is the end of the text.
			switch state {
			case startField, inField, quoteInQuoted:
				save()
			case inQuoted:
				save()
			}
			return c.out(), nil
		}
		if err != nil {
			return nil, err
		}
		if !started {
			started = true
			c.row++
			c.line = c.lines + 1
		}
		if r == '\n' {
			c.lines++
		}
		switch state {
		case startRecord:
			if r == '\n' {
				return c.out(), nil // a blank line
			}
			state = startField
			fallthrough
		case startField:
			switch r {
			case '\n':
				save()
				return c.out(), nil
			case '"':
				state = inQuoted
			case c.delim:
				save()
			default:
				if err := add(r); err != nil {
					return nil, err
				}
				state = inField
			}
		case inField:
			switch r {
			case '\n':
				save()
				return c.out(), nil
			case c.delim:
				save()
				state = startField
			default:
				if err := add(r); err != nil {
					return nil, err
				}
			}
		case inQuoted:
			if r == '"' {
				state = quoteInQuoted
			} else if err := add(r); err != nil {
				return nil, err
			}
		case quoteInQuoted:
			switch r {
			case '"':
				if err := add(r); err != nil {
					return nil, err
				}
				state = inQuoted
			case c.delim:
				save()
				state = startField
			case '\n':
				save()
				return c.out(), nil
			default:
				if err := add(r); err != nil {
					return nil, err
				}
				state = inField
			}
		}
	}
}

// out returns the cells read.
func (c *csvRows) out() []string {
	c.reading = false
	return cellsOf(c.buf, c.ends)
}

// cellsOf cuts a row's text at the ends of its cells; one string holds them all.
func cellsOf(buf []byte, ends []int) []string {
	cells := make([]string, len(ends))
	all := string(buf)
	start := 0
	for i, end := range ends {
		cells[i] = all[start:end]
		start = end
	}
	return cells
}

// csvDecoder is CsvDecoder: a record per row, keyed by the header row.
func csvDecoder(_ *Decoder, m *manifest.Decoder, in input) (values, error) {
	return newCSV(m, in)
}
