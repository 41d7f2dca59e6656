// Package template compiles the Jinja2-style templates of a definition
// ({{ expression }}, {% if %}, {% set %}, {% for %}, {% raw %}, {# #}) once,
// to expr programs, and evaluates them with Jinja2/Python semantics:
// undefined values, Python truthiness, and/or returning an operand, exact
// JSON numbers.
//
// Each expression is translated to expr source in which nearly every
// operation is a call to one of this package's functions (_attr, _add,
// f_default...), so the semantics are ours, not expr's; statements are run
// by a small evaluator around the compiled programs.
package template

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Error is a compile or evaluation problem. Offset is the byte offset inside
// the template source where the problem is, so that the caller can compute a
// file:line:col; Hint is a suggestion such as "did you mean `config`?".
type Error struct {
	Offset int
	Msg    string
	Hint   string
	// Class is the Python exception an evaluation failure stands for (ClassOther for a
	// compile error).
	Class ErrorClass
}

// Error returns the message, followed by the hint when there is one.
func (e *Error) Error() string {
	if e.Hint != "" {
		return e.Msg + " (" + e.Hint + ")"
	}
	return e.Msg
}

// Template is a compiled template. It is safe for concurrent use.
type Template struct {
	src     string
	literal bool
	reads   []string
	keys    []KeyRead
	body    []rnode
	single  *prog // the template is one {{ expression }}
	fast    *fastPath
	nslots  int
	consts  []any
	impure  bool // see Deterministic
	// plain: the body is text and {{ }} of fastPaths only, which need no frame.
	plain bool
	// size is the longest text the template rendered so far (up to maxSizeHint): the
	// next rendering reserves that much at once rather than growing its text.
	size atomic.Int32
}

const maxSizeHint = 4 << 10

// prog is one compiled expression and where it sits in the source.
type prog struct {
	p   *vm.Program
	pos int
}

type rnode interface{}

type (
	rText struct{ s string }
	rOut  struct {
		p    prog
		fast *fastPath // the expression is a constant-key access: no program run
	}
	rIf struct {
		conds  []prog
		bodies [][]rnode
		els    []rnode
	}
	rSet struct {
		slots []int
		p     *prog
		attr  string
		body  []rnode
		pos   int
	}
	rFor struct {
		pos      int
		slots    []int
		loopSlot int
		inits    []slotInit
		iter     prog
		cond     *prog
		body     []rnode
		els      []rnode
	}
)

// slotInit copies an outer value into a loop-local slot when a loop starts.
type slotInit struct {
	dst, src int // src < 0: read the free variable name
	name     string
}

// frame is the state of one evaluation, reached by expr programs as $env.
type frame struct {
	vars   map[string]any
	locals []any
	consts []any
	// steps and work count against maxSteps and maxWork; err is the first limit hit.
	steps, work int
	err         error
}

type cacheKey struct{ src, vars string }

var (
	cache     sync.Map // cacheKey -> *Template
	cacheSize atomic.Int64
)

// maxCached bounds the cache; a definition has a few thousand templates.
const maxCached = 10_000

// Compile parses and compiles src once. vars are the names of the free
// variables the template may read (config, parameters, response...);
// reading any other is a compile error. The error is always an *Error.
// Compiled templates are cached by source and variable list.
func Compile(src string, vars []string) (*Template, error) {
	key := cacheKey{src: src, vars: strings.Join(vars, "\x00")}
	if t, ok := cache.Load(key); ok {
		return t.(*Template), nil
	}
	t, err := compile(src, vars)
	if err != nil {
		return nil, err
	}
	if !t.literal && cacheSize.Load() < maxCached {
		if _, loaded := cache.LoadOrStore(key, t); !loaded {
			cacheSize.Add(1)
		}
	}
	return t, nil
}

func compile(src string, vars []string) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &Error{Offset: 0, Msg: fmt.Sprintf("internal error compiling template: %v", r)}
		}
	}()
	t = &Template{src: src}
	if !strings.Contains(src, "{{") && !strings.Contains(src, "{%") && !strings.Contains(src, "{#") {
		t.literal = true
		return t, nil
	}
	if len(src) > maxSource {
		return nil, &Error{Offset: 0, Msg: fmt.Sprintf("a template with tags longer than %d KiB %s", maxSource>>10, limitNote)}
	}
	body, err := parseTemplate(src)
	if err != nil {
		return nil, err
	}
	g := &gen{src: src, vars: map[string]bool{}, reads: map[string]bool{}, scope: &scope{names: map[string]int{}}}
	for _, v := range vars {
		g.vars[v] = true
	}
	c := &compiler{g: g}
	if out, ok := trimmedSingle(body); ok {
		p, err := c.prog(out.e, out.pos)
		if err != nil {
			return nil, err
		}
		t.single = &p
		t.fast = newFastPath(out.e, g)
	} else if t.body, err = c.nodes(body); err != nil {
		return nil, err
	}
	t.nslots = g.nslots
	t.consts = g.consts
	t.impure = g.impure
	t.plain = t.body != nil
	for _, n := range t.body {
		switch x := n.(type) {
		case *rText:
		case *rOut:
			t.plain = t.plain && x.fast != nil
		default:
			t.plain = false
		}
	}
	for v := range g.reads {
		t.reads = append(t.reads, v)
	}
	sort.Strings(t.reads)
	t.keys = g.keys
	return t, nil
}

type compiler struct{ g *gen }

func (c *compiler) prog(e expr, pos int) (prog, error) {
	code, err := c.g.expr(e)
	if err != nil {
		return prog{}, err
	}
	p, err := exprlang.Compile(code, exprOptions()...)
	if err != nil {
		return prog{}, &Error{Offset: pos, Msg: "cannot compile expression: " + err.Error()}
	}
	return prog{p: p, pos: pos}, nil
}

func (c *compiler) nodes(body []stmt) ([]rnode, error) {
	var out []rnode
	for _, s := range body {
		n, err := c.node(s)
		if err != nil {
			return nil, err
		}
		if n != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

func (c *compiler) node(s stmt) (rnode, error) {
	g := c.g
	switch x := s.(type) {
	case *textStmt:
		return &rText{s: x.s}, nil
	case *outStmt:
		p, err := c.prog(x.e, x.pos)
		if err != nil {
			return nil, err
		}
		return &rOut{p: p, fast: newFastPath(x.e, g)}, nil
	case *ifStmt:
		n := &rIf{}
		for i, cond := range x.conds {
			p, err := c.prog(cond, cond.position())
			if err != nil {
				return nil, err
			}
			b, err := c.nodes(x.bodies[i])
			if err != nil {
				return nil, err
			}
			n.conds = append(n.conds, p)
			n.bodies = append(n.bodies, b)
		}
		els, err := c.nodes(x.els)
		if err != nil {
			return nil, err
		}
		n.els = els
		return n, nil
	case *setStmt:
		n := &rSet{pos: x.pos, attr: x.attr}
		if x.e != nil {
			p, err := c.prog(x.e, x.e.position())
			if err != nil {
				return nil, err
			}
			n.p = &p
		} else {
			b, err := c.nodes(x.body)
			if err != nil {
				return nil, err
			}
			n.body = b
		}
		if x.attr != "" {
			slot, ok := g.scope.lookup(x.names[0])
			if !ok {
				return nil, g.errAt(x.namePos[0], fmt.Sprintf("unknown variable `%s`", x.names[0]), g.visibleNames(), x.names[0])
			}
			n.slots = []int{slot}
			return n, nil
		}
		for _, name := range x.names {
			slot, ok := g.scope.names[name]
			if !ok {
				slot = g.declare(name)
			}
			n.slots = append(n.slots, slot)
		}
		return n, nil
	case *forStmt:
		iter, err := c.prog(x.iter, x.iter.position())
		if err != nil {
			return nil, err
		}
		n := &rFor{pos: x.pos, iter: iter}
		outer := g.scope
		g.scope = &scope{parent: outer, names: map[string]int{}}
		defer func() { g.scope = outer }()
		// Names set inside the body are local to the loop, starting from
		// the outer value, like Jinja.
		for _, name := range assigned(x.body) {
			slot := g.declare(name)
			init := slotInit{dst: slot, src: -1, name: name}
			if s, ok := outer.lookup(name); ok {
				init.src = s
			} else if g.vars[name] {
				g.reads[name] = true
			} else {
				init.name = ""
			}
			n.inits = append(n.inits, init)
		}
		for _, name := range x.names {
			n.slots = append(n.slots, g.declare(name))
		}
		n.loopSlot = g.declare("loop")
		if x.cond != nil {
			p, err := c.prog(x.cond, x.cond.position())
			if err != nil {
				return nil, err
			}
			n.cond = &p
		}
		if n.body, err = c.nodes(x.body); err != nil {
			return nil, err
		}
		g.scope = outer
		if n.els, err = c.nodes(x.els); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, fmt.Errorf("unexpected statement %T", s)
}

// assigned lists the names set in a loop body (not in nested loops).
func assigned(body []stmt) []string {
	seen := map[string]bool{}
	var out []string
	var walk func([]stmt)
	walk = func(b []stmt) {
		for _, s := range b {
			switch x := s.(type) {
			case *setStmt:
				if x.attr == "" {
					for _, n := range x.names {
						if !seen[n] {
							seen[n] = true
							out = append(out, n)
						}
					}
				}
			case *ifStmt:
				for _, body := range x.bodies {
					walk(body)
				}
				walk(x.els)
			}
		}
	}
	walk(body)
	return out
}

// Source returns the template text as written.
func (t *Template) Source() string { return t.src }

// IsLiteral reports that the source has no {{ }} or {% %} at all: it is
// plain text and Eval returns it unchanged.
func (t *Template) IsLiteral() bool { return t.literal }

// ReadsOnly reports whether every free variable the template references is one of names
// (true for a template that reads none).
func (t *Template) ReadsOnly(names ...string) bool {
	for _, r := range t.reads {
		if !slices.Contains(names, r) {
			return false
		}
	}
	return true
}

// Deterministic reports whether the template gives the same result every time it is
// evaluated with the same variables: it reads no clock (now_utc, today_utc, day_delta...),
// makes no random UUID, and changes no value it is given (append, extend, update, pop).
func (t *Template) Deterministic() bool { return !t.impure }

// Reads reports whether the template references the free variable name.
func (t *Template) Reads(name string) bool {
	i := sort.SearchStrings(t.reads, name)
	return i < len(t.reads) && t.reads[i] == name
}

// KeyRead is a constant key a template reads from a free variable: config['base_url'] and
// config.base_url read Key "base_url" of Var "config". Offset is the byte offset of the key
// in the source. config.get('base_url', default) is not one: it says the key may be absent.
type KeyRead struct {
	Var, Key string
	Offset   int
}

// KeysRead lists the constant keys the template reads from the free variable name, in the
// order they are written; a key read by a computed subscript (config[name]) is not listed.
func (t *Template) KeysRead(name string) []KeyRead {
	var out []KeyRead
	for _, k := range t.keys {
		if k.Var == name {
			out = append(out, k)
		}
	}
	return out
}

var (
	framePool = sync.Pool{New: func() any { return &frame{} }}
	vmPool    = sync.Pool{New: func() any { return &vm.VM{} }}
)

// Eval evaluates the template. A template that is exactly one
// {{ expression }} (surrounding whitespace allowed) yields the expression's
// own value: int64, float64, json.Number, string, bool, nil, Undefined,
// []any, map[string]any or a datetime; any other template yields the
// rendered string. A failure is an *Error; Eval never panics.
func (t *Template) Eval(vars map[string]any) (res any, err error) {
	switch {
	case t.literal:
		return t.src, nil
	case t.fast != nil:
		return norm(t.fast.eval(vars)), nil
	case t.single != nil:
		return t.evalSingle(vars)
	}
	text, err := t.text(vars)
	if err != nil {
		return nil, err
	}
	return text, nil
}

// Render evaluates the template and renders the result as text.
func (t *Template) Render(vars map[string]any) (string, error) {
	if t.literal || t.fast != nil || t.single != nil {
		v, err := t.Eval(vars)
		if err != nil {
			return "", err
		}
		return ToString(v), nil
	}
	return t.text(vars)
}

// newFrame is a frame from the pool for one evaluation; release gives it back.
func (t *Template) newFrame(vars map[string]any) *frame {
	fr := framePool.Get().(*frame)
	fr.vars, fr.consts, fr.steps, fr.work, fr.err = vars, t.consts, 0, 0, nil
	if cap(fr.locals) < t.nslots {
		fr.locals = make([]any, t.nslots)
	}
	fr.locals = fr.locals[:t.nslots]
	return fr
}

func release(fr *frame) {
	clear(fr.locals)
	fr.vars, fr.consts = nil, nil
	framePool.Put(fr)
}

// internal is the error of a panic while evaluating (a bug of ours, never a crash).
func (t *Template) internal(r any) error {
	return &Error{Offset: 0, Msg: fmt.Sprintf("internal error evaluating template %q: %v", t.src, r)}
}

// evalSingle evaluates a template that is one {{ expression }}.
func (t *Template) evalSingle(vars map[string]any) (res any, err error) {
	fr := t.newFrame(vars)
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, t.internal(r)
		}
		release(fr)
	}()
	v, err := t.run(*t.single, fr)
	if err == nil {
		if err = checkResult(v); err != nil {
			return nil, t.limit(t.single.pos, err)
		}
	}
	return norm(v), err
}

// text renders a template of text, tags and statements.
func (t *Template) text(vars map[string]any) (res string, err error) {
	var b strings.Builder
	if n := t.size.Load(); n > 0 {
		b.Grow(int(n))
	}
	if t.plain {
		err = t.writePlain(&b, vars)
	} else {
		err = t.execFrame(&b, vars)
	}
	if err != nil {
		return "", err
	}
	if n := b.Len(); n > int(t.size.Load()) && n <= maxSizeHint {
		t.size.Store(int32(n))
	}
	return b.String(), nil
}

// execFrame runs the body with a frame of its own.
func (t *Template) execFrame(b *strings.Builder, vars map[string]any) (err error) {
	fr := t.newFrame(vars)
	defer func() {
		if r := recover(); r != nil {
			err = t.internal(r)
		}
		release(fr)
	}()
	return t.exec(t.body, fr, b)
}

// writePlain writes a plain body (see Template.plain), which needs no frame.
func (t *Template) writePlain(b *strings.Builder, vars map[string]any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = t.internal(r)
		}
	}()
	for _, n := range t.body {
		if err := t.writeFast(b, n, vars); err != nil {
			return err
		}
	}
	return nil
}

// writeFast writes a text node, or an output node whose expression is a fastPath.
func (t *Template) writeFast(b *strings.Builder, n rnode, vars map[string]any) error {
	if x, ok := n.(*rText); ok {
		b.WriteString(x.s)
		if b.Len() > maxValue {
			return &Error{Offset: 0, Msg: errOutput.Error()}
		}
		return nil
	}
	x := n.(*rOut)
	if text, ok := x.fast.text(vars); ok {
		if b.Len()+len(text) > maxValue {
			return t.limit(x.p.pos, errOutput)
		}
		b.Write(text)
		return nil
	}
	s := ToString(norm(x.fast.eval(vars)))
	if b.Len()+len(s) > maxValue {
		return t.limit(x.p.pos, errOutput)
	}
	b.WriteString(s)
	return nil
}

func (t *Template) run(p prog, fr *frame) (any, error) {
	m := vmPool.Get().(*vm.VM)
	out, err := m.Run(p.p, fr)
	vmPool.Put(m)
	if err != nil {
		msg := err.Error()
		var inner error = err
		for {
			u := errors.Unwrap(inner)
			if u == nil {
				break
			}
			inner = u
		}
		if inner != err {
			msg = inner.Error()
		}
		if fe, ok := inner.(*Error); ok {
			return nil, fe
		}
		return nil, &Error{Offset: p.pos, Msg: fmt.Sprintf("evaluating %s: %s", excerpt(t.src, p.pos), msg), Class: classOf(inner)}
	}
	return out, nil
}

// limit is the error of a limit reached by the tag at pos.
func (t *Template) limit(pos int, err error) error {
	return &Error{Offset: pos, Msg: fmt.Sprintf("evaluating %s: %s", excerpt(t.src, pos), err)}
}

// excerpt is the tag of src around pos, from its {{ or {% on, for messages.
func excerpt(src string, pos int) string {
	if i := max(strings.LastIndex(src[:pos], "{{"), strings.LastIndex(src[:pos], "{%")); i >= 0 && !strings.Contains(src[i:pos], "}}") && !strings.Contains(src[i:pos], "%}") {
		pos = i
	}
	s := src[pos:]
	end := len(s)
	for _, delim := range []string{"}}", "%}"} {
		if i := strings.Index(s, delim); i >= 0 && i+2 < end {
			end = i + 2
		}
	}
	s = s[:end]
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return "`" + s + "`"
}

func (t *Template) exec(nodes []rnode, fr *frame, b *strings.Builder) error {
	for _, n := range nodes {
		switch x := n.(type) {
		case *rText:
			if err := t.writeFast(b, x, fr.vars); err != nil {
				return err
			}
		case *rOut:
			if x.fast != nil {
				if err := t.writeFast(b, x, fr.vars); err != nil {
					return err
				}
				continue
			}
			v, err := t.run(x.p, fr)
			if err != nil {
				return err
			}
			s := ToString(v)
			if b.Len()+len(s) > maxValue {
				return t.limit(x.p.pos, errOutput)
			}
			b.WriteString(s)
		case *rIf:
			done := false
			for i, c := range x.conds {
				v, err := t.run(c, fr)
				if err != nil {
					return err
				}
				if Truthy(v) {
					if err := t.exec(x.bodies[i], fr, b); err != nil {
						return err
					}
					done = true
					break
				}
			}
			if !done {
				if err := t.exec(x.els, fr, b); err != nil {
					return err
				}
			}
		case *rSet:
			var v any
			if x.p != nil {
				var err error
				if v, err = t.run(*x.p, fr); err != nil {
					return err
				}
			} else {
				var sb strings.Builder
				if err := t.exec(x.body, fr, &sb); err != nil {
					return err
				}
				v = sb.String()
			}
			if x.attr != "" {
				ns, ok := fr.locals[x.slots[0]].(*namespace)
				if !ok {
					return &Error{Offset: x.pos, Msg: "cannot assign an attribute of a value that is not a namespace()"}
				}
				ns.m[x.attr] = v
				continue
			}
			if err := assign(fr, x.slots, v, x.pos); err != nil {
				return err
			}
		case *rFor:
			if err := t.loop(x, fr, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func assign(fr *frame, slots []int, v any, pos int) error {
	if len(slots) == 1 {
		fr.locals[slots[0]] = v
		return nil
	}
	l, err := iterate(v)
	if err != nil || len(l) != len(slots) {
		return &Error{Offset: pos, Msg: fmt.Sprintf("cannot unpack %s into %d names", typeName(v), len(slots))}
	}
	for i, s := range slots {
		fr.locals[s] = l[i]
	}
	return nil
}

func (t *Template) loop(x *rFor, fr *frame, b *strings.Builder) error {
	seq, err := t.run(x.iter, fr)
	if err != nil {
		return err
	}
	items, err := iterate(seq)
	if err != nil {
		return &Error{Offset: x.pos, Msg: "for loop: " + err.Error()}
	}
	for _, in := range x.inits {
		switch {
		case in.src >= 0:
			fr.locals[in.dst] = fr.locals[in.src]
		case in.name != "":
			v, ok := fr.vars[in.name]
			if !ok {
				v = Undefined
			}
			fr.locals[in.dst] = v
		default:
			fr.locals[in.dst] = Undefined
		}
	}
	if x.cond != nil {
		var kept []any
		for _, it := range items {
			if !fr.spend(1) {
				return t.limit(x.pos, fr.err)
			}
			if err := assign(fr, x.slots, it, x.pos); err != nil {
				return err
			}
			v, err := t.run(*x.cond, fr)
			if err != nil {
				return err
			}
			if Truthy(v) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return t.exec(x.els, fr, b)
	}
	li := &loopInfo{items: items}
	fr.locals[x.loopSlot] = li
	for i, it := range items {
		if !fr.spend(1) {
			return t.limit(x.pos, fr.err)
		}
		li.i = i
		if err := assign(fr, x.slots, it, x.pos); err != nil {
			return err
		}
		if err := t.exec(x.body, fr, b); err != nil {
			return err
		}
	}
	return nil
}

// loopInfo is the loop variable of a for loop.
type loopInfo struct {
	items []any
	i     int
}

func (l *loopInfo) attr(name string) any {
	n := len(l.items)
	switch name {
	case "index":
		return int64(l.i + 1)
	case "index0":
		return int64(l.i)
	case "revindex":
		return int64(n - l.i)
	case "revindex0":
		return int64(n - l.i - 1)
	case "first":
		return l.i == 0
	case "last":
		return l.i == n-1
	case "length":
		return int64(n)
	case "previtem":
		if l.i > 0 {
			return l.items[l.i-1]
		}
	case "nextitem":
		if l.i < n-1 {
			return l.items[l.i+1]
		}
	}
	return Undefined
}

// namespace is the mutable object namespace() returns.
type namespace struct{ m map[string]any }

// templateRef is Jinja's `self`, a TemplateReference: it gives the template's blocks by name.
// Templates here have no blocks, so each attribute or item of it is undefined, as Jinja
// yields for an unknown block ({{ self.name }} renders empty; the CDK then falls back to the
// field's default). Written as a value, it is the text Jinja renders.
type templateRef struct{}

func (templateRef) String() string { return "<TemplateReference None>" }
