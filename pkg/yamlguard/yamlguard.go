// Package yamlguard reads YAML within limits, so that no input file can make the tool hang or
// eat memory: a cap on the bytes read (a device such as /dev/zero included), a cap on the
// YAML entries checked before yaml.v3 builds its node tree, and a walk of that tree that
// follows every alias as if it were a copy, stopping at a node count and a depth.
//
// The callers (the definition and the testing values loaders) word the messages; this
// package says what was exceeded and where.
package yamlguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// TooLargeError is a file or stream longer than the limit it was read with.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string { return "larger than " + Bytes(e.Limit) }

// Bytes writes a size the way the limits are documented: 16 MiB, 512 KiB, 100 bytes.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file at path, which may be a regular file, a pipe or a device, and
// refuses one longer than limit bytes with a *TooLargeError, reading at most limit+1 bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(0)
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		if info.Size() > limit {
			return nil, &TooLargeError{Limit: limit}
		}
		size = info.Size()
	}
	return readAll(f, limit, size)
}

// ReadAll reads r to its end, or fails with a *TooLargeError after limit bytes.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	return readAll(r, limit, 0)
}

// readAll reads at most limit+1 bytes of r into a buffer made for size bytes (the size of
// a regular file: one allocation in the common case).
func readAll(r io.Reader, limit, size int64) ([]byte, error) {
	data := make([]byte, 0, max(size+1, 512))
	r = io.LimitReader(r, limit+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// separators are the bytes that can begin a YAML node: a flow collection or item (`[`, `{`,
// `,`), a mapping value (`:`), a block sequence item (`-`) or a complex key (`?`). Every node
// of a document but its root follows one of them, and one of them yields at most two nodes
// (a key and its implicit null value), so a document with n of them has at most 2n+3
// nodes. They are counted in the raw bytes, quotes and comments included: an upper bound
// that quoting cannot hide from.
var separators = [...]byte{',', '[', '{', ':', '-', '?'}

// CheckEntries counts the separators of src (see above). When there are more than limit,
// it returns the line and column (1-based, in bytes) of the first one beyond the limit, and
// ok false.
func CheckEntries(src []byte, limit int) (line, col int, ok bool) {
	n := 0
	for _, c := range separators {
		n += bytes.Count(src, []byte{c})
	}
	if n <= limit {
		return 0, 0, true
	}
	n, line, start := 0, 1, 0
	for i, c := range src {
		switch c {
		case '\n':
			line, start = line+1, i+1
		case ',', '[', '{', ':', '-', '?':
			n++
			if n > limit {
				return line, i - start + 1, false
			}
		}
	}
	return line, 1, false
}

// Kind says which limit a Problem exceeded.
type Kind int

// The problems Check finds.
const (
	// RecursiveAlias is an alias inside the node its anchor names: an endless value.
	RecursiveAlias Kind = iota + 1
	// TooManyNodes is a tree larger than the node limit once every alias is expanded.
	TooManyNodes
	// TooDeep is a tree nested deeper than the depth limit.
	TooDeep
)

// Problem is the first limit a tree exceeds, at the node where the walk stopped: the alias
// whose expansion went beyond the limit, or the node too deep.
type Problem struct {
	Kind Kind
	Node *yaml.Node
}

func (p *Problem) Error() string {
	switch p.Kind {
	case RecursiveAlias:
		return fmt.Sprintf("line %d: the alias *%s is inside the value it names", p.Node.Line, p.Node.Value)
	case TooManyNodes:
		return fmt.Sprintf("line %d: more nodes than the limit once the aliases are expanded", p.Node.Line)
	}
	return fmt.Sprintf("line %d: nested deeper than the limit", p.Node.Line)
}

// ErrCanceled is returned by Check when its stop function says so.
var ErrCanceled = errors.New("canceled")

// extent is the expanded size and height of an anchored node; a size of -1 marks a node
// being walked.
type extent struct{ size, height int }

type checker struct {
	maxNodes, maxDepth int
	// total is the number of nodes seen so far, each alias counting its anchor's size.
	total   int
	anchors map[*yaml.Node]extent
	stop    func() bool
	steps   int
	err     error
}

// Check walks the tree under root as if every alias were a copy of the node its anchor names
// and reports the first limit exceeded: a recursive alias, more than maxNodes nodes in
// all, or a nesting deeper than maxDepth (an alias nests its anchor's value where it
// stands). The work is linear in the nodes as written: the size of an anchored node is
// computed once. stop, when not nil, is asked now and then whether to give up; then Check
// returns ErrCanceled.
func Check(root *yaml.Node, maxNodes, maxDepth int, stop func() bool) error {
	c := &checker{maxNodes: maxNodes, maxDepth: maxDepth, stop: stop}
	c.walk(root, 0)
	return c.err
}

// walk counts the nodes under n, at depth, and returns its height.
func (c *checker) walk(n *yaml.Node, depth int) int {
	if n.Kind == yaml.ScalarNode {
		// Most nodes: counted, no more.
		if c.total++; c.total > c.maxNodes {
			c.fail(TooManyNodes, n)
		} else if depth > c.maxDepth {
			c.fail(TooDeep, n)
		}
		return 0
	}
	if c.err != nil {
		return 0
	}
	if c.stop != nil {
		if c.steps++; c.steps%1024 == 0 && c.stop() {
			c.err = ErrCanceled
			return 0
		}
	}
	if n.Kind == yaml.AliasNode {
		return c.alias(n, depth)
	}
	before := c.total
	if c.total++; c.total > c.maxNodes {
		c.fail(TooManyNodes, n)
		return 0
	}
	if depth > c.maxDepth {
		c.fail(TooDeep, n)
		return 0
	}
	if n.Anchor != "" {
		if c.anchors == nil {
			c.anchors = map[*yaml.Node]extent{}
		}
		c.anchors[n] = extent{size: -1}
	}
	height := 0
	for _, child := range n.Content {
		h := c.walk(child, depth+1)
		if c.err != nil {
			return 0
		}
		height = max(height, h+1)
	}
	if n.Anchor != "" {
		c.anchors[n] = extent{size: c.total - before, height: height}
	}
	return height
}

// alias counts an alias as a copy of its anchor's node.
func (c *checker) alias(n *yaml.Node, depth int) int {
	if n.Alias == nil {
		c.total++
		return 0
	}
	e, seen := c.anchors[n.Alias]
	if !seen {
		// An anchor outside the tree under root (yaml.v3 resolves anchors in document
		// order, so within a document it is always seen first): walk it here.
		before := c.total
		h := c.walk(n.Alias, depth)
		if n.Alias.Kind == yaml.ScalarNode {
			return h
		}
		e = extent{size: c.total - before, height: h}
		c.total = before
	}
	if e.size < 0 {
		c.fail(RecursiveAlias, n)
		return 0
	}
	switch c.total += e.size; {
	case c.total > c.maxNodes:
		c.fail(TooManyNodes, n)
	case depth+e.height > c.maxDepth:
		c.fail(TooDeep, n)
	}
	return e.height
}

func (c *checker) fail(k Kind, n *yaml.Node) {
	if c.err == nil {
		c.err = &Problem{Kind: k, Node: n}
	}
}
