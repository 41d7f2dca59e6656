package template

import (
	"fmt"
	"strconv"
	"strings"
)

// Expression nodes.
type expr interface{ position() int }

type (
	litExpr struct {
		pos int
		v   any
	}
	nameExpr struct {
		pos  int
		name string
	}
	attrExpr struct {
		pos  int
		x    expr
		name string
	}
	itemExpr struct {
		pos  int
		x, k expr
	}
	sliceExpr struct {
		pos             int
		x, lo, hi, step expr
	}
	kwArg struct {
		pos  int
		name string
		v    expr
	}
	callExpr struct {
		pos     int // of the function or method name
		name    string
		recv    expr // nil for a global function
		args    []expr
		kw      []kwArg
		openPos int
	}
	filterExpr struct {
		pos  int
		x    expr
		name string
		args []expr
		kw   []kwArg
	}
	testExpr struct {
		pos    int
		x      expr
		name   string
		args   []expr
		negate bool
	}
	binExpr struct {
		pos  int
		op   string
		l, r expr
	}
	unaryExpr struct {
		pos int
		op  string
		x   expr
	}
	cmpExpr struct {
		pos   int
		first expr
		ops   []string
		rest  []expr
	}
	condExpr struct {
		pos             int
		cond, then, els expr
	}
	listExpr struct {
		pos   int
		items []expr
	}
	dictExpr struct {
		pos        int
		keys, vals []expr
	}
)

func (e *litExpr) position() int    { return e.pos }
func (e *nameExpr) position() int   { return e.pos }
func (e *attrExpr) position() int   { return e.pos }
func (e *itemExpr) position() int   { return e.pos }
func (e *sliceExpr) position() int  { return e.pos }
func (e *callExpr) position() int   { return e.pos }
func (e *filterExpr) position() int { return e.pos }
func (e *testExpr) position() int   { return e.pos }
func (e *binExpr) position() int    { return e.pos }
func (e *unaryExpr) position() int  { return e.pos }
func (e *cmpExpr) position() int    { return e.pos }
func (e *condExpr) position() int   { return e.pos }
func (e *listExpr) position() int   { return e.pos }
func (e *dictExpr) position() int   { return e.pos }

// Statement nodes.
type stmt any

type (
	textStmt struct{ s string }
	outStmt  struct {
		pos int
		e   expr
	}
	ifStmt struct {
		conds  []expr
		bodies [][]stmt
		els    []stmt
	}
	setStmt struct {
		pos     int
		names   []string
		namePos []int
		attr    string // {% set ns.attr = ... %}
		e       expr
		body    []stmt // {% set x %}...{% endset %}
	}
	forStmt struct {
		pos     int
		names   []string
		namePos []int
		iter    expr
		cond    expr
		body    []stmt
		els     []stmt
	}
)

type parser struct {
	toks []token
	i    int
	src  string
	// depth is the nesting of expressions, blocks the nesting of statements.
	depth, blocks int
}

func (p *parser) cur() token  { return p.toks[p.i] }
func (p *parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) isOp(v string) bool   { t := p.cur(); return t.kind == tOp && t.val == v }
func (p *parser) isName(v string) bool { t := p.cur(); return t.kind == tName && t.val == v }

func (p *parser) acceptOp(v string) bool {
	if p.isOp(v) {
		p.next()
		return true
	}
	return false
}

func (p *parser) acceptName(v string) bool {
	if p.isName(v) {
		p.next()
		return true
	}
	return false
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tVarEnd:
		return "`}}`"
	case tBlockEnd:
		return "`%}`"
	case tString:
		return "string " + pyRepr(t.val)
	case tData:
		return "text"
	case tVarBegin:
		return "`{{`"
	case tBlockBegin:
		return "`{%`"
	}
	return "`" + t.val + "`"
}

func (p *parser) errUnexpected(want string) error {
	t := p.cur()
	msg := "unexpected " + describe(t)
	if want != "" {
		msg += ", expected " + want
	}
	return &Error{Offset: t.pos, Msg: msg}
}

func (p *parser) expectOp(v string) error {
	if !p.acceptOp(v) {
		return p.errUnexpected("`" + v + "`")
	}
	return nil
}

func (p *parser) expectKind(k tokKind, want string) (token, error) {
	if p.cur().kind != k {
		return token{}, p.errUnexpected(want)
	}
	return p.next(), nil
}

// parseBody parses statements until one of the end tags; it returns the tag
// found, leaving the parser after the tag name.
func (p *parser) parseBody(ends ...string) ([]stmt, string, int, error) {
	var out []stmt
	for {
		t := p.cur()
		switch t.kind {
		case tEOF:
			if len(ends) > 0 {
				return nil, "", 0, &Error{Offset: t.pos, Msg: "unexpected end of template, expected `{% " + ends[len(ends)-1] + " %}`"}
			}
			return out, "", t.pos, nil
		case tData:
			p.next()
			out = append(out, &textStmt{s: t.val})
		case tVarBegin:
			p.next()
			e, err := p.parseTuple()
			if err != nil {
				return nil, "", 0, err
			}
			if _, err := p.expectKind(tVarEnd, "`}}`"); err != nil {
				return nil, "", 0, err
			}
			out = append(out, &outStmt{pos: t.pos, e: e})
		case tBlockBegin:
			p.next()
			kw := p.cur()
			if kw.kind != tName {
				return nil, "", 0, p.errUnexpected("a statement name")
			}
			for _, e := range ends {
				if kw.val == e {
					p.next()
					return out, kw.val, kw.pos, nil
				}
			}
			p.next()
			var s stmt
			var err error
			if p.blocks++; p.blocks > maxNesting {
				return nil, "", 0, &Error{Offset: kw.pos, Msg: fmt.Sprintf("blocks nested more than %d levels deep %s", maxNesting, limitNote)}
			}
			switch kw.val {
			case "if":
				s, err = p.parseIf()
			case "for":
				s, err = p.parseFor(kw.pos)
			case "set":
				s, err = p.parseSet(kw.pos)
			default:
				msg := "unknown statement `" + kw.val + "`"
				if isEndTag(kw.val) {
					msg = "unexpected `{% " + kw.val + " %}`"
				}
				return nil, "", 0, &Error{Offset: kw.pos, Msg: msg, Hint: suggest(kw.val, []string{"if", "for", "set", "raw", "elif", "else", "endif", "endfor", "endset"})}
			}
			p.blocks--
			if err != nil {
				return nil, "", 0, err
			}
			out = append(out, s)
		default:
			return nil, "", 0, p.errUnexpected("")
		}
	}
}

func isEndTag(s string) bool {
	switch s {
	case "elif", "else", "endif", "endfor", "endset", "endraw":
		return true
	}
	return false
}

func (p *parser) endBlock() error {
	_, err := p.expectKind(tBlockEnd, "`%}`")
	return err
}

// openBody ends a tag that opens a body ({% if %}, {% elif %}, {% else %}, {% for %}, a block
// {% set %}): like Jinja's parse_statements, it takes one `:` before the `%}`, "for Python
// compatibility" ({% for x in xs: %}, as gitlab's definition writes). A tag that closes a
// body, or a {% set x = … %}, takes none.
func (p *parser) openBody() error {
	p.acceptOp(":")
	return p.endBlock()
}

func (p *parser) parseIf() (stmt, error) {
	s := &ifStmt{}
	for {
		c, err := p.parseTuple()
		if err != nil {
			return nil, err
		}
		if err := p.openBody(); err != nil {
			return nil, err
		}
		body, tag, _, err := p.parseBody("elif", "else", "endif")
		if err != nil {
			return nil, err
		}
		s.conds = append(s.conds, c)
		s.bodies = append(s.bodies, body)
		switch tag {
		case "elif":
			continue
		case "else":
			if err := p.openBody(); err != nil {
				return nil, err
			}
			els, _, _, err := p.parseBody("endif")
			if err != nil {
				return nil, err
			}
			s.els = els
		}
		return s, p.endBlock()
	}
}

func (p *parser) parseTargets() ([]string, []int, error) {
	var names []string
	var poss []int
	paren := p.acceptOp("(")
	for {
		t, err := p.expectKind(tName, "a variable name")
		if err != nil {
			return nil, nil, err
		}
		names = append(names, t.val)
		poss = append(poss, t.pos)
		if !p.acceptOp(",") {
			break
		}
		if p.cur().kind != tName {
			break
		}
	}
	if paren {
		if err := p.expectOp(")"); err != nil {
			return nil, nil, err
		}
	}
	return names, poss, nil
}

func (p *parser) parseFor(pos int) (stmt, error) {
	names, poss, err := p.parseTargets()
	if err != nil {
		return nil, err
	}
	if !p.acceptName("in") {
		return nil, p.errUnexpected("`in`")
	}
	iter, err := p.parseTupleNoCond()
	if err != nil {
		return nil, err
	}
	s := &forStmt{pos: pos, names: names, namePos: poss, iter: iter}
	if p.acceptName("if") {
		if s.cond, err = p.parseExpr(); err != nil {
			return nil, err
		}
	}
	if p.acceptName("recursive") {
		return nil, &Error{Offset: p.toks[p.i-1].pos, Msg: "recursive loops are not supported"}
	}
	if err := p.openBody(); err != nil {
		return nil, err
	}
	body, tag, _, err := p.parseBody("else", "endfor")
	if err != nil {
		return nil, err
	}
	s.body = body
	if tag == "else" {
		if err := p.openBody(); err != nil {
			return nil, err
		}
		if s.els, _, _, err = p.parseBody("endfor"); err != nil {
			return nil, err
		}
	}
	return s, p.endBlock()
}

func (p *parser) parseSet(pos int) (stmt, error) {
	s := &setStmt{pos: pos}
	names, poss, err := p.parseTargets()
	if err != nil {
		return nil, err
	}
	s.names, s.namePos = names, poss
	if len(names) == 1 && p.acceptOp(".") {
		t, err := p.expectKind(tName, "an attribute name")
		if err != nil {
			return nil, err
		}
		s.attr = t.val
	}
	if len(names) == 1 && s.attr == "" && (p.cur().kind == tBlockEnd || p.isOp(":") && p.peek().kind == tBlockEnd) {
		if err := p.openBody(); err != nil {
			return nil, err
		}
		body, _, _, err := p.parseBody("endset")
		if err != nil {
			return nil, err
		}
		s.body = body
		if body == nil {
			s.body = []stmt{}
		}
		return s, p.endBlock()
	}
	if err := p.expectOp("="); err != nil {
		return nil, err
	}
	if s.e, err = p.parseTuple(); err != nil {
		return nil, err
	}
	return s, p.endBlock()
}

// parseTuple parses an expression, or a tuple of them separated by commas.
func (p *parser) parseTuple() (expr, error) { return p.tuple(true) }

func (p *parser) parseTupleNoCond() (expr, error) { return p.tuple(false) }

func (p *parser) tuple(withCond bool) (expr, error) {
	pos := p.cur().pos
	parse := p.parseExpr
	if !withCond {
		parse = p.parseOr
	}
	e, err := parse()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return e, nil
	}
	items := []expr{e}
	for p.acceptOp(",") {
		if !p.startsExpr() {
			break
		}
		e, err := parse()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return &listExpr{pos: pos, items: items}, nil
}

func (p *parser) startsExpr() bool {
	t := p.cur()
	switch t.kind {
	case tName:
		return t.val != "if" && t.val != "else" && t.val != "and" && t.val != "or" && t.val != "in"
	case tString, tInt, tFloat:
		return true
	case tOp:
		return t.val == "(" || t.val == "[" || t.val == "{" || t.val == "-" || t.val == "+"
	}
	return false
}

func (p *parser) parseExpr() (expr, error) {
	if p.depth++; p.depth > maxNesting {
		return nil, &Error{Offset: p.cur().pos, Msg: fmt.Sprintf("expression nested more than %d levels deep %s", maxNesting, limitNote)}
	}
	defer func() { p.depth-- }()
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.isName("if") {
		pos := p.next().pos
		c, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var els expr
		if p.acceptName("else") {
			if els, err = p.parseExpr(); err != nil {
				return nil, err
			}
		}
		e = &condExpr{pos: pos, cond: c, then: e, els: els}
	}
	return e, nil
}

func (p *parser) parseOr() (expr, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isName("or") {
		pos := p.next().pos
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &binExpr{pos: pos, op: "or", l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseAnd() (expr, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isName("and") {
		pos := p.next().pos
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		l = &binExpr{pos: pos, op: "and", l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseNot() (expr, error) {
	if p.isName("not") {
		pos := p.next().pos
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{pos: pos, op: "not", x: x}, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	pos := p.cur().pos
	first, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	c := &cmpExpr{pos: pos, first: first}
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
			op = t.val
			p.next()
		case t.kind == tName && t.val == "in":
			op = "in"
			p.next()
		case t.kind == tName && t.val == "not" && p.peek().kind == tName && p.peek().val == "in":
			op = "not in"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, op)
		c.rest = append(c.rest, r)
	}
	if len(c.ops) == 0 {
		return first, nil
	}
	return c, nil
}

func (p *parser) binLoop(ops []string, next func() (expr, error)) (expr, error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t := p.cur()
		found := ""
		if t.kind == tOp {
			for _, o := range ops {
				if t.val == o {
					found = o
				}
			}
		}
		if found == "" {
			return l, nil
		}
		p.next()
		r, err := next()
		if err != nil {
			return nil, err
		}
		l = &binExpr{pos: t.pos, op: found, l: l, r: r}
	}
}

func (p *parser) parseMath1() (expr, error) {
	return p.binLoop([]string{"+", "-"}, p.parseConcat)
}

func (p *parser) parseConcat() (expr, error) {
	return p.binLoop([]string{"~"}, p.parseMath2)
}

func (p *parser) parseMath2() (expr, error) {
	return p.binLoop([]string{"*", "/", "//", "%"}, p.parsePow)
}

func (p *parser) parsePow() (expr, error) {
	return p.binLoop([]string{"**"}, func() (expr, error) { return p.parseUnary(true) })
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	t := p.cur()
	var e expr
	var err error
	if t.kind == tOp && (t.val == "-" || t.val == "+") {
		p.next()
		x, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		e = &unaryExpr{pos: t.pos, op: t.val, x: x}
	} else if e, err = p.parsePrimary(); err != nil {
		return nil, err
	}
	if e, err = p.parsePostfix(e); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(e)
	}
	return e, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.cur()
	switch t.kind {
	case tName:
		p.next()
		switch t.val {
		case "true", "True":
			return &litExpr{pos: t.pos, v: true}, nil
		case "false", "False":
			return &litExpr{pos: t.pos, v: false}, nil
		case "none", "None":
			return &litExpr{pos: t.pos, v: nil}, nil
		}
		switch t.val {
		case "and", "or", "not", "in", "is", "if", "else":
			p.i--
			return nil, p.errUnexpected("an expression")
		}
		return &nameExpr{pos: t.pos, name: t.val}, nil
	case tString:
		p.next()
		s := t.val
		for p.cur().kind == tString {
			s += p.next().val
		}
		return &litExpr{pos: t.pos, v: s}, nil
	case tInt:
		p.next()
		i, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(t.val, 64)
			return &litExpr{pos: t.pos, v: f}, nil
		}
		return &litExpr{pos: t.pos, v: i}, nil
	case tFloat:
		p.next()
		f, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			return nil, &Error{Offset: t.pos, Msg: "invalid number `" + t.val + "`"}
		}
		return &litExpr{pos: t.pos, v: f}, nil
	case tOp:
		switch t.val {
		case "(":
			p.next()
			if p.acceptOp(")") {
				return &listExpr{pos: t.pos}, nil
			}
			e, err := p.parseTuple()
			if err != nil {
				return nil, err
			}
			return e, p.expectOp(")")
		case "[":
			p.next()
			l := &listExpr{pos: t.pos, items: []expr{}}
			for !p.isOp("]") {
				e, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, e)
				if !p.acceptOp(",") {
					break
				}
			}
			return l, p.expectOp("]")
		case "{":
			p.next()
			if nt := p.cur(); nt.kind == tOp && nt.val == "{" && nt.pos == t.pos+1 {
				// {{ {{x}} | f }}: the declarative OAuth spelling of x.
				p.next()
				e, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				if err := p.expectOp("}"); err != nil {
					return nil, err
				}
				return e, p.expectOp("}")
			}
			d := &dictExpr{pos: t.pos}
			for !p.isOp("}") {
				k, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
				if !p.acceptOp(",") {
					break
				}
			}
			return d, p.expectOp("}")
		}
	}
	return nil, p.errUnexpected("an expression")
}

func (p *parser) parsePostfix(e expr) (expr, error) {
	for {
		t := p.cur()
		if t.kind != tOp {
			return e, nil
		}
		switch t.val {
		case ".":
			p.next()
			n := p.cur()
			switch n.kind {
			case tName:
				p.next()
				e = &attrExpr{pos: n.pos, x: e, name: n.val}
			case tInt:
				p.next()
				i, _ := strconv.ParseInt(n.val, 10, 64)
				e = &itemExpr{pos: n.pos, x: e, k: &litExpr{pos: n.pos, v: i}}
			default:
				return nil, p.errUnexpected("an attribute name")
			}
		case "[":
			p.next()
			var err error
			if e, err = p.parseSubscript(e, t.pos); err != nil {
				return nil, err
			}
		case "(":
			var c *callExpr
			switch f := e.(type) {
			case *nameExpr:
				c = &callExpr{pos: f.pos, name: f.name}
			case *attrExpr:
				c = &callExpr{pos: f.pos, name: f.name, recv: f.x}
			default:
				return nil, &Error{Offset: t.pos, Msg: "only functions and methods can be called"}
			}
			c.openPos = t.pos
			p.next()
			var err error
			if c.args, c.kw, err = p.parseArgs(); err != nil {
				return nil, err
			}
			e = c
		default:
			return e, nil
		}
	}
}

func (p *parser) parseSubscript(x expr, pos int) (expr, error) {
	var parts [3]expr
	n := 0
	isSlice := false
	for {
		if p.isOp(":") {
			p.next()
			isSlice = true
			n++
			if n > 2 {
				return nil, p.errUnexpected("`]`")
			}
			continue
		}
		if p.isOp("]") {
			p.next()
			break
		}
		if parts[n] != nil {
			return nil, p.errUnexpected("`]`")
		}
		e, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		parts[n] = e
	}
	if !isSlice {
		if parts[0] == nil {
			return nil, &Error{Offset: pos, Msg: "empty subscript `[]`"}
		}
		return &itemExpr{pos: pos, x: x, k: parts[0]}, nil
	}
	return &sliceExpr{pos: pos, x: x, lo: parts[0], hi: parts[1], step: parts[2]}, nil
}

func (p *parser) parseArgs() ([]expr, []kwArg, error) {
	var args []expr
	var kws []kwArg
	for !p.isOp(")") {
		if p.cur().kind == tName && p.peek().kind == tOp && p.peek().val == "=" {
			n := p.next()
			p.next()
			v, err := p.parseExpr()
			if err != nil {
				return nil, nil, err
			}
			kws = append(kws, kwArg{pos: n.pos, name: n.val, v: v})
		} else {
			if len(kws) > 0 {
				return nil, nil, &Error{Offset: p.cur().pos, Msg: "positional argument follows keyword argument"}
			}
			v, err := p.parseExpr()
			if err != nil {
				return nil, nil, err
			}
			args = append(args, v)
		}
		if !p.acceptOp(",") {
			break
		}
	}
	return args, kws, p.expectOp(")")
}

func (p *parser) parseFilterExpr(e expr) (expr, error) {
	for {
		switch {
		case p.isOp("|"):
			p.next()
			n, err := p.expectKind(tName, "a filter name")
			if err != nil {
				return nil, err
			}
			f := &filterExpr{pos: n.pos, x: e, name: n.val}
			if p.acceptOp("(") {
				if f.args, f.kw, err = p.parseArgs(); err != nil {
					return nil, err
				}
			}
			e = f
		case p.isName("is"):
			p.next()
			neg := p.acceptName("not")
			n, err := p.expectKind(tName, "a test name")
			if err != nil {
				return nil, err
			}
			te := &testExpr{pos: n.pos, x: e, name: n.val, negate: neg}
			if p.acceptOp("(") {
				if te.args, _, err = p.parseArgs(); err != nil {
					return nil, err
				}
			} else if p.startsTestArg() {
				a, err := p.parsePrimary()
				if err != nil {
					return nil, err
				}
				if a, err = p.parsePostfix(a); err != nil {
					return nil, err
				}
				te.args = []expr{a}
			}
			e = te
		default:
			return e, nil
		}
	}
}

func (p *parser) startsTestArg() bool {
	t := p.cur()
	switch t.kind {
	case tName:
		return t.val != "else" && t.val != "or" && t.val != "and" && t.val != "if" && t.val != "is" && t.val != "in" && t.val != "not"
	case tString, tInt, tFloat:
		return true
	case tOp:
		return t.val == "[" || t.val == "{"
	}
	return false
}

// parseTemplate turns the source into statements.
// Like Jinja2 (keep_trailing_newline=False), a single trailing newline of
// the source is dropped.
func parseTemplate(src string) ([]stmt, error) {
	switch {
	case strings.HasSuffix(src, "\r\n"):
		src = src[:len(src)-2]
	case strings.HasSuffix(src, "\n"), strings.HasSuffix(src, "\r"):
		src = src[:len(src)-1]
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	if err := checkTags(toks); err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: src}
	body, _, _, err := p.parseBody()
	return body, err
}

func trimmedSingle(body []stmt) (*outStmt, bool) {
	var out *outStmt
	for _, s := range body {
		switch x := s.(type) {
		case *textStmt:
			if strings.TrimSpace(x.s) != "" {
				return nil, false
			}
		case *outStmt:
			if out != nil {
				return nil, false
			}
			out = x
		default:
			return nil, false
		}
	}
	return out, out != nil
}

// checkTags applies maxTags to the template and maxTokens to each of its tags.
func checkTags(toks []token) error {
	tags, inTag := 0, 0
	for _, t := range toks {
		switch t.kind {
		case tVarBegin, tBlockBegin:
			if tags++; tags > maxTags {
				return &Error{Offset: t.pos, Msg: fmt.Sprintf("more than %d tags in one template %s", maxTags, limitNote)}
			}
			inTag = 0
		case tVarEnd, tBlockEnd, tData:
		default:
			if inTag++; inTag > maxTokens {
				return &Error{Offset: t.pos, Msg: fmt.Sprintf("a tag of more than %d tokens %s", maxTokens, limitNote)}
			}
		}
	}
	return nil
}
