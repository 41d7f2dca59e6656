package template

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"connector/pkg/typo"
)

// scope maps local variable names to frame slots; a for loop opens one.
type scope struct {
	parent *scope
	names  map[string]int
}

func (s *scope) lookup(name string) (int, bool) {
	for ; s != nil; s = s.parent {
		if i, ok := s.names[name]; ok {
			return i, true
		}
	}
	return 0, false
}

// gen translates a template's expressions to expr source, where nearly every
// operation is a call to one of our functions so that the semantics are
// Jinja's.
type gen struct {
	src    string
	vars   map[string]bool
	reads  map[string]bool
	keys   []KeyRead
	scope  *scope
	nslots int
	tmp    int
	consts []any
	// impure is set by a call to a function whose result is not its arguments' alone (the
	// clock, a random UUID) or to a method that changes its receiver.
	impure bool
}

// noteKey records that the template reads the constant key of x, when x is a free variable
// (config['key'], config.key); pos is where the key is written.
func (g *gen) noteKey(x expr, key string, pos int) {
	n, ok := x.(*nameExpr)
	if !ok || !g.vars[n.name] || n.name == "self" {
		return
	}
	if _, local := g.scope.lookup(n.name); local {
		return
	}
	g.keys = append(g.keys, KeyRead{Var: n.name, Key: key, Offset: pos})
}

func (g *gen) errAt(pos int, msg string, candidates []string, name string) *Error {
	return &Error{Offset: pos, Msg: msg, Hint: suggest(name, candidates)}
}

func (g *gen) declare(name string) int {
	i := g.nslots
	g.nslots++
	g.scope.names[name] = i
	return i
}

func (g *gen) visibleNames() []string {
	var out []string
	for v := range g.vars {
		out = append(out, v)
	}
	for s := g.scope; s != nil; s = s.parent {
		for n := range s.names {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func (g *gen) literal(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		if x == math.MinInt64 {
			return g.constant(x)
		}
		if x < 0 {
			return "(" + strconv.FormatInt(x, 10) + ")"
		}
		return strconv.FormatInt(x, 10)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) || x < 0 {
			return g.constant(x)
		}
		s := strconv.FormatFloat(x, 'e', -1, 64)
		return s
	case string:
		if utf8.ValidString(x) {
			return strconv.Quote(x)
		}
		return g.constant(x)
	}
	return g.constant(v)
}

func (g *gen) constant(v any) string {
	g.consts = append(g.consts, v)
	return call("_k", strconv.Itoa(len(g.consts)-1))
}

func (g *gen) newTmp() string {
	g.tmp++
	return fmt.Sprintf("_t%d", g.tmp)
}

func (g *gen) list(es []expr) ([]string, error) {
	out := make([]string, len(es))
	for i, e := range es {
		s, err := g.expr(e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// call is the expr source of a call to one of this package's functions: each gets the
// evaluation's frame first, so that it can count its steps and what it builds.
func call(name string, args ...string) string {
	if len(args) == 0 {
		return name + "($env)"
	}
	return name + "($env, " + strings.Join(args, ", ") + ")"
}

var binFuncs = map[string]string{
	"+": "_add", "-": "_sub", "*": "_mul", "/": "_div", "//": "_fdiv", "%": "_mod", "**": "_pow", "~": "_cat",
}

var cmpFuncs = map[string]string{
	"==": "_eq", "!=": "_ne", "<": "_lt", "<=": "_le", ">": "_gt", ">=": "_ge", "in": "_in", "not in": "_notin",
}

func (g *gen) expr(e expr) (string, error) {
	switch x := e.(type) {
	case *litExpr:
		return g.literal(x.v), nil
	case *nameExpr:
		if slot, ok := g.scope.lookup(x.name); ok {
			return call("_loc", strconv.Itoa(slot)), nil
		}
		if x.name == "self" {
			// Jinja's own name for the template, even where a variable of that name is set.
			return call("_self"), nil
		}
		if g.vars[x.name] {
			g.reads[x.name] = true
			return call("_var", strconv.Quote(x.name)), nil
		}
		if _, ok := functions[x.name]; ok {
			return "", &Error{Offset: x.pos, Msg: fmt.Sprintf("function `%s` must be called: `%s()`", x.name, x.name)}
		}
		return "", g.errAt(x.pos, fmt.Sprintf("unknown variable `%s`", x.name), g.visibleNames(), x.name)
	case *attrExpr:
		o, err := g.expr(x.x)
		if err != nil {
			return "", err
		}
		g.noteKey(x.x, x.name, x.pos)
		return call("_attr", o, strconv.Quote(x.name)), nil
	case *itemExpr:
		o, err := g.expr(x.x)
		if err != nil {
			return "", err
		}
		if lit, ok := x.k.(*litExpr); ok {
			if key, ok := lit.v.(string); ok {
				g.noteKey(x.x, key, lit.pos)
			}
		}
		k, err := g.expr(x.k)
		if err != nil {
			return "", err
		}
		return call("_item", o, k), nil
	case *sliceExpr:
		parts, err := g.optList(x.x, x.lo, x.hi, x.step)
		if err != nil {
			return "", err
		}
		return call("_slice", parts...), nil
	case *callExpr:
		return g.call(x)
	case *filterExpr:
		return g.filter(x)
	case *testExpr:
		v, err := g.expr(x.x)
		if err != nil {
			return "", err
		}
		t, ok := tests[x.name]
		if !ok {
			return "", g.errAt(x.pos, fmt.Sprintf("unknown test `%s`", x.name), keysOf(tests), x.name)
		}
		if len(x.args) != t.nargs {
			return "", &Error{Offset: x.pos, Msg: fmt.Sprintf("test `%s` takes %d argument(s), got %d", x.name, t.nargs, len(x.args))}
		}
		args, err := g.list(x.args)
		if err != nil {
			return "", err
		}
		s := call("_test", append([]string{strconv.Quote(x.name), v}, args...)...)
		if x.negate {
			return "(!" + s + ")", nil
		}
		return s, nil
	case *binExpr:
		l, err := g.expr(x.l)
		if err != nil {
			return "", err
		}
		r, err := g.expr(x.r)
		if err != nil {
			return "", err
		}
		switch x.op {
		case "and":
			t := g.newTmp()
			return fmt.Sprintf("(let %s = %s; %s ? %s : %s)", t, l, call("_truthy", t), r, t), nil
		case "or":
			t := g.newTmp()
			return fmt.Sprintf("(let %s = %s; %s ? %s : %s)", t, l, call("_truthy", t), t, r), nil
		}
		return call(binFuncs[x.op], l, r), nil
	case *unaryExpr:
		if lit, ok := x.x.(*litExpr); ok && x.op == "-" {
			switch v := lit.v.(type) {
			case int64:
				if v != math.MinInt64 {
					return g.literal(-v), nil
				}
			case float64:
				return g.literal(-v), nil
			}
		}
		v, err := g.expr(x.x)
		if err != nil {
			return "", err
		}
		switch x.op {
		case "not":
			return "(!" + call("_truthy", v) + ")", nil
		case "-":
			return call("_neg", v), nil
		}
		return call("_pos", v), nil
	case *cmpExpr:
		first, err := g.expr(x.first)
		if err != nil {
			return "", err
		}
		rest, err := g.list(x.rest)
		if err != nil {
			return "", err
		}
		if len(rest) == 1 {
			return call(cmpFuncs[x.ops[0]], first, rest[0]), nil
		}
		// a < b < c: each middle operand is evaluated once.
		left := first
		var b strings.Builder
		closing := 0
		for i, r := range rest {
			if i == len(rest)-1 {
				b.WriteString(call(cmpFuncs[x.ops[i]], left, r))
				break
			}
			t := g.newTmp()
			fmt.Fprintf(&b, "(let %s = %s; %s && ", t, r, call(cmpFuncs[x.ops[i]], left, t))
			closing++
			left = t
		}
		b.WriteString(strings.Repeat(")", closing))
		return b.String(), nil
	case *condExpr:
		c, err := g.expr(x.cond)
		if err != nil {
			return "", err
		}
		t, err := g.expr(x.then)
		if err != nil {
			return "", err
		}
		el := call("_undef")
		if x.els != nil {
			if el, err = g.expr(x.els); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("(%s ? %s : %s)", call("_truthy", c), t, el), nil
	case *listExpr:
		items, err := g.list(x.items)
		if err != nil {
			return "", err
		}
		return call("_list", items...), nil
	case *dictExpr:
		var parts []string
		for i := range x.keys {
			k, err := g.expr(x.keys[i])
			if err != nil {
				return "", err
			}
			v, err := g.expr(x.vals[i])
			if err != nil {
				return "", err
			}
			parts = append(parts, k, v)
		}
		return call("_dict", parts...), nil
	}
	return "", fmt.Errorf("unexpected node %T", e)
}

func (g *gen) optList(es ...expr) ([]string, error) {
	out := make([]string, len(es))
	for i, e := range es {
		if e == nil {
			out[i] = "nil"
			continue
		}
		s, err := g.expr(e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// args resolves positional and keyword arguments against a spec.
func (g *gen) args(s *spec, what, name string, pos int, args []expr, kws []kwArg) ([]string, error) {
	out, err := g.list(args)
	if err != nil {
		return nil, err
	}
	if len(out) > len(s.params) && !s.variadic {
		return nil, &Error{Offset: pos, Msg: fmt.Sprintf("%s `%s` takes at most %d argument(s), got %d", what, name, len(s.params), len(out))}
	}
	if len(kws) > 0 {
		filled := make([]string, len(s.params))
		copy(filled, out)
		for _, kw := range kws {
			i := -1
			for j, p := range s.params {
				if p == kw.name {
					i = j
				}
			}
			if i < 0 {
				return nil, g.errAt(kw.pos, fmt.Sprintf("%s `%s` has no argument `%s`", what, name, kw.name), s.params, kw.name)
			}
			if i < len(out) || filled[i] != "" {
				return nil, &Error{Offset: kw.pos, Msg: fmt.Sprintf("%s `%s` got argument `%s` twice", what, name, kw.name)}
			}
			v, err := g.expr(kw.v)
			if err != nil {
				return nil, err
			}
			filled[i] = v
		}
		last := len(filled) - 1
		for last >= 0 && filled[last] == "" {
			last--
		}
		filled = filled[:last+1]
		for i := range filled {
			if filled[i] == "" {
				if i < s.min {
					break
				}
				filled[i] = g.literal(s.defaults[i])
			}
		}
		out = filled
	}
	n := 0
	for _, a := range out {
		if a != "" {
			n++
		}
	}
	if n < s.min || len(out) < s.min {
		return nil, &Error{Offset: pos, Msg: fmt.Sprintf("%s `%s` needs at least %d argument(s), got %d", what, name, s.min, n)}
	}
	for i := range out {
		if out[i] == "" {
			return nil, &Error{Offset: pos, Msg: fmt.Sprintf("%s `%s` is missing argument `%s`", what, name, s.params[i])}
		}
	}
	return out, nil
}

func (g *gen) kwDict(kws []kwArg) ([]string, error) {
	var parts []string
	for _, kw := range kws {
		v, err := g.expr(kw.v)
		if err != nil {
			return nil, err
		}
		parts = append(parts, strconv.Quote(kw.name), v)
	}
	return parts, nil
}

func (g *gen) call(c *callExpr) (string, error) {
	if c.recv == nil {
		switch c.name {
		case "dict", "namespace":
			parts, err := g.kwDict(c.kw)
			if err != nil {
				return "", err
			}
			pos, err := g.list(c.args)
			if err != nil {
				return "", err
			}
			if len(pos) > 1 {
				return "", &Error{Offset: c.pos, Msg: fmt.Sprintf("function `%s` takes at most 1 positional argument", c.name)}
			}
			base := "nil"
			if len(pos) == 1 {
				base = pos[0]
			}
			fn := "_dictkw"
			if c.name == "namespace" {
				fn = "_namespace"
			}
			return call(fn, append([]string{base}, parts...)...), nil
		}
		s, ok := functions[c.name]
		if !ok {
			return "", g.errAt(c.pos, fmt.Sprintf("unknown function `%s`", c.name), keysOf(functions), c.name)
		}
		g.impure = g.impure || s.impure
		args, err := g.args(s, "function", c.name, c.pos, c.args, c.kw)
		if err != nil {
			return "", err
		}
		return call("g_"+c.name, args...), nil
	}
	s, ok := methods[c.name]
	if !ok {
		return "", g.errAt(c.pos, fmt.Sprintf("unknown method `%s`", c.name), keysOf(methods), c.name)
	}
	g.impure = g.impure || s.impure
	recv, err := g.expr(c.recv)
	if err != nil {
		return "", err
	}
	switch c.name {
	case "format":
		parts, err := g.kwDict(c.kw)
		if err != nil {
			return "", err
		}
		args, err := g.list(c.args)
		if err != nil {
			return "", err
		}
		return call("_format", append([]string{recv, call("_dictkw", append([]string{"nil"}, parts...)...)}, args...)...), nil
	case "append", "extend":
		args, err := g.args(s, "method", c.name, c.pos, c.args, c.kw)
		if err != nil {
			return "", err
		}
		return call("_"+c.name, recv, args[0]), nil
	}
	args, err := g.args(s, "method", c.name, c.pos, c.args, c.kw)
	if err != nil {
		return "", err
	}
	return call("m_"+c.name, append([]string{recv}, args...)...), nil
}

func (g *gen) filter(f *filterExpr) (string, error) {
	v, err := g.expr(f.x)
	if err != nil {
		return "", err
	}
	switch f.name {
	case "map":
		for _, kw := range f.kw {
			if kw.name == "attribute" {
				a, err := g.expr(kw.v)
				if err != nil {
					return "", err
				}
				def := call("_undef")
				for _, kw2 := range f.kw {
					if kw2.name == "default" {
						if def, err = g.expr(kw2.v); err != nil {
							return "", err
						}
					}
				}
				return call("_map_attr", v, a, def), nil
			}
		}
		if len(f.args) == 0 {
			return "", &Error{Offset: f.pos, Msg: "filter `map` needs a filter name or attribute="}
		}
		if lit, ok := f.args[0].(*litExpr); ok {
			name, _ := lit.v.(string)
			if _, known := filters[name]; !known {
				return "", g.errAt(lit.pos, fmt.Sprintf("unknown filter `%s`", name), keysOf(filters), name)
			}
		}
		args, err := g.list(f.args)
		if err != nil {
			return "", err
		}
		return call("_map_filter", append([]string{v}, args...)...), nil
	case "selectattr", "rejectattr", "select", "reject":
		ti := 1
		if f.name == "select" || f.name == "reject" {
			ti = 0
		}
		if len(f.args) > ti {
			if lit, ok := f.args[ti].(*litExpr); ok {
				name, _ := lit.v.(string)
				if _, known := tests[name]; !known {
					return "", g.errAt(lit.pos, fmt.Sprintf("unknown test `%s`", name), keysOf(tests), name)
				}
			}
		}
	}
	s, ok := filters[f.name]
	if !ok {
		return "", g.errAt(f.pos, fmt.Sprintf("unknown filter `%s`", f.name), keysOf(filters), f.name)
	}
	args, err := g.args(s, "filter", f.name, f.pos, f.args, f.kw)
	if err != nil {
		return "", err
	}
	return call("f_"+f.name, append([]string{v}, args...)...), nil
}

// suggest returns `did you mean "x"?` for the candidate nearest to name.
func suggest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if c == name || strings.HasPrefix(c, "_") && !strings.HasPrefix(name, "_") {
			continue
		}
		d := typo.Distance(strings.ToLower(name), strings.ToLower(c))
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	limit := max(2, (len(name)+len(best))/3)
	if best == "" || bestD > limit {
		return ""
	}
	return "did you mean `" + best + "`?"
}
