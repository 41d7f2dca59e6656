package template

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Limits of a template, so that no template can crash the tool, hang it or
// make it eat memory. The largest template of the corpus is 782 bytes with 13 tags and 149
// tokens, nested one block deep.
const (
	// maxSource is the length of a template that has tags (plain text is not limited here).
	maxSource = 64 << 10
	// maxTags is the number of {{ }} and {% %} tags of one template.
	maxTags = 1000
	// maxTokens is the number of tokens of one tag.
	maxTokens = 1000
	// maxNesting is the nesting of blocks, of brackets and unary operators in an
	// expression, and of the values a template compares or writes.
	maxNesting = 100
	// maxValue is the size of a string a template builds, and of what it renders.
	maxValue = 16 << 20
	// maxItems is the length of a list or mapping a template builds.
	maxItems = 1 << 20
	// maxSteps counts, for one evaluation, the loop iterations, the calls and the
	// elements compared.
	maxSteps = 10_000_000
	// maxWork is what one evaluation may handle in all: the bytes of the strings its calls
	// read and build, 16 per item of a list and 32 per entry of a mapping built. It bounds
	// a string grown in a loop, and a long string read again and again.
	maxWork = 256 << 20
)

const limitNote = "(a limit of connector)"

var (
	errValue   = fmt.Errorf("template result larger than %d MiB %s", maxValue>>20, limitNote)
	errOutput  = fmt.Errorf("template output larger than %d MiB %s", maxValue>>20, limitNote)
	errItems   = fmt.Errorf("template list or mapping longer than %d items %s", maxItems, limitNote)
	errSteps   = fmt.Errorf("template evaluation takes more than %d steps %s", maxSteps, limitNote)
	errWork    = fmt.Errorf("template evaluation handles more than %d MiB in all %s", maxWork>>20, limitNote)
	errNesting = fmt.Errorf("template value nested more than %d levels deep %s", maxNesting, limitNote)
	errResult  = fmt.Errorf("template result holds more than %d values %s", maxItems, limitNote)
)

// checkResult applies maxNesting and maxItems to the list or mapping a template yields,
// counting a value each time it appears: whoever uses the result (a request body, JSON)
// copies it out, so a value that shares its halves, small in memory, must not get out.
func checkResult(v any) error {
	n := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		case map[string]any:
			items = make([]any, 0, len(x))
			for _, e := range x {
				items = append(items, e)
			}
		default:
			return nil
		}
		if depth > maxNesting {
			return errNesting
		}
		if n += len(items); n > maxItems {
			return errResult
		}
		for _, e := range items {
			if err := walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(v, 0)
}

// spend counts n steps; once over maxSteps the evaluation fails (see fail) and spend
// returns false, so that a long computation stops at its next step.
func (fr *frame) spend(n int) bool {
	if fr.err != nil {
		return false
	}
	if fr.steps += n; fr.steps > maxSteps {
		fr.err = errSteps
		return false
	}
	return true
}

// charge counts n bytes of work (a string read or built); once over maxWork the
// evaluation fails and charge returns false.
func (fr *frame) charge(n int) bool {
	if fr.err != nil {
		return false
	}
	if fr.work += n; fr.work > maxWork {
		fr.err = errWork
		return false
	}
	return true
}

// fail records the first limit the evaluation ran into; the call in progress returns it.
func (fr *frame) fail(err error) {
	if fr.err == nil {
		fr.err = err
	}
}

// account checks a value a call returned against maxValue and maxItems, and adds what
// the call built to the evaluation's work. A value passed through from an argument (a
// default, a first item, a stripped string) is not built, so it is not counted.
func (fr *frame) account(v any, args []any) error {
	if fr.err != nil {
		return fr.err
	}
	var n int
	switch x := v.(type) {
	case string:
		if len(x) > maxValue {
			return errValue
		}
		if len(x) < 64 || within(x, args) {
			return nil
		}
		n = len(x)
	case []any:
		if len(x) > maxItems {
			return errItems
		}
		if len(x) == 0 || sameList(x, args) {
			return nil
		}
		n = 16 * len(x)
	case map[string]any:
		if len(x) > maxItems {
			return errItems
		}
		if len(x) == 0 || sameMap(x, args) {
			return nil
		}
		n = 32 * len(x)
	default:
		return nil
	}
	if fr.work += n; fr.work > maxWork {
		return errWork
	}
	return nil
}

// within reports that s lies inside the bytes of one of the string arguments.
func within(s string, args []any) bool {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, a := range args {
		if t, ok := a.(string); ok && len(t) >= len(s) {
			q := uintptr(unsafe.Pointer(unsafe.StringData(t)))
			if p >= q && p+uintptr(len(s)) <= q+uintptr(len(t)) {
				return true
			}
		}
	}
	return false
}

// sameList reports that l is one of the list arguments.
func sameList(l []any, args []any) bool {
	for _, a := range args {
		if m, ok := a.([]any); ok && len(m) == len(l) && sameBacking(m, l) {
			return true
		}
	}
	return false
}

// sameMap reports that m is one of the mapping arguments.
func sameMap(m map[string]any, args []any) bool {
	for _, a := range args {
		if o, ok := a.(map[string]any); ok && reflect.ValueOf(o).UnsafePointer() == reflect.ValueOf(m).UnsafePointer() {
			return true
		}
	}
	return false
}

// fitString reports whether a string of n bytes may be built.
func fitString(n int64) error {
	if n > maxValue || n < 0 {
		return errValue
	}
	return nil
}

// fitItems reports whether a list of n items may be built.
func fitItems(n int64) error {
	if n > maxItems || n < 0 {
		return errItems
	}
	return nil
}
