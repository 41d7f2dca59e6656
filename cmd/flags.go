package cmd

// Flag values that check themselves. A value is refused in Set, with one message whether
// it came from the command line, a CONNECTOR_* variable or the settings file; only the
// source named at the end differs.

import (
	"connector/pkg/session"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Caps of connector itself: beyond them a read would only flood the API and the machine.
const (
	maxPrefetch    = 64
	maxConcurrency = session.MaxConcurrency
)

// badValue is why a flag refused a value. rule completes "--NAME …"; quote says whether the
// message repeats the value given.
type badValue struct {
	rule  string
	quote bool
}

func (b *badValue) Error() string { return b.rule }

// flagError is the usage error of a refused flag value: `--NAME RULE, not "VALUE"`, then
// where the value came from when it was not the command line.
func flagError(f *pflag.Flag, value string, err error, source string) error {
	var b *badValue
	if !errors.As(err, &b) {
		b = &badValue{quote: true}
		switch f.Value.Type() {
		case "bool":
			b.rule = "must be true or false"
		case "int":
			b.rule = "must be a whole number"
		case "duration":
			b.rule = "must be a duration such as 30s, 2m or 1h30m"
		case "size":
			b.rule = "must be a size such as 64MiB, 1GiB or a number of bytes (1 byte to 4 EiB)"
		default:
			b.rule = "cannot take this value: " + err.Error()
		}
	}
	msg := "--" + f.Name + " " + b.rule
	if b.quote {
		msg += fmt.Sprintf(", not %q", value)
	}
	if source != "" {
		msg += " (from " + source + ")"
	}
	return usagef("%s", msg)
}

// checker is a flag value that can say whether it would take a value without taking it.
type checker interface {
	check(s string) error
}

// accepts reports whether flag f would take s.
func accepts(f *pflag.Flag, s string) bool {
	switch v := f.Value.(type) {
	case checker:
		return v.check(s) == nil
	}
	if f.Value.Type() == "bool" {
		_, err := strconv.ParseBool(s)
		return err == nil
	}
	return true
}

// intValue is a whole-number flag with bounds.
type intValue struct {
	p                *int
	min, max         int
	minRule, maxRule string
}

// intFlag defines a whole-number flag that refuses values below min (with minRule) and
// above max (with maxRule; max 0: no upper bound).
func intFlag(fs *pflag.FlagSet, p *int, name string, def int, usage string, min int, minRule string, max int, maxRule string) {
	*p = def
	fs.Var(&intValue{p: p, min: min, max: max, minRule: minRule, maxRule: maxRule}, name, usage)
}

func (v *intValue) parse(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	switch {
	case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(strings.TrimSpace(s), "-"):
		return 0, &badValue{rule: v.minRule}
	case errors.Is(err, strconv.ErrRange) && v.max > 0:
		return 0, &badValue{rule: v.maxRule}
	case errors.Is(err, strconv.ErrRange):
		return 0, &badValue{rule: fmt.Sprintf("must be at most %d", math.MaxInt)}
	case err != nil:
		return 0, &badValue{rule: "must be a whole number", quote: true}
	}
	if n < v.min {
		return 0, &badValue{rule: v.minRule}
	}
	if v.max > 0 && n > v.max {
		return 0, &badValue{rule: v.maxRule}
	}
	return n, nil
}

func (v *intValue) check(s string) error { _, err := v.parse(s); return err }

func (v *intValue) Set(s string) error {
	n, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

func (v *intValue) String() string { return strconv.Itoa(*v.p) }
func (v *intValue) Type() string   { return "int" }

// durationValue is a positive duration flag.
type durationValue struct{ p *time.Duration }

func durationFlag(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(&durationValue{p: p}, name, usage)
}

func (v *durationValue) parse(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, &badValue{rule: "must be a duration such as 30s, 2m or 1h30m", quote: true}
	}
	if d <= 0 {
		return 0, &badValue{rule: "must be positive, e.g. 30s"}
	}
	return d, nil
}

func (v *durationValue) check(s string) error { _, err := v.parse(s); return err }

func (v *durationValue) Set(s string) error {
	d, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

func (v *durationValue) String() string { return v.p.String() }
func (v *durationValue) Type() string   { return "duration" }

// enumValue is a flag that takes one of a few words (--format).
type enumValue struct {
	p       *string
	allowed []string
}

func enumFlag(fs *pflag.FlagSet, p *string, name string, allowed []string, usage string) {
	*p = allowed[0]
	fs.Var(&enumValue{p: p, allowed: allowed}, name, usage)
}

func (v *enumValue) check(s string) error {
	for _, a := range v.allowed {
		if s == a {
			return nil
		}
	}
	return &badValue{rule: "must be " + orList(v.allowed), quote: true}
}

func (v *enumValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

func (v *enumValue) String() string { return *v.p }
func (v *enumValue) Type() string   { return "string" }

// orList writes a, b or c.
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// assignment is one --set (text) or --set-json (JSON) argument, in command-line order.
type assignment struct {
	json bool
	text string
}

// assignValue is --set or --set-json; both append to one list so their order is kept
// (--set-json 'a={…}' --set a.b=x sets b inside the object just given).
type assignValue struct {
	list *[]assignment
	json bool
}

func assignFlags(fs *pflag.FlagSet, list *[]assignment, setUsage, jsonUsage string) {
	fs.Var(&assignValue{list: list}, "set", setUsage)
	fs.Var(&assignValue{list: list, json: true}, "set-json", jsonUsage)
}

func (v *assignValue) Set(s string) error { return v.Append(s) }

func (v *assignValue) Append(s string) error {
	*v.list = append(*v.list, assignment{json: v.json, text: s})
	return nil
}

// Replace sets the arguments of this flag (the settings file gives a list), keeping those of
// the other flag.
func (v *assignValue) Replace(ss []string) error {
	kept := (*v.list)[:0:0]
	for _, a := range *v.list {
		if a.json != v.json {
			kept = append(kept, a)
		}
	}
	*v.list = kept
	for _, s := range ss {
		v.Append(s)
	}
	return nil
}

func (v *assignValue) GetSlice() []string {
	var out []string
	for _, a := range *v.list {
		if a.json == v.json {
			out = append(out, a.text)
		}
	}
	return out
}

func (v *assignValue) String() string {
	s := v.GetSlice()
	if len(s) == 0 {
		return ""
	}
	return "[" + strings.Join(s, ",") + "]"
}

func (v *assignValue) Type() string { return "stringArray" }
