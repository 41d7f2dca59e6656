package yamlguard

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestReadAllStopsAtTheLimit(t *testing.T) {
	// An endless reader, like /dev/zero: ReadAll must read limit+1 bytes and stop.
	r := &counting{r: zeros{}}
	_, err := ReadAll(r, 1000)
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != "larger than 1000 bytes" {
		t.Fatalf("err = %v", err)
	}
	if r.n != 1001 {
		t.Errorf("read %d bytes, want 1001", r.n)
	}
	data, err := ReadAll(strings.NewReader("abc"), 3)
	if err != nil || string(data) != "abc" {
		t.Errorf("at the limit: %q, %v", data, err)
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path, 4); err == nil || err.Error() != "larger than 4 bytes" {
		t.Errorf("a regular file over the limit: %v", err)
	}
	if data, err := ReadFile(path, 5); err != nil || string(data) != "a: 1\n" {
		t.Errorf("within the limit: %q, %v", data, err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "nope"), 5); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCheckEntries(t *testing.T) {
	src := []byte("a: 1\nb: [1, 2]\n")
	// The separators are the two colons, the bracket and the comma at line 2, column 6.
	if _, _, ok := CheckEntries(src, 4); !ok {
		t.Error("4 separators within a limit of 4")
	}
	line, col, ok := CheckEntries(src, 3)
	if ok || line != 2 || col != 6 {
		t.Errorf("limit 4: %d:%d ok=%v, want 2:6", line, col, ok)
	}
}

// The bound CheckEntries relies on: a document with n separators has at most 2n+3 nodes.
func TestEntriesBoundNodes(t *testing.T) {
	for _, src := range []string{
		"{a, b, c, d}", "[a, b, c]", "- \n- \n- \n", "a:\nb:\nc:\n", "? a\n? b\n", "[a: b, c: d]",
		"- - - x\n", "a: [1, {b: [2, 3]}]\n", "x", "", "[{}, {}, []]", "{? a, ? b}", "a: &x [1]\nb: *x\n",
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		seps := 0
		for _, c := range []byte(src) {
			if strings.IndexByte(",[{:-?", c) >= 0 {
				seps++
			}
		}
		if n := count(&doc); n > 2*seps+3 {
			t.Errorf("%q: %d nodes for %d separators", src, n, seps)
		}
	}
}

func count(n *yaml.Node) int {
	c := 1
	for _, ch := range n.Content {
		c += count(ch)
	}
	return c
}

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

func TestCheck(t *testing.T) {
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	for _, tt := range []struct {
		name, src          string
		maxNodes, maxDepth int
		kind               Kind
		line, col          int
	}{
		// The document and its mapping (2), the keys a, b, c (3), a (1+10), b (1+10×11)
		// and c (1+10×111): 1238 nodes. The walk counts them in document order, each alias
		// its anchor's size: the last *b of c goes one beyond 1237.
		{"within", laughs, 1238, 10, 0, 0, 0},
		{"one node too many", laughs, 1237, 10, TooManyNodes, 3, 44},
		{"the first alias beyond the budget", laughs, 200, 10, TooManyNodes, 3, 8},
		{"a recursive alias", "a: &x {b: [*x]}\n", 100, 10, RecursiveAlias, 1, 12},
		{"an alias nests its value where it stands", "a: &x [[[1]]]\nb: [[*x]]\n", 100, 5, TooDeep, 2, 6},
		{"nesting as written", "a: [[[[1]]]]\n", 100, 5, TooDeep, 1, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(parse(t, tt.src), tt.maxNodes, tt.maxDepth, nil)
			if tt.kind == 0 {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			var p *Problem
			if !errors.As(err, &p) {
				t.Fatalf("err = %v, want a problem", err)
			}
			if p.Kind != tt.kind || p.Node.Line != tt.line || p.Node.Column != tt.col {
				t.Errorf("kind %d at %d:%d, want %d at %d:%d", p.Kind, p.Node.Line, p.Node.Column, tt.kind, tt.line, tt.col)
			}
		})
	}
}

// A billion laughs of nine levels is checked in a walk of the nodes as written.
func TestCheckIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	calls := 0
	err := Check(parse(t, b.String()), 1<<62, 100, func() bool { calls++; return false })
	if err != nil {
		t.Fatal(err)
	}
	// 114 nodes as written: the stop function, asked every 1024 collections walked, is
	// never asked.
	if calls != 0 {
		t.Errorf("the walk visited more than 1024 collections (%d looks at stop)", calls)
	}
}

func TestCheckStops(t *testing.T) {
	src := "a: [" + strings.Repeat("[1], ", 10000) + "1]\n"
	calls := 0
	err := Check(parse(t, src), 1<<30, 100, func() bool { calls++; return true })
	if !errors.Is(err, ErrCanceled) || calls != 1 {
		t.Errorf("err = %v after %d looks, want ErrCanceled after 1", err, calls)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type counting struct {
	r io.Reader
	n int
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
