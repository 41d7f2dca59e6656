package incremental

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// number is a cursor count as the API wrote it, with its value for comparisons.
type number struct {
	text json.Number
	v    *big.Float
}

func (n number) value() any {
	if n.text == "" {
		return json.Number("0")
	}
	return n.text
}

func newNumber(v any) (number, error) {
	var text json.Number
	switch x := v.(type) {
	case json.Number:
		text = x
	case int:
		text = json.Number(strconv.Itoa(x))
	case int64:
		text = json.Number(strconv.FormatInt(x, 10))
	case float64:
		text = json.Number(strconv.FormatFloat(x, 'f', -1, 64))
	default:
		return number{}, errNotNumber
	}
	f, _, err := big.ParseFloat(string(text), 10, 128, big.ToNearestEven)
	if err != nil {
		return number{}, errNotNumber
	}
	return number{text: text, v: f}, nil
}

// countMax is the greatest cursor value of a slice's records.
type countMax struct {
	n   number
	has bool
}

func (m *countMax) observe(v any, found bool, field string) error {
	if !found || v == nil {
		return nil
	}
	n, err := newNumber(v)
	if err != nil {
		return fmt.Errorf("the IncrementingCountCursor's field %q holds %s, not a number", field, template.ToString(v))
	}
	if !m.has || n.v.Cmp(m.n.v) > 0 {
		m.n, m.has = n, true
	}
	return nil
}

// countCursor is an IncrementingCountCursor: one slice from the state's count (or
// start_value) on; the state is the greatest count seen.
type countCursor struct {
	field     string
	syncStart number
	max       countMax
	opt       *request.Option
}

// countKind is IncrementingCountCursor: one slice from the state's count (or start_value)
// on; a stream with a partition router cannot have one, as in the CDK.
var countKind = kind{
	make: func(s *manifest.Stream, st *record.Object, env Env) (impl, string, error) {
		if s.Router != nil {
			return nil, "", fmt.Errorf("an IncrementingCountCursor cannot be used with a partition router (as in the Airbyte CDK): give stream %s one or the other", s.Name)
		}
		cc, err := newCountCursor(s.Incremental, env, st)
		if err != nil {
			return nil, "", err
		}
		return cc, cc.field, nil
	},
}

func newCountCursor(m *manifest.Incremental, env Env, st *record.Object) (*countCursor, error) {
	vars := env.Globals.Vars(m.Parameters)
	field, err := m.CursorField.Render(vars)
	if err != nil {
		return nil, fmt.Errorf("cursor_field: %w", err)
	}
	c := &countCursor{field: field}
	start := number{text: "0", v: new(big.Float)}
	if m.StartValue != nil {
		v, err := m.StartValue.Eval(vars)
		if err != nil {
			return nil, fmt.Errorf("start_value: %w", err)
		}
		if s, ok := v.(string); ok {
			i, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil {
				return nil, fmt.Errorf("start_value %q is not an integer", s)
			}
			v = json.Number(strconv.FormatInt(i, 10))
		}
		if start, err = newNumber(v); err != nil {
			return nil, fmt.Errorf("start_value %s is not an integer", template.ToString(v))
		}
	}
	c.syncStart = start
	if st != nil {
		if v, ok := st.Get(field); ok && template.Truthy(v) {
			n, err := newNumber(v)
			if err != nil {
				return nil, &StateError{Key: field, Err: fmt.Errorf("an IncrementingCountCursor's state is a number, not %s", template.ToString(v))}
			}
			if n.v.Cmp(start.v) >= 0 {
				c.syncStart = n
			}
		}
	}
	if c.opt, err = request.NewOption(m.StartValueOption, vars); err != nil {
		return nil, fmt.Errorf("start_value_option: %w", err)
	}
	return c, nil
}

// slices yields the one slice.
func (c *countCursor) slices(_ context.Context, _ *Cursor, yield func(*slice.Slice, error) bool) {
	yield(c.slice(), nil)
}

// slice is the one slice: {"start": count, "end": inf}.
func (c *countCursor) slice() *slice.Slice {
	sl := slice.New(nil)
	sl.Cursor.Set("start", c.syncStart.value())
	sl.Cursor.Set("end", inf)
	return sl
}

// inject puts the slice's start at start_value_option.
func (c *countCursor) inject(b *request.Builder, sl *slice.Slice) error {
	if c.opt == nil {
		return nil
	}
	v, _ := sl.Get("start")
	return c.opt.Inject(b, v, "start_value_option")
}

// keep keeps every record and follows the greatest count.
func (c *countCursor) keep(t *Tracker, v any, found bool) (bool, error) {
	return true, t.count.observe(v, found, c.field)
}

// close: a STATE message after a slice that saw a count.
func (c *countCursor) close(_ *slice.Slice, t *Tracker) (bool, error) {
	m := t.count
	if m.has && (!c.max.has || m.n.v.Cmp(c.max.n.v) > 0) {
		c.max = m
	}
	return t.count.has, nil
}

func (c *countCursor) describe(field string) string {
	return fmt.Sprintf("IncrementingCountCursor on %s from %s", field, template.ToString(c.syncStart.value()))
}

func (c *countCursor) reduce(t *Tracker) (string, any, bool) {
	if !t.count.has {
		return "", nil, false
	}
	return "start", t.count.n.value(), true
}

// An IncrementingCountCursor filters nothing, has nothing to finish, and no partitions.
func (c *countCursor) filters() bool                { return false }
func (c *countCursor) dataFeed() bool               { return false }
func (c *countCursor) endNow() (time.Time, error)   { return time.Time{}, nil }
func (c *countCursor) pastRange(*Tracker, any) bool { return false }
func (c *countCursor) finish(slice.Router)          {}
func (c *countCursor) abandon()                     {}

func (c *countCursor) state() *record.Object {
	v := c.syncStart
	if c.max.has && c.max.n.v.Cmp(v.v) > 0 {
		v = c.max.n
	}
	out := &record.Object{}
	out.Set(c.field, v.value())
	return out
}
