package template

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	exprlang "github.com/expr-lang/expr"
)

var (
	optsOnce sync.Once
	opts     []exprlang.Option
)

// call is a function the generated code calls: it gets the evaluation's frame and the
// arguments written in the template.
type callFn func(fr *frame, p []any) (any, error)

func fn1(f func(any) any) callFn {
	return func(_ *frame, p []any) (any, error) { return f(p[0]), nil }
}

func fn2(f func(a, b any) (any, error)) callFn {
	return func(_ *frame, p []any) (any, error) { return f(p[0], p[1]) }
}

func cmpFn(op string, want func(int) bool) callFn {
	return func(fr *frame, p []any) (any, error) {
		c, err := fr.compare(p[0], p[1], op, 0)
		if err != nil {
			return nil, err
		}
		return want(c), nil
	}
}

// wrap makes f an expr function: it counts one step per call and, unless f is an
// accessor, the bytes of the strings it reads and of the value it builds (limits.go); the
// evaluation ends at the first limit.
func wrap(f callFn, accessor bool) func(...any) (any, error) {
	return func(p ...any) (any, error) {
		fr := p[0].(*frame)
		if !fr.spend(1) {
			return nil, fr.err
		}
		args := p[1:]
		if !accessor {
			for _, a := range args {
				if s, ok := a.(string); ok && !fr.charge(len(s)) {
					return nil, fr.err
				}
			}
		}
		v, err := f(fr, args)
		if err == nil && !accessor {
			err = fr.account(v, args)
		}
		if err == nil && fr.err != nil {
			err = fr.err
		}
		return v, err
	}
}

// accessors are the functions that read a value without scanning it: a variable, an
// attribute, a constant. Every other function may read a whole string, or build a value.
var accessors = map[string]bool{
	"_var": true, "_loc": true, "_k": true, "_attr": true, "_truthy": true, "_undef": true, "_self": true,
	"_append": true, "_extend": true,
}

// exprOptions are the expr compile options: the environment type and every
// function the generated code may call.
func exprOptions() []exprlang.Option {
	optsOnce.Do(func() {
		fns := map[string]callFn{
			"_var": func(fr *frame, p []any) (any, error) {
				if v, ok := fr.vars[p[0].(string)]; ok {
					return v, nil
				}
				return Undefined, nil
			},
			"_loc": func(fr *frame, p []any) (any, error) {
				v := fr.locals[p[0].(int)]
				if v == nil {
					return nil, nil
				}
				return v, nil
			},
			"_k":     func(fr *frame, p []any) (any, error) { return fr.consts[p[0].(int)], nil },
			"_attr":  func(_ *frame, p []any) (any, error) { return getAttr(p[0], p[1].(string)), nil },
			"_item":  func(_ *frame, p []any) (any, error) { return getItem(p[0], p[1]), nil },
			"_slice": func(_ *frame, p []any) (any, error) { return getSlice(p[0], p[1], p[2], p[3]) },
			"_add":   fn2(add),
			"_sub":   fn2(sub),
			"_mul":   fn2(mul),
			"_div":   fn2(div),
			"_fdiv":  fn2(floorDiv),
			"_mod":   fn2(mod),
			"_pow":   fn2(pow),
			"_cat": func(_ *frame, p []any) (any, error) {
				a, b := ToString(p[0]), ToString(p[1])
				if err := fitString(int64(len(a)) + int64(len(b))); err != nil {
					return nil, err
				}
				return a + b, nil
			},
			"_neg":    func(_ *frame, p []any) (any, error) { return neg(p[0]) },
			"_pos":    func(_ *frame, p []any) (any, error) { return pos(p[0]) },
			"_eq":     func(fr *frame, p []any) (any, error) { return fr.equal(p[0], p[1], 0), nil },
			"_ne":     func(fr *frame, p []any) (any, error) { return !fr.equal(p[0], p[1], 0), nil },
			"_lt":     cmpFn("<", func(c int) bool { return c < 0 }),
			"_le":     cmpFn("<=", func(c int) bool { return c <= 0 }),
			"_gt":     cmpFn(">", func(c int) bool { return c > 0 }),
			"_ge":     cmpFn(">=", func(c int) bool { return c >= 0 }),
			"_in":     func(fr *frame, p []any) (any, error) { return fr.contains(p[1], p[0]) },
			"_notin":  func(fr *frame, p []any) (any, error) { ok, err := fr.contains(p[1], p[0]); return !ok, err },
			"_truthy": fn1(func(v any) any { return Truthy(v) }),
			"_undef":  func(*frame, []any) (any, error) { return Undefined, nil },
			"_self":   func(*frame, []any) (any, error) { return templateRef{}, nil },
			"_list": func(_ *frame, p []any) (any, error) {
				l := make([]any, len(p), len(p)+4)
				for i, v := range p {
					l[i] = norm(v)
				}
				return l, nil
			},
			"_dict": func(_ *frame, p []any) (any, error) {
				m := make(map[string]any, len(p)/2)
				for i := 0; i+1 < len(p); i += 2 {
					m[keyString(p[i])] = norm(p[i+1])
				}
				return m, nil
			},
			"_dictkw": func(_ *frame, p []any) (any, error) {
				m, err := kwMap(p)
				return m, err
			},
			"_namespace": func(_ *frame, p []any) (any, error) {
				m, err := kwMap(p)
				return &namespace{m: m}, err
			},
			"_test": func(fr *frame, p []any) (any, error) {
				return runTest(fr, p[0].(string), p[1], p[2:])
			},
			"_map_attr": func(fr *frame, p []any) (any, error) {
				l, err := iterate(p[0])
				if err != nil {
					return nil, err
				}
				out := make([]any, len(l))
				for i, e := range l {
					v := attrPath(e, ToString(p[1]))
					if IsUndefined(v) && !IsUndefined(p[2]) {
						v = p[2]
					}
					out[i] = v
				}
				return out, nil
			},
			"_map_filter": func(fr *frame, p []any) (any, error) {
				l, err := iterate(p[0])
				if err != nil {
					return nil, err
				}
				name := ToString(p[1])
				f, ok := filters[name]
				if !ok {
					return nil, fmt.Errorf("no filter named %s", pyRepr(name))
				}
				out := make([]any, len(l))
				args := make([]any, len(p)-1)
				copy(args[1:], p[2:])
				for i, e := range l {
					args[0] = e
					if !fr.spend(1) {
						return nil, fr.err
					}
					if out[i], err = f.call(fr, args); err != nil {
						return nil, err
					}
					if err := fr.account(out[i], args); err != nil {
						return nil, err
					}
				}
				return out, nil
			},
			"_format": func(_ *frame, p []any) (any, error) {
				s, ok := p[0].(string)
				if !ok {
					return nil, fmt.Errorf("'%s' object has no attribute 'format'", typeName(p[0]))
				}
				return pyFormat(s, p[2:], p[1].(map[string]any))
			},
			"_append": func(fr *frame, p []any) (any, error) { return nil, appendInPlace(fr, p[0], []any{p[1]}) },
			"_extend": func(fr *frame, p []any) (any, error) {
				l, err := iterate(p[1])
				if err != nil {
					return nil, err
				}
				return nil, appendInPlace(fr, p[0], l)
			},
		}
		for name, s := range filters {
			fns["f_"+name] = s.call
		}
		for name, s := range methods {
			if s.fn != nil || s.ffn != nil {
				fns["m_"+name] = methodFn(s)
			}
		}
		for name, s := range functions {
			if s.fn != nil || s.ffn != nil {
				fns["g_"+name] = s.call
			}
		}
		opts = []exprlang.Option{exprlang.Env(&frame{}), exprlang.DisableAllBuiltins(), exprlang.Optimize(false)}
		for name, f := range fns {
			opts = append(opts, exprlang.Function(name, wrap(f, accessors[name])))
		}
	})
	return opts
}

// call runs the builtin with the evaluation's frame.
func (s *spec) call(fr *frame, p []any) (any, error) {
	if s.ffn != nil {
		return s.ffn(fr, p)
	}
	return s.fn(p)
}

// methodFn calls a method; on none or undefined every method yields undefined.
func methodFn(s *spec) callFn {
	return func(fr *frame, p []any) (any, error) {
		switch p[0].(type) {
		case nil, undefined:
			return Undefined, nil
		}
		return s.call(fr, p)
	}
}

func kwMap(p []any) (map[string]any, error) {
	m := map[string]any{}
	if p[0] != nil {
		base, ok := mapView(p[0])
		if !ok {
			if l, err := iterate(p[0]); err == nil {
				for _, e := range l {
					pair, ok := asList(e)
					if !ok || len(pair) != 2 {
						return nil, errors.New("dictionary update sequence element is not a pair")
					}
					m[keyString(pair[0])] = pair[1]
				}
			} else {
				return nil, err
			}
		} else {
			for _, k := range base.Keys() {
				m[k], _ = base.Get(k)
			}
		}
	}
	for i := 1; i+1 < len(p); i += 2 {
		m[p[i].(string)] = norm(p[i+1])
	}
	return m, nil
}

// appendInPlace appends to a list and makes every local that holds the same
// list see the result, which is what Python's list.append does.
func appendInPlace(fr *frame, recv any, items []any) error {
	switch recv.(type) {
	case nil, undefined:
		return nil
	}
	old, ok := recv.([]any)
	if !ok {
		return fmt.Errorf("'%s' object has no attribute 'append'", typeName(recv))
	}
	if err := fitItems(int64(len(old)) + int64(len(items))); err != nil {
		return err
	}
	nl := append(old, items...)
	for i, v := range fr.locals {
		if l, ok := v.([]any); ok && len(l) == len(old) && sameBacking(l, old) {
			fr.locals[i] = nl
		}
	}
	return nil
}

func sameBacking(a, b []any) bool {
	if cap(a) == 0 || cap(b) == 0 {
		return false
	}
	return unsafe.SliceData(a) == unsafe.SliceData(b)
}

// fastPath evaluates a template that is a single constant-key access such as
// {{ config['api_key'] }} or {{ response.meta.next }} without the VM.
type fastPath struct {
	root  string
	keys  []any
	attrs []bool
}

func newFastPath(e expr, g *gen) *fastPath {
	var keys []any
	var attrs []bool
	for {
		switch x := e.(type) {
		case *attrExpr:
			keys = append(keys, x.name)
			attrs = append(attrs, true)
			e = x.x
			continue
		case *itemExpr:
			lit, ok := x.k.(*litExpr)
			if !ok {
				return nil
			}
			switch lit.v.(type) {
			case string, int64:
			default:
				return nil
			}
			keys = append(keys, lit.v)
			attrs = append(attrs, false)
			e = x.x
			continue
		case *nameExpr:
			if _, local := g.scope.lookup(x.name); local || !g.vars[x.name] || x.name == "self" {
				return nil
			}
			f := &fastPath{root: x.name}
			for i := len(keys) - 1; i >= 0; i-- {
				f.keys = append(f.keys, keys[i])
				f.attrs = append(f.attrs, attrs[i])
			}
			return f
		}
		return nil
	}
}

func (f *fastPath) eval(vars map[string]any) any {
	v, ok := f.parent(vars)
	if !ok {
		return Undefined
	}
	if n := len(f.keys); n > 0 {
		v = f.step(v, n-1)
	}
	return v
}

// parent is the value the last key is read from (the variable itself when there is no
// key); ok is false when the variable is not set.
func (f *fastPath) parent(vars map[string]any) (any, bool) {
	v, ok := vars[f.root]
	if !ok {
		return nil, false
	}
	for i := 0; i < len(f.keys)-1; i++ {
		v = f.step(v, i)
	}
	return v, true
}

func (f *fastPath) step(v any, i int) any {
	if f.attrs[i] {
		return getAttr(v, f.keys[i].(string))
	}
	return getItem(v, f.keys[i])
}

// text is the text {{ }} writes for the value, when the value is a key of a StrByter that
// has it at hand: no Go value is made. ok false: eval the value.
func (f *fastPath) text(vars map[string]any) ([]byte, bool) {
	n := len(f.keys)
	if n == 0 {
		return nil, false
	}
	key, ok := f.keys[n-1].(string)
	if !ok {
		return nil, false
	}
	v, ok := f.parent(vars)
	if !ok {
		return nil, false
	}
	sb, ok := v.(StrByter)
	if !ok {
		return nil, false
	}
	if _, attrs := v.(Attributes); attrs && f.attrs[n-1] {
		return nil, false // an attribute of its own may stand before the key
	}
	return sb.StrBytes(key)
}

// norm turns the int of an expr literal into the int64 templates produce.
func norm(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case templateRef:
		// self as a value (not read through) is the text Jinja renders for it.
		return x.String()
	}
	return v
}
