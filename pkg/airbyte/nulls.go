package airbyte

import "bytes"

// dropTopNulls removes, in place, the members of the JSON object text obj whose value is
// null, and returns what is left: {"a":1,"b":null,"c":{"d":null}} becomes
// {"a":1,"c":{"d":null}}. This is what the CDK writes in a RECORD: its serializer omits
// None values of the record's data dict (serpyco-rs' omit_none on Dict[str, Any]), not of
// the values nested in it. Text that is not an object, or that it cannot follow, is left
// as it is. The common case, an object with no "null" in it, is one search.
func dropTopNulls(obj []byte) []byte {
	if !bytes.Contains(obj, []byte("null")) {
		return obj
	}
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return obj
	}
	out := obj[:i+1] // written in place: out never passes the member being read
	i++
	first := true
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) {
			return obj
		}
		if obj[i] == '}' {
			return append(out, obj[i:]...)
		}
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
		start := i
		end, ok := skipString(obj, i)
		if !ok {
			return obj
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return obj
		}
		v := skipSpace(obj, i+1)
		vend, ok := skipValue(obj, v)
		if !ok {
			return obj
		}
		i = vend
		if string(obj[v:vend]) == "null" {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, obj[start:vend]...)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string starting at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return end, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
		}
		return i, false
	}
	// A number or a literal: up to the next delimiter.
	start := i
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
		i++
	}
	return i, i > start
}
