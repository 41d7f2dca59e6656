package decode

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"connector/pkg/manifest"
	"connector/pkg/record"
)

// MaxXMLDepth is how deeply an XML body may nest elements: its JSON form nests up to twice
// as deep (an element in a list of repeated elements), within the JSON depth limit.
const MaxXMLDepth = 256

// xmlToJSON converts an XML document as the CDK's XmlDecoder does with xmltodict.parse and
// its defaults: {root: value}, where an element with neither attributes nor child elements
// is its text (whitespace stripped; null when empty), and any other element is an object of
// its attributes ("@name", in document order), then its child elements in order of first
// appearance (a repeated name becomes a list, at its first place), then "#text" when it has
// text. Names keep their namespace prefix as written ("ns:item", "@xmlns:ns"); comments and
// processing instructions are dropped. Every leaf is a string.
func xmlToJSON(body []byte) ([]byte, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = charsetReader
	type frame struct {
		name string
		item *record.Object
		text strings.Builder
	}
	var stack []*frame
	var doc *record.Object
	for {
		at := d.InputOffset() // where the token starts
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the body is not XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if doc != nil && len(stack) == 0 {
				return nil, fmt.Errorf("the body is not XML: a second root element <%s> at byte %d", xmlName(t.Name), at)
			}
			if len(stack) >= MaxXMLDepth {
				return nil, fmt.Errorf("XML nested deeper than %d elements at byte %d, a limit of connector", MaxXMLDepth, at)
			}
			f := &frame{name: xmlName(t.Name)}
			if len(t.Attr) > 0 {
				f.item = &record.Object{}
				for _, a := range t.Attr {
					f.item.Set("@"+xmlName(a.Name), a.Value)
				}
			}
			stack = append(stack, f)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != xmlName(t.Name) {
				return nil, fmt.Errorf("the body is not XML: unexpected </%s> at byte %d", xmlName(t.Name), at)
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			var text any
			if s := strings.TrimFunc(f.text.String(), pySpace); s != "" {
				text = s
			}
			var v any = text
			if f.item != nil {
				if text != nil {
					push(f.item, "#text", text)
				}
				v = f.item
			}
			if len(stack) == 0 {
				doc = &record.Object{}
				doc.Set(f.name, v)
				continue
			}
			p := stack[len(stack)-1]
			if p.item == nil {
				p.item = &record.Object{}
			}
			push(p.item, f.name, v)
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("the body is not XML: text outside the root element at byte %d", at)
			}
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("the body is not XML: <%s> is not closed", stack[len(stack)-1].name)
	}
	if doc == nil {
		return nil, errors.New("the body is not XML: no element found")
	}
	return appendValue(nil, doc), nil
}

// push is xmltodict's push_data: a key seen again turns its value into a list.
func push(o *record.Object, key string, v any) {
	old, ok := o.Get(key)
	if !ok {
		o.Set(key, v)
		return
	}
	if l, isList := old.([]any); isList {
		o.Set(key, append(l, v))
		return
	}
	o.Set(key, []any{old, v})
}

func xmlName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// pySpace is Python's str.isspace, which str.strip removes.
func pySpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// charsetReader reads the encodings an XML declaration may name besides UTF-8 that expat
// reads itself: ISO-8859-1 and US-ASCII.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "iso-8859-1", "latin-1", "latin1", "us-ascii", "ascii":
		return &latin1{r: newRunes(in, "latin-1")}, nil
	}
	return nil, fmt.Errorf("the encoding %q is not supported", label)
}

// latin1 reads ISO-8859-1 text as UTF-8.
type latin1 struct {
	r   *runes
	buf []byte
}

func (l *latin1) Read(p []byte) (int, error) {
	for len(l.buf) < len(p) {
		c, err := l.r.decoded()
		if err != nil {
			if len(l.buf) == 0 {
				return 0, err
			}
			break
		}
		l.buf = append(l.buf, string(c)...)
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// xmlDecoder is XmlDecoder: the whole body, its XML read as the CDK reads it.
func xmlDecoder(_ *Decoder, _ *manifest.Decoder, in input) (values, error) {
	return &whole{read: func() ([]byte, error) {
		b, err := in.all()
		if err != nil {
			return nil, err
		}
		return xmlToJSON(b)
	}}, nil
}
