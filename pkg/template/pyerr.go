package template

import (
	"errors"
	"fmt"
)

// ErrorClass is the Python exception an evaluation failure stands for, where the CDK's
// interpolation treats that exception apart from the others: it renders the template's
// own text for a TypeError, and falls back to the caller's default for Jinja's
// UndefinedError. Every other failure is ClassOther and stays a failure.
type ErrorClass int

const (
	// ClassOther is any failure the CDK lets through (ValueError, ZeroDivisionError...).
	ClassOther ErrorClass = iota
	// ClassUndefined is what Jinja raises when an undefined value is used as a number or
	// ordered: arithmetic, <, >, unary minus, a date function given nothing.
	ClassUndefined
	// ClassType is Python's TypeError: an operation on values of the wrong types, such as
	// None > 0, "5" + 1, or a regular expression searched in something that is not text.
	ClassType
)

// classed is a failure of a known ErrorClass, with the message we show for it.
type classed struct {
	class ErrorClass
	msg   string
}

func (e *classed) Error() string { return e.msg }

func typeErrorf(format string, args ...any) error {
	return &classed{class: ClassType, msg: fmt.Sprintf(format, args...)}
}

func undefinedErrorf(format string, args ...any) error {
	return &classed{class: ClassUndefined, msg: fmt.Sprintf(format, args...)}
}

// classOf is the class of a failure made anywhere in this package.
func classOf(err error) ErrorClass {
	var c *classed
	if errors.As(err, &c) {
		return c.class
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ClassOther
}

// Class is the ErrorClass of an error Eval or Render returned (ClassOther for any other).
func Class(err error) ErrorClass { return classOf(err) }

// Interpolate evaluates t as the CDK's interpolation does before any default applies:
// like Eval, except that a failure Python raises as a TypeError gives the template's own
// source text as the value (the CDK catches that error and keeps the text as written).
// A failure of ClassUndefined is returned: the caller applies its default, or fails
// where the CDK has none.
func (t *Template) Interpolate(vars map[string]any) (any, error) {
	v, err := t.Eval(vars)
	if err != nil && classOf(err) == ClassType {
		return t.src, nil
	}
	return v, err
}

// InterpolateText is Interpolate rendered as text, as Render renders Eval's value.
func (t *Template) InterpolateText(vars map[string]any) (string, error) {
	s, err := t.Render(vars)
	if err != nil && classOf(err) == ClassType {
		return t.src, nil
	}
	return s, err
}

// InterpolateOr is Interpolate with the caller's default: a failure of ClassUndefined gives
// def, as the CDK evaluates its default when Jinja raises UndefinedError. The CDK's
// conditions (a record filter, a stop condition, a response filter's predicate) have the
// default false; the values of a request's mappings have none.
func (t *Template) InterpolateOr(vars map[string]any, def any) (any, error) {
	v, err := t.Interpolate(vars)
	if err != nil && classOf(err) == ClassUndefined {
		return def, nil
	}
	return v, err
}
