package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
)

// problem is one entry of a 422 answer, as FastAPI (pydantic 2) words a request body that
// does not fit its model: the kind of problem, where (["body", field]), a message, the
// input, and the bound broken.
type problem struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

func rangeProblem(field string, v int, typ, words string, bound int) problem {
	key := "ge"
	if typ == "less_than_equal" {
		key = "le"
	}
	return problem{Type: typ, Loc: []any{"body", field}, Msg: "Input should be " + words, Input: v, Ctx: map[string]any{key: bound}}
}

// fieldKinds are the JSON kinds of the fields of every request body.
var fieldKinds = map[string]string{
	"manifest": "object", "config": "object", "stream_name": "string", "state": "list",
	"custom_components_code": "string", "record_limit": "int", "page_limit": "int",
	"slice_limit": "int", "stream_limit": "int", "context": "object",
}

// decode reads a request body into dst, or says why it cannot as a 422 answer: a body that
// is not JSON, not an object, a required field missing, a field of the wrong kind. Fields the
// model does not know are ignored, as pydantic does.
func decode(body []byte, dst any, required ...string) error {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return unprocessable(problem{Type: "json_invalid", Loc: []any{"body", se.Offset}, Msg: "JSON decode error",
				Input: map[string]any{}, Ctx: map[string]any{"error": se.Error()}})
		case errors.As(err, &te), fields == nil && err == nil:
			var v any
			json.Unmarshal(body, &v)
			return unprocessable(problem{Type: "model_attributes_type", Loc: []any{"body"},
				Msg: "Input should be a valid dictionary or object to extract fields from", Input: v})
		default:
			// The body ended early: the problem is at its end.
			return unprocessable(problem{Type: "json_invalid", Loc: []any{"body", len(body)}, Msg: "JSON decode error",
				Input: map[string]any{}, Ctx: map[string]any{"error": err.Error()}})
		}
	}
	if fields == nil {
		return unprocessable(problem{Type: "model_attributes_type", Loc: []any{"body"},
			Msg: "Input should be a valid dictionary or object to extract fields from", Input: nil})
	}
	var problems []problem
	var whole any
	for _, name := range required {
		if _, ok := fields[name]; !ok {
			if whole == nil {
				json.Unmarshal(body, &whole)
			}
			problems = append(problems, problem{Type: "missing", Loc: []any{"body", name}, Msg: "Field required", Input: whole})
		}
	}
	for name, raw := range fields {
		kind, known := fieldKinds[name]
		if !known {
			continue
		}
		if p, bad := checkKind(name, kind, raw, contains(required, name)); bad {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return unprocessable(problems...)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return unprocessable(problem{Type: "value_error", Loc: []any{"body"}, Msg: err.Error(), Input: nil})
	}
	return nil
}

// checkKind checks that a field holds the kind of JSON value its model takes; null is a
// problem only for a required field.
func checkKind(name, kind string, raw json.RawMessage, required bool) (problem, bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	d.Decode(&v)
	loc := []any{"body", name}
	if v == nil && !required {
		return problem{}, false
	}
	switch kind {
	case "object":
		if _, ok := v.(map[string]any); !ok {
			return problem{Type: "model_attributes_type", Loc: loc, Msg: "Input should be a valid dictionary or object to extract fields from", Input: v}, true
		}
	case "string":
		if _, ok := v.(string); !ok {
			return problem{Type: "string_type", Loc: loc, Msg: "Input should be a valid string", Input: v}, true
		}
	case "list":
		if _, ok := v.([]any); !ok {
			return problem{Type: "list_type", Loc: loc, Msg: "Input should be a valid list", Input: v}, true
		}
	case "int":
		n, ok := v.(json.Number)
		if !ok {
			return problem{Type: "int_type", Loc: loc, Msg: "Input should be a valid integer", Input: v}, true
		}
		if _, err := n.Int64(); err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != math.Trunc(f) {
				return problem{Type: "int_from_float", Loc: loc, Msg: "Input should be a valid integer, got a number with a fractional part", Input: v}, true
			}
		}
	}
	return problem{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func unprocessable(p ...problem) *httpError {
	return &httpError{status: http.StatusUnprocessableEntity, detail: p}
}
