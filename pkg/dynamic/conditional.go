package dynamic

import (
	"fmt"

	"connector/pkg/manifest"
	"connector/pkg/template"
	"connector/pkg/transform"
)

// ConditionError is a ConditionalStreams whose condition cannot be evaluated with the testing
// values, or whose streams, once chosen, share a name with another chosen stream.
type ConditionError struct {
	File string
	Pos  manifest.Pos
	Err  error
}

func (e *ConditionError) Error() string {
	return fmt.Sprintf("%s:%d:%d: ConditionalStreams: %v", e.File, e.Pos.Line, e.Pos.Column, e.Err)
}

func (e *ConditionError) Unwrap() error { return e.Err }

// Choose returns the definition a run with the testing values config sees: the streams of
// each ConditionalStreams whose condition holds stand where it is written, among the other
// streams, and the others are left out (their names in LeftOut), as the CDK's
// _stream_configs builds the stream list each time it needs one. The condition sees
// `config` and an empty `parameters` (the CDK passes none), and is true unless it renders to
// one of the CDK's false values (transform.Truth). config is the values after their
// normalization, as the CDK's is (g.Config). A definition without ConditionalStreams is returned as is.
func Choose(def *manifest.Definition, g template.Globals) (*manifest.Definition, error) {
	if len(def.Conditional) == 0 {
		return def, nil
	}
	vars := g.Vars(nil)
	chosen := make([]*manifest.Stream, 0, len(def.Streams))
	by := map[string]*manifest.ConditionalStreams{} // the chosen streams' names, and whose they are
	for _, s := range def.Streams {
		by[s.Name] = nil
	}
	leftOut := map[string]manifest.Pos{}
	next := 0
	for _, cs := range def.Conditional {
		chosen = append(chosen, def.Streams[next:cs.At]...)
		next = cs.At
		holds, err := transform.Truth(cs.Condition, vars)
		if err != nil {
			return nil, &ConditionError{File: def.File, Pos: cs.Pos, Err: fmt.Errorf("condition: %w", err)}
		}
		if !holds {
			for _, s := range cs.Streams {
				leftOut[s.Name] = cs.Pos
			}
			continue
		}
		for _, s := range cs.Streams {
			if other, used := by[s.Name]; used && other != nil {
				// Unconditional names are refused when the definition is loaded.
				return nil, &ConditionError{File: def.File, Pos: cs.Pos, Err: fmt.Errorf(
					"the stream name %q is used twice: the conditions of this ConditionalStreams and of the one at line %d:%d both hold for the testing values",
					s.Name, other.Pos.Line, other.Pos.Column)}
			}
			by[s.Name] = cs
			chosen = append(chosen, s)
		}
	}
	chosen = append(chosen, def.Streams[next:]...)
	for name := range by {
		delete(leftOut, name)
	}
	view := *def
	view.Streams, view.Conditional, view.LeftOut = chosen, nil, leftOut
	return &view, nil
}
