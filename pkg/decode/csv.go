package decode

import (
	"fmt"
	"io"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/record"
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
	field   strings.Builder
	cells   []string
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
	o := &record.Object{}
	for i, k := range c.header {
		if i < len(cells) {
			o.Set(k, c.value(cells[i]))
		} else {
			o.Set(k, nil)
		}
	}
	if len(cells) > len(c.header) {
		extra := make([]any, 0, len(cells)-len(c.header))
		for _, v := range cells[len(c.header):] {
			extra = append(extra, v)
		}
		o.Set("null", extra)
	}
	return record.Marshal(o)
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
	c.cells = c.cells[:0]
	c.field.Reset()
	n := 0 // characters in the field
	state := startRecord
	save := func() {
		c.cells = append(c.cells, c.field.String())
		c.field.Reset()
		n = 0
	}
	add := func(r rune) error {
		if n >= fieldLimit {
			return fmt.Errorf("field larger than field limit (%d)", fieldLimit)
		}
		n++
		c.field.WriteRune(r)
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

func (c *csvRows) out() []string {
	c.reading = false
	if len(c.cells) == 0 {
		return []string{}
	}
	return append([]string(nil), c.cells...)
}
