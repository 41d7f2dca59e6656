package har

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// The file is written by hand rather than with encoding/json: bodies of megabytes are
// escaped in one pass without HTML escaping, and the layout is one line per field of an
// entry, so that a recording kept in a repository diffs by request.

// appendEntry appends e as JSON, indented to sit in the log's entries.
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, "      {\n        \"startedDateTime\": "...)
	b = appendString(b, e.Started.Format(time.RFC3339Nano))
	b = append(b, ",\n        \"time\": "...)
	b = appendMillis(b, e.Time)
	b = append(b, ",\n        \"request\": "...)
	b = appendRequest(b, &e.Request)
	b = append(b, ",\n        \"response\": "...)
	b = appendResponse(b, &e.Response)
	b = append(b, ",\n        \"cache\": {},\n        \"timings\": {\"send\": "...)
	b = appendMillis(b, e.Timings.Send)
	b = append(b, ", \"wait\": "...)
	b = appendMillis(b, e.Timings.Wait)
	b = append(b, ", \"receive\": "...)
	b = appendMillis(b, e.Timings.Receive)
	b = append(b, '}')
	for _, f := range [...]struct{ name, value string }{{"_kind", e.Kind}, {"_stream", e.Stream}, {"_error", e.Error}} {
		if f.value != "" {
			b = append(b, ",\n        \""...)
			b = append(b, f.name...)
			b = append(b, "\": "...)
			b = appendString(b, f.value)
		}
	}
	return append(b, "\n      }"...)
}

func appendRequest(b []byte, r *Request) []byte {
	b = append(b, `{"method": `...)
	b = appendString(b, r.Method)
	b = append(b, `, "url": `...)
	b = appendString(b, r.URL)
	b = append(b, `, "httpVersion": `...)
	b = appendString(b, r.HTTPVersion)
	b = append(b, `, "cookies": [], "headers": `...)
	b = appendPairs(b, r.Headers)
	b = append(b, `, "queryString": `...)
	b = appendPairs(b, r.QueryString)
	if r.PostData != nil {
		b = append(b, `, "postData": {"mimeType": `...)
		b = appendString(b, r.PostData.MimeType)
		b = append(b, `, "text": `...)
		b = appendString(b, r.PostData.Text)
		b = append(b, '}')
	}
	b = append(b, `, "headersSize": -1, "bodySize": `...)
	b = strconv.AppendInt(b, int64(r.BodySize), 10)
	return append(b, '}')
}

func appendResponse(b []byte, r *Response) []byte {
	b = append(b, `{"status": `...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `, "statusText": `...)
	b = appendString(b, r.StatusText)
	b = append(b, `, "httpVersion": `...)
	b = appendString(b, r.HTTPVersion)
	b = append(b, `, "cookies": [], "headers": `...)
	b = appendPairs(b, r.Headers)
	b = append(b, `, "content": {"size": `...)
	b = strconv.AppendInt(b, int64(r.Content.Size), 10)
	b = append(b, `, "mimeType": `...)
	b = appendString(b, r.Content.MimeType)
	b = append(b, `, "text": `...)
	b = appendString(b, r.Content.Text)
	if r.Content.Encoding != "" {
		b = append(b, `, "encoding": `...)
		b = appendString(b, r.Content.Encoding)
	}
	b = append(b, `}, "redirectURL": `...)
	b = appendString(b, r.RedirectURL)
	b = append(b, `, "headersSize": -1, "bodySize": `...)
	b = strconv.AppendInt(b, int64(r.BodySize), 10)
	return append(b, '}')
}

func appendPairs(b []byte, pairs []NameValue) []byte {
	b = append(b, '[')
	for i, p := range pairs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"name": `...)
		b = appendString(b, p.Name)
		b = append(b, `, "value": `...)
		b = appendString(b, p.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendMillis appends a duration in milliseconds with at most three decimals.
func appendMillis(b []byte, ms float64) []byte {
	return strconv.AppendFloat(b, float64(int64(ms*1000))/1000, 'f', -1, 64)
}

// plain marks the bytes a JSON string holds as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: no HTML escaping, control characters as \u00XX,
// invalid UTF-8 as U+FFFD. Runs of plain bytes are copied whole.
func appendString(b []byte, s string) []byte {
	b = slices.Grow(b, len(s)+len(s)/8+2)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendHead appends the start of the file: the log up to its first entry.
func appendHead(b []byte, creator Creator, meta *Meta) ([]byte, error) {
	m, err := json.MarshalIndent(meta, "    ", "  ")
	if err != nil {
		return nil, err
	}
	b = append(b, "{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"creator\": {\"name\": "...)
	b = appendString(b, creator.Name)
	b = append(b, ", \"version\": "...)
	b = appendString(b, creator.Version)
	b = append(b, "},\n    \"_connector\": "...)
	b = append(b, m...)
	return append(b, ",\n    \"entries\": ["...), nil
}
