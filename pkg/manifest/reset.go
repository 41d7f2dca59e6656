package manifest

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// The actions of a PaginationReset.
const (
	// ResetRestart starts the slice's pagination again from the first page, unchanged.
	ResetRestart = "RESET"
	// ResetSplit starts it again from the newest cursor value the slice's records had.
	ResetSplit = "SPLIT_USING_CURSOR"
)

// PaginationReset is a SimpleRetriever's pagination_reset: what a slice does when its
// pagination must start again (an error handler's RESET_PAGINATION, or Records records
// read since the slice last started).
type PaginationReset struct {
	Pos    Pos
	Action string // ResetRestart or ResetSplit
	// Records is limits.number_of_records (0: no limit).
	Records int
}

// paginationReset reads a PaginationReset; nil when it is broken.
func (l *loader) paginationReset(n *yaml.Node, path string, parent *params) *PaginationReset {
	c, ok := l.component(n, path, parent, "PaginationReset")
	if !ok {
		return nil
	}
	if c.typ != "PaginationReset" {
		l.unsupported(n, path, c.typ, "pagination_reset")
		return nil
	}
	c.checkFields("PaginationReset")
	pr := &PaginationReset{Pos: pos(n)}
	good := true
	actions := []string{ResetSplit, ResetRestart}
	if a := c.require("action"); a != nil {
		if a.Kind != yaml.ScalarNode || !slices.Contains(actions, a.Value) {
			hint := ""
			if s := suggest(strings.ToUpper(a.Value), actions); s != "" && a.Kind == yaml.ScalarNode {
				hint = fmt.Sprintf("did you mean `%s`?", s)
			}
			l.at(a, c.fieldPath("action"), diag.CodeType, fmt.Sprintf("`action` must be one of %s, not %s", strings.Join(actions, ", "), describe(a)), hint)
			good = false
		} else {
			pr.Action = a.Value
		}
	} else {
		good = false
	}
	if v := c.get("limits"); !isEmpty(v) {
		lc, ok := l.component(v, c.fieldPath("limits"), c.params, "PaginationResetLimits")
		switch {
		case !ok:
			good = false
		case lc.typ != "PaginationResetLimits":
			l.unsupported(v, lc.path, lc.typ, "limits")
			good = false
		default:
			lc.checkFields("PaginationResetLimits")
			if nr := lc.get("number_of_records"); nr != nil {
				if pr.Records = l.positiveInt(nr, lc.fieldPath("number_of_records")); pr.Records == 0 {
					good = false
				}
			}
		}
	}
	if !good {
		return nil
	}
	return pr
}
