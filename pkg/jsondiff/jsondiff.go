// Package jsondiff finds the first difference between two JSON documents and names it by
// its JSON path: `$.user.name: got "a", expected "b"`. Documents are compared as they are
// written: key order counts, and numbers are compared by their spelling (1.50 is not 1.5),
// as connector writes records byte for byte.
package jsondiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"connector/pkg/record"
)

// Diff is a difference at Path between two documents: Got and Want are the values there as
// compact JSON (shortened), or "absent"; Note, when set, says what differs instead (key
// order, the number of items).
type Diff struct {
	Path      string
	Got, Want string
	Note      string
}

// String is "PATH: got X, expected Y" (or "PATH: NOTE").
func (d *Diff) String() string { return d.Format("expected") }

// Format is String with another word for the expected side ("recorded").
func (d *Diff) Format(want string) string {
	if d.Note != "" {
		return d.Path + ": " + d.Note
	}
	return fmt.Sprintf("%s: got %s, %s %s", d.Path, d.Got, want, d.Want)
}

// Equal decides whether two strings of the documents are the same; nil is ==.
type Equal func(got, want string) bool

// First returns the first difference between got and want, nil when they are the same
// document. It fails when either is not one JSON value.
func First(got, want []byte, eq Equal) (*Diff, error) {
	g, err := Parse(got)
	if err != nil {
		return nil, fmt.Errorf("got: %w", err)
	}
	w, err := Parse(want)
	if err != nil {
		return nil, fmt.Errorf("expected: %w", err)
	}
	if eq == nil {
		eq = func(a, b string) bool { return a == b }
	}
	return compare("$", g, w, eq), nil
}

// Node is a parsed JSON value that keeps key order and number spellings.
type Node struct {
	// Kind is one of { [ " 0 t f n (object, array, string, number, true, false, null).
	Kind  byte
	Text  string // a string's value, a number's spelling
	Keys  []string
	Items []*Node // an object's values (in Keys order) or an array's items
}

// maxDepth bounds the nesting Parse accepts.
const maxDepth = 512

// Parse reads one JSON value.
func Parse(data []byte) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("no JSON value")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &Node{Kind: '{'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Keys = append(n.Keys, kt.(string))
				n.Items = append(n.Items, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &Node{Kind: '['}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Items = append(n.Items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &Node{Kind: '"', Text: t}, nil
	case json.Number:
		return &Node{Kind: '0', Text: t.String()}, nil
	case bool:
		if t {
			return &Node{Kind: 't'}, nil
		}
		return &Node{Kind: 'f'}, nil
	case nil:
		return &Node{Kind: 'n'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func compare(path string, g, w *Node, eq Equal) *Diff {
	if g.Kind != w.Kind {
		return &Diff{Path: path, Got: Show(g), Want: Show(w)}
	}
	switch g.Kind {
	case '"':
		if !eq(g.Text, w.Text) {
			return &Diff{Path: path, Got: Show(g), Want: Show(w)}
		}
	case '0':
		if g.Text != w.Text {
			return &Diff{Path: path, Got: Show(g), Want: Show(w)}
		}
	case '[':
		for i := range min(len(g.Items), len(w.Items)) {
			if d := compare(fmt.Sprintf("%s[%d]", path, i), g.Items[i], w.Items[i], eq); d != nil {
				return d
			}
		}
		if len(g.Items) != len(w.Items) {
			i := min(len(g.Items), len(w.Items))
			d := &Diff{Path: fmt.Sprintf("%s[%d]", path, i), Got: "absent", Want: "absent"}
			if i < len(g.Items) {
				d.Got = Show(g.Items[i])
			} else {
				d.Want = Show(w.Items[i])
			}
			return d
		}
	case '{':
		for i, k := range g.Keys {
			j := indexOf(w.Keys, k)
			if j < 0 {
				return &Diff{Path: Child(path, k), Got: Show(g.Items[i]), Want: "absent"}
			}
			if d := compare(Child(path, k), g.Items[i], w.Items[j], eq); d != nil {
				return d
			}
		}
		for j, k := range w.Keys {
			if indexOf(g.Keys, k) < 0 {
				return &Diff{Path: Child(path, k), Got: "absent", Want: Show(w.Items[j])}
			}
		}
		if len(g.Keys) != len(w.Keys) {
			// The same names, one of them repeated on one side.
			return &Diff{Path: path, Note: fmt.Sprintf("a key repeated: got %s, expected %s", keyList(g.Keys), keyList(w.Keys))}
		}
		for i, k := range g.Keys {
			if w.Keys[i] != k {
				return &Diff{Path: path, Note: fmt.Sprintf("the same keys in another order: got %s, expected %s",
					keyList(g.Keys), keyList(w.Keys))}
			}
		}
	}
	return nil
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

func keyList(keys []string) string {
	if len(keys) > 8 {
		return "[" + strings.Join(keys[:8], " ") + " …]"
	}
	return "[" + strings.Join(keys, " ") + "]"
}

// Child is the path of key inside the object at path: $.a, or $["a b"] for a key that is
// not a plain name.
func Child(path, key string) string {
	plain := key != ""
	for i, c := range key {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// maxShown is how much of a value a difference shows.
const maxShown = 80

// Show is n as compact JSON, shortened to about maxShown bytes.
func Show(n *Node) string {
	var b strings.Builder
	write(&b, n)
	s := b.String()
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func write(b *strings.Builder, n *Node) {
	if b.Len() > maxShown {
		return
	}
	switch n.Kind {
	case '"':
		out, _ := record.Marshal(n.Text) // no HTML escaping: "<" as the file has it
		b.Write(out)
	case '0':
		b.WriteString(n.Text)
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	case 'n':
		b.WriteString("null")
	case '[':
		b.WriteByte('[')
		for i, it := range n.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			write(b, it)
		}
		b.WriteByte(']')
	case '{':
		b.WriteByte('{')
		for i, k := range n.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			out, _ := record.Marshal(k)
			b.Write(out)
			b.WriteByte(':')
			write(b, n.Items[i])
		}
		b.WriteByte('}')
	}
}
