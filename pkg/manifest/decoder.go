package manifest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// Decoder types, as written in definitions.
const (
	JSONDecoder  = "JsonDecoder"
	JSONLDecoder = "JsonlDecoder"
	// JSONItemsDecoder yields the elements of one array of a JSON document (items_path).
	JSONItemsDecoder = "JsonItemsDecoder"
	CSVDecoder       = "CsvDecoder"
	XMLDecoder       = "XmlDecoder"
	IterableDecoder  = "IterableDecoder"
	GzipDecoder      = "GzipDecoder"
	ZipfileDecoder   = "ZipfileDecoder"
)

// Decoder is a retriever's decoder: how a response body becomes the values the record
// extractor reads. A Stream's Decoder is nil for JsonDecoder, the default.
type Decoder struct {
	Type string
	Pos  Pos
	// Encoding is the CsvDecoder's or JsonItemsDecoder's text encoding, as written ("utf-8"
	// when absent).
	Encoding string
	// ItemsPath is the JsonItemsDecoder's dotted path (ijson's syntax) to the array whose
	// elements are the values.
	ItemsPath string
	// Delimiter is the CsvDecoder's field delimiter, one character, escapes such as `\t`
	// already undone (Python's unicode_escape, as the CDK does).
	Delimiter rune
	// SetValuesToNone lists the CSV cell texts that become null.
	SetValuesToNone []string
	// PreserveNA is a ResponseToFileExtractor's preserve_na_values: only empty cells are
	// null, not pandas' other missing-value texts ("NA", "null", …).
	PreserveNA bool
	// Inner decodes what a GzipDecoder decompresses or what each file of a ZipfileDecoder
	// holds (JsonDecoder, JsonlDecoder, CsvDecoder or GzipDecoder).
	Inner *Decoder
}

// Paginates reports whether the CDK lets a paginator read responses of this decoder:
// JsonDecoder, XmlDecoder, and a GzipDecoder of a JsonDecoder (which the paginator sees as
// an empty response, as it is streamed). It refuses the others at build time.
func (d *Decoder) Paginates() bool {
	return d == nil || d.Type == JSONDecoder || d.Type == XMLDecoder ||
		d.Type == GzipDecoder && d.Inner != nil && d.Inner.Type == JSONDecoder
}

// csvEncodings are the encodings a CsvDecoder reads, by their normalized Python names.
var csvEncodings = map[string]string{
	"utf_8": "utf-8", "utf8": "utf-8", "u8": "utf-8", "utf": "utf-8", "cp65001": "utf-8",
	"utf_8_sig": "utf-8-sig",
	"latin_1":   "latin-1", "latin1": "latin-1", "iso_8859_1": "latin-1", "iso8859_1": "latin-1",
	"8859": "latin-1", "cp819": "latin-1", "l1": "latin-1", "latin": "latin-1",
	"ascii": "ascii", "us_ascii": "ascii", "646": "ascii",
	"cp1252": "cp1252", "windows_1252": "cp1252",
	"utf_16": "utf-16", "utf16": "utf-16",
	"utf_16_le": "utf-16-le", "utf_16le": "utf-16-le",
	"utf_16_be": "utf-16-be", "utf_16be": "utf-16-be",
}

// CanonicalEncoding returns the encoding a CsvDecoder's encoding names (utf-8, utf-8-sig,
// latin-1, ascii, cp1252, utf-16, utf-16-le, utf-16-be), "" when it is not one of them.
func CanonicalEncoding(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.NewReplacer("-", "_", " ", "_").Replace(n)
	return csvEncodings[n]
}

// retrieverDecoder reads the decoder of a SimpleRetriever: nil for JsonDecoder (or none);
// false when the stream cannot be run.
func (l *loader) retrieverDecoder(c *comp) (*Decoder, bool) {
	n := c.get("decoder")
	if isEmpty(n) {
		return nil, true
	}
	d, ok := l.decoderComp(n, c.fieldPath("decoder"), c.params, "decoder", false)
	if d != nil && d.Type == JSONDecoder {
		return nil, ok
	}
	return d, ok
}

// decoderComp reads one decoder component; inner says it is the content decoder of a
// GzipDecoder or ZipfileDecoder, where the CDK's schema allows fewer types.
func (l *loader) decoderComp(n *yaml.Node, path string, parent *params, slot string, inner bool) (*Decoder, bool) {
	dc, ok := l.component(n, path, parent, "")
	if !ok {
		return nil, false
	}
	d := &Decoder{Type: dc.typ, Pos: pos(n)}
	switch dc.typ {
	case JSONDecoder, JSONLDecoder, GzipDecoder:
	case CSVDecoder:
		return d, l.csvDecoder(dc, d)
	case JSONItemsDecoder:
		return d, l.itemsDecoder(dc, d)
	case XMLDecoder, IterableDecoder, ZipfileDecoder:
		if inner {
			l.at(n, dc.path, diag.CodeType, fmt.Sprintf("%s cannot decode what a GzipDecoder or ZipfileDecoder holds", dc.typ),
				"write CsvDecoder, GzipDecoder, JsonDecoder, JsonItemsDecoder or JsonlDecoder")
			return nil, false
		}
	default:
		l.unsupported(n, dc.path, dc.typ, slot)
		return nil, false
	}
	dc.checkFields(dc.typ)
	if dc.typ == GzipDecoder || dc.typ == ZipfileDecoder {
		in := dc.require("decoder")
		if in == nil {
			return nil, false
		}
		d.Inner, ok = l.decoderComp(in, dc.fieldPath("decoder"), dc.params, "decoder", true)
		if !ok {
			return nil, false
		}
	}
	return d, true
}

// itemsDecoder reads the fields of a JsonItemsDecoder: items_path (a plain dotted path, as
// ijson reads it; the CDK refuses an empty one) and encoding.
func (l *loader) itemsDecoder(dc *comp, d *Decoder) bool {
	dc.checkFields(JSONItemsDecoder)
	ok := true
	if p := dc.require("items_path"); p == nil {
		return false
	} else if d.ItemsPath = l.plainString(dc, "items_path", ""); strings.TrimSpace(d.ItemsPath) == "" {
		l.at(p, dc.fieldPath("items_path"), diag.CodeType, "`items_path` must name the array whose elements are the records, e.g. data.users (the Airbyte CDK refuses an empty one)", "")
		ok = false
	}
	ok = l.encoding(dc, d) && ok
	return ok
}

// encoding reads the text encoding of a CsvDecoder or JsonItemsDecoder (utf-8 when absent);
// false for one this tool does not read.
func (l *loader) encoding(dc *comp, d *Decoder) bool {
	d.Encoding = l.plainString(dc, "encoding", "utf-8")
	if CanonicalEncoding(d.Encoding) != "" {
		return true
	}
	l.at(dc.get("encoding"), dc.fieldPath("encoding"), diag.CodeUnsupported,
		fmt.Sprintf("the encoding %q is not supported yet", d.Encoding),
		"write utf-8, utf-8-sig, latin-1, ascii, cp1252, utf-16, utf-16-le or utf-16-be")
	return false
}

// csvDecoder reads the fields of a CsvDecoder.
func (l *loader) csvDecoder(dc *comp, d *Decoder) bool {
	dc.checkFields(CSVDecoder)
	ok := true
	ok = l.encoding(dc, d) && ok
	d.Delimiter = ','
	if v := dc.get("delimiter"); v != nil {
		s := l.plainString(dc, "delimiter", ",")
		r, err := csvDelimiter(s)
		if err != nil {
			l.at(v, dc.fieldPath("delimiter"), diag.CodeType, fmt.Sprintf("`delimiter` %s", err), "write one character, e.g. \",\", \";\" or \"\\t\"")
			ok = false
		}
		d.Delimiter = r
	}
	if dc.get("set_values_to_none") != nil {
		d.SetValuesToNone, _ = l.stringList(dc, "set_values_to_none")
	}
	return ok
}

// csvDelimiter reads a delimiter as the CDK does: a text starting with a backslash is
// unescaped first (`\t` is a tab); the result must be one character that is not a quote
// or a line break.
func csvDelimiter(s string) (rune, error) {
	if strings.HasPrefix(s, `\`) {
		var b strings.Builder
		for rest := s; rest != ""; {
			r, _, tail, err := strconv.UnquoteChar(rest, 0)
			if err != nil {
				return 0, fmt.Errorf("%q has an escape that cannot be read", s)
			}
			b.WriteRune(r)
			rest = tail
		}
		s = b.String()
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case s == "" || size != len(s):
		return 0, fmt.Errorf("must be one character, not %q", s)
	case r == '"' || r == '\n' || r == '\r':
		return 0, fmt.Errorf("cannot be %q", s)
	}
	return r, nil
}

// checkPaginatedDecoder refuses, as the CDK does when it builds the stream, a paginator
// reading the responses of a decoder it cannot decode for pagination.
func (l *loader) checkPaginatedDecoder(c *comp, d *Decoder, p *Paginator) {
	if p == nil || d.Paginates() {
		return
	}
	what := d.Type
	if d.Type == GzipDecoder {
		what = "a GzipDecoder of " + d.Inner.Type
	}
	l.at(c.get("decoder"), c.fieldPath("decoder"), diag.CodeType,
		fmt.Sprintf("a paginator cannot read the responses of %s: the Airbyte CDK paginates only JsonDecoder, XmlDecoder and a GzipDecoder of JsonDecoder responses", what),
		"remove the paginator (NoPagination) or use one of those decoders")
}
