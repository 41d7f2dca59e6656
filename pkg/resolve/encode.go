package resolve

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errNotFinite is a float JSON cannot hold: the manifest server (allow_nan=False) refuses it.
var errNotFinite = cdkErrorf("Out of range float values are not JSON compliant")

// MarshalJSON writes the object as the manifest server's answers do (json.dumps with
// separators "," and ":" and ensure_ascii off): keys in order, floats as Python writes them.
func (o *Object) MarshalJSON() ([]byte, error) { return Encode(o, "") }

// Encode writes v as JSON; with a non-empty indent, one entry per line as json.dumps(indent=…)
// lays it out.
func Encode(v any, indent string) ([]byte, error) {
	e := encoder{indent: indent}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.b, nil
}

type encoder struct {
	b      []byte
	indent string
}

func (e *encoder) newline(depth int) {
	if e.indent == "" {
		return
	}
	e.b = append(e.b, '\n')
	for range depth {
		e.b = append(e.b, e.indent...)
	}
}

func (e *encoder) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case bool:
		e.b = strconv.AppendBool(e.b, x)
	case string:
		e.b = appendString(e.b, x)
	case Number:
		if x.Float && (x.Text == "inf" || x.Text == "-inf" || x.Text == "nan") {
			return errNotFinite
		}
		e.b = append(e.b, x.Text...)
	case *List:
		if len(x.Items) == 0 {
			e.b = append(e.b, "[]"...)
			return nil
		}
		e.b = append(e.b, '[')
		for i, item := range x.Items {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.newline(depth + 1)
			if err := e.value(item, depth+1); err != nil {
				return err
			}
		}
		e.newline(depth)
		e.b = append(e.b, ']')
	case *Object:
		if x.Len() == 0 {
			e.b = append(e.b, "{}"...)
			return nil
		}
		e.b = append(e.b, '{')
		for i, k := range x.keys {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.newline(depth + 1)
			e.b = appendString(e.b, k)
			e.b = append(e.b, ':')
			if e.indent != "" {
				e.b = append(e.b, ' ')
			}
			if err := e.value(x.vals[k], depth+1); err != nil {
				return err
			}
		}
		e.newline(depth)
		e.b = append(e.b, '}')
	default:
		return errors.New("resolve: a value of an unknown kind")
	}
	return nil
}

// appendString writes s as json.dumps(ensure_ascii=False) does: only the quote, the
// backslash and the control characters are escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				b = append(b, c)
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r)
			i += size
			continue
		}
		switch c {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
		i++
	}
	return append(b, '"')
}

// canonical is the text json.dumps(v, sort_keys=True) gives, up to its spacing: equal texts
// mean equal values as the CDK's normalizer hashes them.
func canonical(v any) string {
	var sb strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case *Object:
			keys := append([]string(nil), x.keys...)
			slices.Sort(keys) // code point order, as Python sorts str keys
			sb.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					sb.WriteByte(',')
				}
				sb.Write(appendString(nil, k))
				sb.WriteByte(':')
				walk(x.vals[k])
			}
			sb.WriteByte('}')
		case *List:
			sb.WriteByte('[')
			for i, item := range x.Items {
				if i > 0 {
					sb.WriteByte(',')
				}
				walk(item)
			}
			sb.WriteByte(']')
		case Number:
			sb.WriteString(x.Text)
		default:
			b, _ := Encode(v, "")
			sb.Write(b)
		}
	}
	walk(v)
	return sb.String()
}
