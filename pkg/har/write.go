package har

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
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

const hexDigits = "0123456789abcdef"

// Word-at-a-time constants: a byte of ones and of high bits in each lane.
const (
	lanes1 = 0x0101010101010101
	lanes8 = 0x8080808080808080
)

// zeroLanes marks with its high bit each byte of x that is zero, exactly: no carry crosses
// a lane.
func zeroLanes(x uint64) uint64 {
	return ^(((x &^ lanes8) + (lanes8 - lanes1)) | x) & lanes8
}

// special marks with its high bit each of the eight bytes of w (the first in the low lane)
// that appendString cannot copy as it is: a control character, '"', '\\', and with high set
// to lanes8, a byte of a multi-byte sequence. quotes marks the '"' and '\\' alone.
func special(w, high uint64) (all, quotes uint64) {
	quotes = zeroLanes(w^'"'*lanes1) | zeroLanes(w^'\\'*lanes1)
	// A byte below 0x20 is one whose low seven bits plus 0x60 stay below 0x80, high bit clear.
	control := ^(((w &^ lanes8) + 0x60*lanes1) | w) & lanes8
	return quotes | control | w&high, quotes
}

// appendString appends s as a JSON string: no HTML escaping, control characters as \u00XX,
// invalid UTF-8 as U+FFFD. The plain bytes are found and copied eight at a time, straight
// into the spare capacity of b; once a byte of a multi-byte sequence shows, the rest of s is
// checked for UTF-8 at once, so that a valid text is copied without decoding its runes.
func appendString(b []byte, s string) []byte {
	b = slices.Grow(b, len(s)+len(s)/4+32)
	b = append(b, '"')
	n := len(b)
	out := b[:cap(b)]
	// valid says the rest of s from the first byte >= 0x80 is UTF-8; checked says that has
	// been looked at.
	valid, checked := false, false
	high := uint64(lanes8)
	// The bytes of s, only read.
	sb := unsafe.Slice(unsafe.StringData(s), len(s))
	i := 0
	for i < len(s) {
		// Room for a word of escaped quotes and a word more.
		if len(out)-n < 32 {
			out = slices.Grow(out[:n], 2*(len(s)-i)+32)
			out = out[:cap(out)]
		}
		if i+8 <= len(s) {
			w := binary.LittleEndian.Uint64(sb[i:])
			m, q := special(w, high)
			binary.LittleEndian.PutUint64(out[n:], w)
			if m == 0 {
				i, n = i+8, n+8
				continue
			}
			if m == q {
				// Only quotes and backslashes: each is escaped in place, the bytes after
				// it stored again one further on.
				done := 0 // bytes of w written
				for ; q != 0; q &= q - 1 {
					k := bits.TrailingZeros64(q) >> 3
					n += k - done
					out[n], out[n+1] = '\\', byte(w>>(8*k))
					n += 2
					done = k + 1
					binary.LittleEndian.PutUint64(out[n:], w>>(8*done))
				}
				i, n = i+8, n+8-done
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			i, n = i+k, n+k
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			out[n] = c
			i, n = i+1, n+1
			continue
		}
		if c >= utf8.RuneSelf {
			if !checked {
				valid, checked = utf8.ValidString(s[i:]), true
				if valid {
					high = 0
				}
			}
			size := 1
			if !valid {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && size == 1 {
					n += copy(out[n:], `\ufffd`)
					i++
					continue
				}
			}
			n += copy(out[n:], s[i:i+size])
			i += size
			continue
		}
		switch c {
		case '"', '\\':
			out[n], out[n+1] = '\\', c
			n += 2
		case '\n':
			out[n], out[n+1] = '\\', 'n'
			n += 2
		case '\r':
			out[n], out[n+1] = '\\', 'r'
			n += 2
		case '\t':
			out[n], out[n+1] = '\\', 't'
			n += 2
		default:
			out[n], out[n+1], out[n+2], out[n+3], out[n+4], out[n+5] = '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]
			n += 6
		}
		i++
	}
	return append(out[:n], '"')
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
