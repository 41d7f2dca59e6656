package template

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The filters, methods, functions and tests templates may use. Each one is
// exposed to expr as a function named with a prefix (f_, m_, g_, t_).
var (
	filters   map[string]*spec
	methods   map[string]*spec
	functions map[string]*spec
	tests     map[string]*testSpec
)

func strFilter(f func(string) string) *spec {
	return sp("", 0, func(a []any) (any, error) { return f(str(a[0])), nil })
}

func init() {
	filters = map[string]*spec{
		"string": sp("", 0, func(a []any) (any, error) {
			switch x := a[0].(type) {
			case string:
				return x, nil
			case undefined:
				return "", nil
			}
			// Airbyte's string filter dumps non-strings as JSON.
			s, err := toJSON(a[0], false)
			if err != nil {
				return ToString(a[0]), nil
			}
			return s, nil
		}),
		"int": sp("default,base", 0, func(a []any) (any, error) {
			if IsUndefined(a[0]) {
				// Jinja's filter calls int() on the value, which undefined refuses with an
				// UndefinedError (not a TypeError, which would give the default).
				return nil, undefinedErrorf("int() of an undefined value")
			}
			base, _ := ToInt(arg(a, 2, int64(10)))
			if base < 2 || base > 36 {
				base = 10
			}
			return jinjaInt(a[0], arg(a, 1, int64(0)), int(base)), nil
		}, int64(0), int64(10)),
		"float": sp("default", 0, func(a []any) (any, error) {
			if IsUndefined(a[0]) {
				// As for int: float() of undefined is an UndefinedError in Jinja.
				return nil, undefinedErrorf("float() of an undefined value")
			}
			f, err := pyFloatOf(a[0])
			if err != nil {
				return arg(a, 1, 0.0), nil
			}
			return f, nil
		}, 0.0),
		"length": sp("", 0, func(a []any) (any, error) { n, err := length(a[0]); return int64(n), err }),
		"default": sp("default_value,boolean", 0, func(a []any) (any, error) {
			if IsUndefined(a[0]) || (Truthy(arg(a, 2, false)) && !Truthy(a[0])) {
				return arg(a, 1, ""), nil
			}
			return a[0], nil
		}, "", false),
		"lower": strFilter(strings.ToLower),
		"upper": strFilter(strings.ToUpper),
		"trim": sp("chars", 0, func(a []any) (any, error) {
			return pyStrip(str(a[0]), a[1:], strings.Trim, strings.TrimSpace), nil
		}, nil),
		"title":      strFilter(pyTitle),
		"capitalize": strFilter(pyCapitalize),
		"join": sp("d,attribute", 0, func(a []any) (any, error) {
			l, err := iterate(a[0])
			if err != nil {
				return nil, err
			}
			attr := arg(a, 2, nil)
			return joinStrings(l, strArg(a, 1, ""), func(e any) string {
				if attr != nil {
					e = attrPath(e, str(attr))
				}
				return str(e)
			})
		}, "", nil),
		"first": sp("", 0, func(a []any) (any, error) {
			l, err := iterate(a[0])
			if err != nil || len(l) == 0 {
				return Undefined, err
			}
			return l[0], nil
		}),
		"last": sp("", 0, func(a []any) (any, error) {
			l, err := iterate(a[0])
			if err != nil || len(l) == 0 {
				return Undefined, err
			}
			return l[len(l)-1], nil
		}),
		"list": sp("", 0, func(a []any) (any, error) { return listOf(a[0]) }),
		"unique": spf("case_sensitive,attribute", 0, func(fr *frame, a []any) (any, error) {
			l, err := iterate(a[0])
			if err != nil {
				return nil, err
			}
			cs := Truthy(arg(a, 1, false))
			attr := arg(a, 2, nil)
			out := []any{}
			// Strings and integers are looked up in a set; other keys are compared with
			// the ones seen, like Python does for unhashable values.
			hashed := map[any]bool{}
			var seen []any
			for _, e := range l {
				k := e
				if attr != nil {
					k = attrPath(e, str(attr))
				}
				if s, ok := k.(string); ok && !cs {
					if !fr.charge(len(s)) {
						return nil, fr.err
					}
					k = strings.ToLower(s)
				}
				dup := false
				if h, ok := hashKey(k); ok {
					dup = hashed[h]
					hashed[h] = true
				} else {
					for _, s := range seen {
						if fr.equal(s, k, 0) {
							dup = true
							break
						}
					}
					if fr.err != nil {
						return nil, fr.err
					}
					if !dup {
						seen = append(seen, k)
					}
				}
				if !dup {
					out = append(out, e)
				}
			}
			return out, nil
		}, false, nil),
		"tojson":    sp("indent", 0, func(a []any) (any, error) { return toJSON(a[0], true) }, nil),
		"urlencode": sp("", 0, func(a []any) (any, error) { return urlencodeValue(a[0]), nil }),
		"b64encode": sp("", 0, func(a []any) (any, error) {
			return base64.StdEncoding.EncodeToString([]byte(str(a[0]))), nil
		}),
		"b64decode": sp("", 0, func(a []any) (any, error) { return b64decode(str(a[0])) }),
		"hash": sp("hash_type,salt", 0, func(a []any) (any, error) {
			h, err := hasher(strArg(a, 1, "md5"))
			if err != nil {
				return nil, err
			}
			h.Write([]byte(str(a[0])))
			if salt := arg(a, 2, nil); Truthy(salt) {
				h.Write([]byte(str(salt)))
			}
			return fmt.Sprintf("%x", h.Sum(nil)), nil
		}, "md5", nil),
		"regex_search": sp("regex", 1, func(a []any) (any, error) {
			re, err := compileRegex(str(a[1]))
			if err != nil {
				return nil, err
			}
			text, ok := a[0].(string)
			if !ok {
				// Python's re.search takes text only: TypeError for none, a number, undefined.
				return nil, typeErrorf("expected string or bytes-like object, got '%s'", typeName(a[0]))
			}
			m := re.FindStringSubmatch(text)
			if len(m) > 1 {
				return m[1], nil
			}
			return "", nil
		}),
		"regex_replace": sp("regex,replacement,count", 2, func(a []any) (any, error) {
			re, err := compileRegex(str(a[1]))
			if err != nil {
				return nil, err
			}
			return regexReplace(re, str(a[0]), pyReplacement(str(a[2])))
		}, int64(0)),
		"replace": sp("old,new,count", 2, func(a []any) (any, error) {
			n := int64(-1)
			if c := arg(a, 3, nil); c != nil {
				n, _ = ToInt(c)
			}
			return replace(str(a[0]), str(a[1]), str(a[2]), n)
		}, nil),
		"round": sp("precision,method", 0, func(a []any) (any, error) {
			p, _ := ToInt(arg(a, 1, int64(0)))
			return jinjaRound(a[0], p, strArg(a, 2, "common"))
		}, int64(0), "common"),
		"abs": sp("", 0, func(a []any) (any, error) {
			n, k := toNumberOrBool(a[0])
			switch {
			case k == numInt && n.i < 0:
				return neg(n.i)
			case k == numInt:
				return n.i, nil
			case k == numFloat:
				if n.f < 0 {
					return -n.f, nil
				}
				return n.f, nil
			}
			return nil, fmt.Errorf("bad operand type for abs(): '%s'", typeName(a[0]))
		}),
		"sort": spf("reverse,case_sensitive,attribute", 0, func(fr *frame, a []any) (any, error) {
			l, err := listOf(a[0])
			if err != nil {
				return nil, err
			}
			cs := Truthy(arg(a, 2, false))
			attr := arg(a, 3, nil)
			err = fr.sortValues(l, func(e any) any {
				if attr != nil {
					e = attrPath(e, str(attr))
				}
				if s, ok := e.(string); ok && !cs {
					return strings.ToLower(s)
				}
				return e
			}, Truthy(arg(a, 1, false)))
			return l, err
		}, false, false, nil),
		"reverse": sp("", 0, func(a []any) (any, error) {
			if s, ok := a[0].(string); ok {
				r := []rune(s)
				for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
					r[i], r[j] = r[j], r[i]
				}
				return string(r), nil
			}
			l, err := listOf(a[0])
			for i, j := 0, len(l)-1; i < j; i, j = i+1, j-1 {
				l[i], l[j] = l[j], l[i]
			}
			return l, err
		}),
		"items": sp("", 0, func(a []any) (any, error) { return itemsOf(a[0]) }),
		"dictsort": spf("case_sensitive,by,reverse", 0, func(fr *frame, a []any) (any, error) {
			return fr.dictsort(a[0], Truthy(arg(a, 1, false)), strArg(a, 2, "key"), Truthy(arg(a, 3, false)))
		}, false, "key", false),
		"selectattr": spf("attr...", 1, func(fr *frame, a []any) (any, error) { return selectItems(fr, a[0], a[1:], true, true) }),
		"rejectattr": spf("attr...", 1, func(fr *frame, a []any) (any, error) { return selectItems(fr, a[0], a[1:], true, false) }),
		"select":     spf("test...", 0, func(fr *frame, a []any) (any, error) { return selectItems(fr, a[0], a[1:], false, true) }),
		"reject":     spf("test...", 0, func(fr *frame, a []any) (any, error) { return selectItems(fr, a[0], a[1:], false, false) }),
		"max":        spf("", 0, func(fr *frame, a []any) (any, error) { return fr.minMax(a[:1], true, "max") }),
		"min":        spf("", 0, func(fr *frame, a []any) (any, error) { return fr.minMax(a[:1], false, "min") }),
		"sum": sp("attribute,start", 0, func(a []any) (any, error) {
			l, err := iterate(a[0])
			if err != nil {
				return nil, err
			}
			items := make([]any, len(l))
			for i, e := range l {
				if attr := arg(a, 1, nil); attr != nil {
					e = attrPath(e, str(attr))
				}
				items[i] = e
			}
			return sum(arg(a, 2, int64(0)), items)
		}, nil, int64(0)),
		"wordcount": sp("", 0, func(a []any) (any, error) { return int64(fieldCount(str(a[0]))), nil }),
		"center": sp("width", 0, func(a []any) (any, error) {
			w, _ := ToInt(arg(a, 1, int64(80)))
			return applySpec(a[0], str(a[0]), fmt.Sprintf("^%d", min(w, 1000)))
		}, int64(80)),
		"truncate": sp("length,killwords,end", 0, func(a []any) (any, error) {
			n, _ := ToInt(arg(a, 1, int64(255)))
			s := []rune(str(a[0]))
			end := strArg(a, 3, "...")
			if int64(len(s)) <= n || n < 0 {
				return string(s), nil
			}
			return string(s[:max(n-int64(len([]rune(end))), 0)]) + end, nil
		}, int64(255), false, "..."),
		"mapping_get": nil,
		// Declarative OAuth filters.
		"urlEncoder": sp("", 0, func(a []any) (any, error) { return quote(str(a[0]), "", false), nil }),
		"urlDecoder": sp("", 0, func(a []any) (any, error) {
			s, err := url.QueryUnescape(str(a[0]))
			if err != nil {
				return str(a[0]), nil
			}
			return s, nil
		}),
		"codeChallengeS256": sp("", 0, func(a []any) (any, error) {
			sum := sha256.Sum256([]byte(str(a[0])))
			return base64.RawURLEncoding.EncodeToString(sum[:]), nil
		}),
	}
	delete(filters, "mapping_get")
	filters["d"] = filters["default"]
	filters["count"] = filters["length"]
	filters["base64encode"] = filters["b64encode"]
	filters["base64Encoder"] = filters["b64encode"]
	filters["base64decode"] = filters["b64decode"]
	filters["base64Decoder"] = filters["b64decode"]
	filters["urlEncode"] = filters["urlEncoder"]
	filters["e"] = strFilter(func(s string) string { return s })
	filters["escape"] = filters["e"]

	methods = map[string]*spec{
		"get": sp("key,default", 1, func(a []any) (any, error) {
			switch a[0].(type) {
			case nil, undefined:
				return Undefined, nil
			}
			m, ok := mapView(a[0])
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'get'", typeName(a[0]))
			}
			if v, ok := m.Get(keyString(a[1])); ok {
				return v, nil
			}
			return arg(a, 2, nil), nil
		}, nil),
		"items": sp("", 0, func(a []any) (any, error) { return itemsOf(a[0]) }),
		"keys": sp("", 0, func(a []any) (any, error) {
			m, ok := mapView(a[0])
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'keys'", typeName(a[0]))
			}
			keys := m.Keys()
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i] = k
			}
			return out, nil
		}),
		"values": sp("", 0, func(a []any) (any, error) {
			m, ok := mapView(a[0])
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'values'", typeName(a[0]))
			}
			keys := m.Keys()
			out := make([]any, len(keys))
			for i, k := range keys {
				out[i], _ = m.Get(k)
			}
			return out, nil
		}),
		"split": sp("sep,maxsplit", 0, func(a []any) (any, error) {
			s, err := needStr(a[0], "split")
			if err != nil {
				return nil, err
			}
			n, _ := ToInt(arg(a, 2, int64(-1)))
			return pySplit(s, arg(a, 1, nil), n)
		}, nil, int64(-1)),
		"join": sp("iterable", 1, func(a []any) (any, error) {
			l, err := iterate(a[1])
			if err != nil {
				return nil, err
			}
			return joinStrings(l, str(a[0]), str)
		}),
		"lower":      sp("", 0, func(a []any) (any, error) { return strings.ToLower(str(a[0])), nil }),
		"upper":      sp("", 0, func(a []any) (any, error) { return strings.ToUpper(str(a[0])), nil }),
		"title":      sp("", 0, func(a []any) (any, error) { return pyTitle(str(a[0])), nil }),
		"capitalize": sp("", 0, func(a []any) (any, error) { return pyCapitalize(str(a[0])), nil }),
		"strip": sp("chars", 0, func(a []any) (any, error) {
			return pyStrip(str(a[0]), a[1:], strings.Trim, strings.TrimSpace), nil
		}, nil),
		"lstrip": sp("chars", 0, func(a []any) (any, error) {
			return pyStrip(str(a[0]), a[1:], strings.TrimLeft, func(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }), nil
		}, nil),
		"rstrip": sp("chars", 0, func(a []any) (any, error) {
			return pyStrip(str(a[0]), a[1:], strings.TrimRight, func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }), nil
		}, nil),
		"replace": sp("old,new,count", 2, func(a []any) (any, error) {
			n, _ := ToInt(arg(a, 3, int64(-1)))
			return replace(str(a[0]), str(a[1]), str(a[2]), n)
		}, int64(-1)),
		"startswith": sp("prefix", 1, func(a []any) (any, error) { return hasAffix(a, strings.HasPrefix) }),
		"endswith":   sp("suffix", 1, func(a []any) (any, error) { return hasAffix(a, strings.HasSuffix) }),
		"find": sp("sub", 1, func(a []any) (any, error) {
			i := strings.Index(str(a[0]), str(a[1]))
			if i < 0 {
				return int64(-1), nil
			}
			return int64(len([]rune(str(a[0])[:i]))), nil
		}),
		"isdigit": sp("", 0, func(a []any) (any, error) { return isDigits(str(a[0])), nil }),
		"zfill": sp("width", 1, func(a []any) (any, error) {
			w, _ := ToInt(a[1])
			s := str(a[0])
			for int64(len(s)) < min(w, 1000) {
				s = "0" + s
			}
			return s, nil
		}),
		"format": sp("args...", 0, nil),
		"strftime": sp("format", 1, func(a []any) (any, error) {
			d, ok := asDtime(a[0])
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'strftime'", typeName(a[0]))
			}
			return strftime(d, str(a[1])), nil
		}),
		"isoformat": sp("sep,timespec", 0, func(a []any) (any, error) {
			d, ok := asDtime(a[0])
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'isoformat'", typeName(a[0]))
			}
			sep, timespec := arg(a, 1, Undefined), arg(a, 2, Undefined)
			if d.kind == dtDate {
				if n := given(a[1:]); n > 0 {
					return nil, fmt.Errorf("date.isoformat() takes no arguments (%d given)", n)
				}
				return d.isoformatSpec("", "auto")
			}
			if IsUndefined(sep) {
				sep = "T"
			}
			if s, ok := sep.(string); !ok || utf8.RuneCountInString(s) != 1 {
				return nil, fmt.Errorf("isoformat() argument 1 must be a unicode character, not %s", typeName(sep))
			}
			if IsUndefined(timespec) {
				timespec = "auto"
			}
			if _, ok := timespec.(string); !ok {
				return nil, fmt.Errorf("isoformat() argument 2 must be str, not %s", typeName(timespec))
			}
			return d.isoformatSpec(sep.(string), timespec.(string))
		}, Undefined, Undefined),
		"weekday": sp("", 0, func(a []any) (any, error) {
			d, ok := asDtime(a[0])
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'weekday'", typeName(a[0]))
			}
			return d.weekday(), nil
		}),
		"isoweekday": sp("", 0, func(a []any) (any, error) {
			d, ok := asDtime(a[0])
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'isoweekday'", typeName(a[0]))
			}
			return d.weekday() + 1, nil
		}),
		"timestamp": sp("", 0, func(a []any) (any, error) {
			d, ok := asDtime(a[0])
			if !ok || d.kind == dtDate {
				return nil, fmt.Errorf("'%s' object has no attribute 'timestamp'", typeName(a[0]))
			}
			return d.timestamp(), nil
		}),
		"date": sp("", 0, func(a []any) (any, error) {
			d, ok := asDtime(a[0])
			if !ok || d.kind == dtDate {
				return nil, fmt.Errorf("'%s' object has no attribute 'date'", typeName(a[0]))
			}
			t := d.t
			return dtime{t: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), kind: dtDate}, nil
		}),
		"total_seconds": sp("", 0, func(a []any) (any, error) {
			d, ok := a[0].(duration)
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'total_seconds'", typeName(a[0]))
			}
			if d.months != 0 {
				// duration('P1M') is an isodate Duration, which has no total_seconds().
				return nil, errors.New("'Duration' object has no attribute 'total_seconds'")
			}
			// Python counts whole microseconds: (days*86400 + seconds)*10**6 + microseconds,
			// over 10**6.
			return float64(d.d/time.Microsecond) / 1e6, nil
		}),
		"append": impure(sp("item", 1, nil)),
		"extend": impure(sp("items", 1, nil)),
		"update": impure(sp("other", 0, func(a []any) (any, error) {
			m, ok := a[0].(map[string]any)
			if ns, isNS := a[0].(*namespace); isNS {
				m, ok = ns.m, true
			}
			if !ok {
				return nil, fmt.Errorf("'%s' object has no attribute 'update'", typeName(a[0]))
			}
			if len(a) > 1 {
				o, ok := mapView(a[1])
				if !ok {
					return nil, fmt.Errorf("update expects a mapping, got %s", typeName(a[1]))
				}
				for _, k := range o.Keys() {
					m[k], _ = o.Get(k)
				}
			}
			return nil, nil
		}, nil)),
		"pop": impure(sp("key,default", 0, func(a []any) (any, error) {
			if m, ok := a[0].(map[string]any); ok && len(a) > 1 {
				k := keyString(a[1])
				v, found := m[k]
				if !found {
					return arg(a, 2, Undefined), nil
				}
				delete(m, k)
				return v, nil
			}
			return Undefined, nil
		}, nil, Undefined)),
		"copy": sp("", 0, func(a []any) (any, error) {
			if m, ok := asMap(a[0]); ok {
				c := make(map[string]any, len(m))
				for k, v := range m {
					c[k] = v
				}
				return c, nil
			}
			if o, ok := a[0].(Mapping); ok {
				keys := o.Keys()
				c := make(map[string]any, len(keys))
				for _, k := range keys {
					c[k], _ = o.Get(k)
				}
				return c, nil
			}
			return listOf(a[0])
		}),
		"count": spf("x", 1, func(fr *frame, a []any) (any, error) {
			if s, ok := a[0].(string); ok {
				sub := str(a[1])
				if sub == "" {
					return int64(len([]rune(s)) + 1), nil
				}
				return int64(strings.Count(s, sub)), nil
			}
			l, err := iterate(a[0])
			n := int64(0)
			for _, e := range l {
				if fr.equal(e, a[1], 0) {
					n++
				}
			}
			if err == nil {
				err = fr.err
			}
			return n, err
		}),
		"index": spf("x", 1, func(fr *frame, a []any) (any, error) {
			if s, ok := a[0].(string); ok {
				i := strings.Index(s, str(a[1]))
				if i < 0 {
					return nil, errors.New("substring not found")
				}
				return int64(len([]rune(s[:i]))), nil
			}
			l, err := iterate(a[0])
			for i, e := range l {
				if fr.equal(e, a[1], 0) {
					return int64(i), nil
				}
			}
			if fr.err != nil {
				return nil, fr.err
			}
			if err == nil {
				err = fmt.Errorf("%s is not in list", pyRepr(a[1]))
			}
			return nil, err
		}),
	}
	methods["append"].fn = func(a []any) (any, error) {
		return nil, errors.New("append needs a list variable")
	}

	functions = map[string]*spec{
		"now_utc": impure(spf("", 0, func(fr *frame, a []any) (any, error) { return aware(fr.now().UTC()), nil })),
		"today_utc": impure(spf("", 0, func(fr *frame, a []any) (any, error) {
			t := fr.now().UTC()
			return dtime{t: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), kind: dtDate}, nil
		})),
		"today_with_timezone": impure(spf("timezone", 1, func(fr *frame, a []any) (any, error) {
			loc, err := time.LoadLocation(str(a[0]))
			if err != nil || str(a[0]) == "" || strings.EqualFold(str(a[0]), "local") {
				return nil, fmt.Errorf("unknown time zone %s", pyRepr(str(a[0])))
			}
			t := fr.now().In(loc)
			return dtime{t: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), kind: dtDate}, nil
		})),
		"timestamp": sp("dt", 1, func(a []any) (any, error) {
			if _, k := toNumber(a[0]); k != numNone {
				if _, isJSON := a[0].(interface{ Float64() (float64, error) }); !isJSON {
					return pyInt(a[0])
				}
			}
			d, err := parseDatetime(a[0])
			if err != nil {
				return nil, err
			}
			return d.timestamp(), nil
		}),
		"str_to_datetime": sp("s", 1, func(a []any) (any, error) {
			d, err := parseDatetime(a[0])
			if err != nil {
				return nil, err
			}
			d.t = d.t.UTC()
			return d, nil
		}),
		"max": spf("args...", 1, func(fr *frame, a []any) (any, error) { return fr.minMax(a, true, "max") }),
		"min": spf("args...", 1, func(fr *frame, a []any) (any, error) { return fr.minMax(a, false, "min") }),
		"day_delta": impure(spf("num_days,format", 1, func(fr *frame, a []any) (any, error) {
			n, ok := toFloat(a[0])
			if !ok {
				return nil, fmt.Errorf("day_delta expects a number of days, got %s", typeName(a[0]))
			}
			if n > 1e6 || n < -1e6 {
				return nil, errors.New("day_delta out of range")
			}
			t := fr.now().UTC().Add(time.Duration(n * 24 * float64(time.Hour)))
			return formatDatetime(aware(t), strArg(a, 1, "%Y-%m-%dT%H:%M:%S.%f%z")), nil
		}, "%Y-%m-%dT%H:%M:%S.%f%z")),
		"duration": sp("datestring", 1, func(a []any) (any, error) { return parseISODuration(str(a[0])) }),
		"format_datetime": sp("dt,format,input_format", 2, func(a []any) (any, error) {
			format := str(a[1])
			if d, ok := asDtime(a[0]); ok {
				if d.kind != dtAware {
					d.kind = dtAware
				}
				return formatDatetime(d, format), nil
			}
			var d dtime
			var err error
			if in := arg(a, 2, nil); in != nil && !IsUndefined(in) {
				if a[0] == nil || IsUndefined(a[0]) {
					// Python's strptime takes text only: TypeError for none or undefined.
					return nil, typeErrorf("strptime() argument 1 must be str, not %s", typeName(a[0]))
				}
				d, err = strptime(str(a[0]), str(in))
				if str(in) == "%s" || str(in) == "%ms" {
					if n, e := ToInt(a[0]); e == nil {
						if str(in) == "%ms" {
							d, err = aware(time.UnixMilli(n).UTC()), nil
						} else {
							d, err = aware(time.Unix(n, 0).UTC()), nil
						}
					}
				}
				if err != nil {
					if d2, e2 := parseDatetime(a[0]); e2 == nil {
						d, err = d2, nil
					}
				}
			} else {
				d, err = parseDatetime(a[0])
			}
			if err != nil {
				return nil, err
			}
			if d.kind != dtAware {
				d.kind = dtAware
			}
			return formatDatetime(d, format), nil
		}, nil),
		"sanitize_url":             sp("url", 1, func(a []any) (any, error) { return quote(str(a[0]), "", false), nil }),
		"camel_case_to_snake_case": sp("value", 1, func(a []any) (any, error) { return camelToSnake(str(a[0])), nil }),
		"generate_uuid":            impure(sp("", 0, func(a []any) (any, error) { return uuid4(), nil })),
		"json_loads": sp("s", 1, func(a []any) (any, error) {
			if m, ok := a[0].(map[string]any); ok {
				return m, nil
			}
			return fromJSON(str(a[0]))
		}),
		"str":       sp("object", 0, func(a []any) (any, error) { return ToString(arg(a, 0, "")), nil }, ""),
		"int":       sp("x", 0, func(a []any) (any, error) { return pyInt(arg(a, 0, int64(0))) }, int64(0)),
		"float":     sp("x", 0, func(a []any) (any, error) { return pyFloatOf(arg(a, 0, 0.0)) }, 0.0),
		"bool":      sp("x", 0, func(a []any) (any, error) { return Truthy(arg(a, 0, false)), nil }, false),
		"len":       sp("obj", 1, func(a []any) (any, error) { n, err := length(a[0]); return int64(n), err }),
		"list":      sp("iterable", 0, func(a []any) (any, error) { return listOf(arg(a, 0, nil)) }, nil),
		"abs":       sp("x", 1, func(a []any) (any, error) { return filters["abs"].fn(a) }),
		"round":     sp("number,ndigits", 1, func(a []any) (any, error) { return pyRound(a[0], arg(a, 1, nil)) }, nil),
		"range":     sp("start,stop,step", 1, pyRange),
		"dict":      sp("", 0, nil), // compiled specially: keyword arguments
		"namespace": sp("", 0, nil), // compiled specially: keyword arguments
	}

	isStr := func(v any) bool { _, ok := v.(string); return ok }
	cmpTest := func(op string) *testSpec {
		return &testSpec{nargs: 1, fn: func(fr *frame, v any, a []any) (bool, error) {
			if op == "==" {
				return fr.equal(v, a[0], 0), fr.err
			}
			if op == "!=" {
				return !fr.equal(v, a[0], 0), fr.err
			}
			c, err := fr.compare(v, a[0], op, 0)
			switch op {
			case "<":
				return c < 0, err
			case "<=":
				return c <= 0, err
			case ">":
				return c > 0, err
			}
			return c >= 0, err
		}}
	}
	tests = map[string]*testSpec{
		"none":      {fn: func(_ *frame, v any, _ []any) (bool, error) { return v == nil, nil }},
		"defined":   {fn: func(_ *frame, v any, _ []any) (bool, error) { return !IsUndefined(v), nil }},
		"undefined": {fn: func(_ *frame, v any, _ []any) (bool, error) { return IsUndefined(v), nil }},
		"true":      {fn: func(_ *frame, v any, _ []any) (bool, error) { b, ok := v.(bool); return ok && b, nil }},
		"false":     {fn: func(_ *frame, v any, _ []any) (bool, error) { b, ok := v.(bool); return ok && !b, nil }},
		"boolean":   {fn: func(_ *frame, v any, _ []any) (bool, error) { _, ok := v.(bool); return ok, nil }},
		"string":    {fn: func(_ *frame, v any, _ []any) (bool, error) { return isStr(v), nil }},
		"number": {fn: func(_ *frame, v any, _ []any) (bool, error) {
			_, k := toNumberOrBool(v)
			return k != numNone, nil
		}},
		"integer": {fn: func(_ *frame, v any, _ []any) (bool, error) { _, k := toNumber(v); return k == numInt, nil }},
		"float":   {fn: func(_ *frame, v any, _ []any) (bool, error) { _, k := toNumber(v); return k == numFloat, nil }},
		"mapping": {fn: func(_ *frame, v any, _ []any) (bool, error) { _, ok := mapView(v); return ok, nil }},
		"iterable": {fn: func(_ *frame, v any, _ []any) (bool, error) {
			if isStr(v) || IsUndefined(v) {
				return true, nil
			}
			_, ok := asList(v)
			_, isMap := mapView(v)
			return ok || isMap, nil
		}},
		"sequence": {fn: func(_ *frame, v any, _ []any) (bool, error) {
			_, ok := asList(v)
			_, isMap := mapView(v)
			return ok || isMap || isStr(v), nil
		}},
		"sameas": {nargs: 1, fn: func(fr *frame, v any, a []any) (bool, error) {
			switch x := v.(type) {
			case nil, bool, undefined:
				return v == a[0], nil
			case string:
				y, ok := a[0].(string)
				return ok && x == y, nil
			}
			return fr.equal(v, a[0], 0), fr.err
		}},
		"even": {fn: func(_ *frame, v any, _ []any) (bool, error) {
			n, k := toNumber(v)
			if k != numInt {
				return false, fmt.Errorf("'%s' object is not an integer", typeName(v))
			}
			return n.i%2 == 0, nil
		}},
		"odd": {fn: func(_ *frame, v any, _ []any) (bool, error) {
			n, k := toNumber(v)
			if k != numInt {
				return false, fmt.Errorf("'%s' object is not an integer", typeName(v))
			}
			return n.i%2 != 0, nil
		}},
		"divisibleby": {nargs: 1, fn: func(fr *frame, v any, a []any) (bool, error) {
			r, err := mod(v, a[0])
			if err != nil {
				return false, err
			}
			return fr.equal(r, int64(0), 0), nil
		}},
		"lower": {fn: func(_ *frame, v any, _ []any) (bool, error) {
			s := str(v)
			return isStr(v) && s == strings.ToLower(s), nil
		}},
		"upper": {fn: func(_ *frame, v any, _ []any) (bool, error) {
			s := str(v)
			return isStr(v) && s == strings.ToUpper(s), nil
		}},
		"in": {nargs: 1, fn: func(fr *frame, v any, a []any) (bool, error) { return fr.contains(a[0], v) }},
		"eq": cmpTest("=="), "equalto": cmpTest("=="), "==": cmpTest("=="),
		"ne": cmpTest("!="), "!=": cmpTest("!="),
		"lt": cmpTest("<"), "lessthan": cmpTest("<"), "<": cmpTest("<"),
		"le": cmpTest("<="), "<=": cmpTest("<="),
		"gt": cmpTest(">"), "greaterthan": cmpTest(">"), ">": cmpTest(">"),
		"ge": cmpTest(">="), ">=": cmpTest(">="),
		"match": {nargs: 1, fn: func(fr *frame, v any, a []any) (bool, error) {
			re, err := compileRegex("^(?:" + str(a[0]) + ")")
			if err != nil {
				return false, err
			}
			return re.MatchString(str(v)), nil
		}},
	}
}

// given counts the arguments a call wrote: those left out are Undefined.
func given(args []any) int {
	n := 0
	for _, a := range args {
		if !IsUndefined(a) {
			n++
		}
	}
	return n
}

func hasAffix(a []any, f func(string, string) bool) (any, error) {
	s := str(a[0])
	if l, ok := asList(a[1]); ok {
		for _, e := range l {
			if f(s, str(e)) {
				return true, nil
			}
		}
		return false, nil
	}
	return f(s, str(a[1])), nil
}

var _ = regexp.QuoteMeta
