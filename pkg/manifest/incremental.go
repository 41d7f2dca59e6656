package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Incremental cursor types, as written in definitions.
const (
	DatetimeCursor = "DatetimeBasedCursor"
	CountCursor    = "IncrementingCountCursor"
)

// Incremental is a stream's incremental_sync: a DatetimeBasedCursor or an
// IncrementingCountCursor. Its templates see config and parameters.
type Incremental struct {
	Type string
	Pos  Pos
	// CursorField names the record field the cursor follows.
	CursorField *template.Template
	// DatetimeBasedCursor.
	DatetimeFormat        string
	CursorDatetimeFormats []string
	Start, End            *DatetimeValue // End nil: now
	// Step, LookbackWindow: ISO 8601 durations, as templates; CursorGranularity as written.
	Step, LookbackWindow                   *template.Template
	CursorGranularity                      string
	StartTimeOption, EndTimeOption         *RequestOption
	PartitionFieldStart, PartitionFieldEnd *template.Template
	IsDataFeed, IsClientSideIncremental    bool
	IsCompareStrictly, GlobalSubstream     bool
	// AllowCatalogCursor is allow_catalog_defined_cursor_field: the catalog may pick the
	// cursor field (discover then says the cursor is not source defined).
	AllowCatalogCursor bool
	// IncrementingCountCursor.
	StartValue       *template.Template
	StartValueOption *RequestOption
	Parameters       map[string]any
}

// DatetimeValue is a start or end datetime: a template, with MinMaxDatetime's bounds.
type DatetimeValue struct {
	Datetime *template.Template
	// Format reads the rendered text ("" : the cursor's datetime_format).
	Format   string
	Min, Max *template.Template
}

// Delegating is a StateDelegatingStream: one stream without state, another with it.
type Delegating struct {
	FullRefresh, Incremental *Stream
	// APIRetentionPeriod as written ("" when absent).
	APIRetentionPeriod string
}

var incrementalVars = []string{"config", "parameters"}

// incremental reads DeclarativeStream.incremental_sync.
func (l *loader) incremental(n *yaml.Node, path string, parent *params, uses *[]optionUse) (*Incremental, bool) {
	c, ok := l.component(n, path, parent, "")
	if !ok {
		return nil, false
	}
	inc := &Incremental{Type: c.typ, Pos: pos(n), Parameters: c.params.values()}
	switch c.typ {
	case DatetimeCursor:
		c.checkFields(DatetimeCursor)
		if c.require("cursor_field") != nil {
			l.stringTemplate(c, "cursor_field", incrementalVars, &inc.CursorField)
		}
		if c.require("datetime_format") != nil {
			inc.DatetimeFormat = l.plainString(c, "datetime_format", "")
		}
		inc.CursorDatetimeFormats, _ = l.stringList(c, "cursor_datetime_formats")
		if sn := c.require("start_datetime"); sn != nil {
			inc.Start = l.datetimeValue(sn, c.fieldPath("start_datetime"), c.params)
		}
		if en := c.get("end_datetime"); en != nil {
			inc.End = l.datetimeValue(en, c.fieldPath("end_datetime"), c.params)
		}
		l.stringTemplate(c, "step", incrementalVars, &inc.Step)
		l.stringTemplate(c, "lookback_window", incrementalVars, &inc.LookbackWindow)
		inc.CursorGranularity = l.plainString(c, "cursor_granularity", "")
		if (c.get("step") == nil) != (inc.CursorGranularity == "") {
			l.at(n, path, diag.CodeMissingField, "DatetimeBasedCursor needs both `step` and `cursor_granularity`, or neither",
				"write e.g. step: P1D and cursor_granularity: PT1S")
			ok = false
		}
		if on := c.get("start_time_option"); on != nil {
			inc.StartTimeOption = l.requestOption(on, c.fieldPath("start_time_option"), c.params, false, nil, "the incremental_sync's start_time_option", uses)
		}
		if on := c.get("end_time_option"); on != nil {
			inc.EndTimeOption = l.requestOption(on, c.fieldPath("end_time_option"), c.params, false, nil, "the incremental_sync's end_time_option", uses)
		}
		l.stringTemplate(c, "partition_field_start", incrementalVars, &inc.PartitionFieldStart)
		l.stringTemplate(c, "partition_field_end", incrementalVars, &inc.PartitionFieldEnd)
		inc.IsDataFeed, _ = l.boolField(c, "is_data_feed")
		inc.IsClientSideIncremental, _ = l.boolField(c, "is_client_side_incremental")
		inc.IsCompareStrictly, _ = l.boolField(c, "is_compare_strictly")
		inc.GlobalSubstream, _ = l.boolField(c, "global_substream_cursor")
		inc.AllowCatalogCursor, _ = l.boolField(c, "allow_catalog_defined_cursor_field")
		if cl := c.get("clamping"); cl != nil {
			// The CDK's DAY clamping skips every other day and its WEEK and MONTH clamping
			// never move the state (no real definition we know uses it): refused, not copied.
			l.unsupported(cl, c.fieldPath("clamping"), "DatetimeBasedCursor clamping", "incremental_sync")
			ok = false
		}
	case CountCursor:
		c.checkFields(CountCursor)
		if c.require("cursor_field") != nil {
			l.stringTemplate(c, "cursor_field", incrementalVars, &inc.CursorField)
		}
		if v := c.get("start_value"); v != nil {
			if v.Kind != yaml.ScalarNode {
				l.at(v, c.fieldPath("start_value"), diag.CodeType, fmt.Sprintf("`start_value` must be a number or a template, not %s", kindName(v)), "")
			} else {
				l.tmpl(v, c.fieldPath("start_value"), "start_value", incrementalVars, &inc.StartValue)
			}
		}
		if on := c.get("start_value_option"); on != nil {
			inc.StartValueOption = l.requestOption(on, c.fieldPath("start_value_option"), c.params, false, nil, "the incremental_sync's start_value_option", uses)
		}
		l.boolField(c, "allow_catalog_defined_cursor_field")
	default:
		l.unsupported(n, path, c.typ, "incremental_sync")
		return nil, false
	}
	return inc, ok
}

// datetimeValue reads a start or end datetime: a string template, or a MinMaxDatetime.
func (l *loader) datetimeValue(n *yaml.Node, path string, parent *params) *DatetimeValue {
	d := &DatetimeValue{}
	if n.Kind == yaml.ScalarNode {
		l.tmpl(n, path, lastSeg(path), incrementalVars, &d.Datetime)
		return d
	}
	c, ok := l.component(n, path, parent, "MinMaxDatetime")
	if !ok {
		return nil
	}
	if c.typ != "MinMaxDatetime" {
		l.unsupported(n, path, c.typ, lastSeg(path))
		return nil
	}
	c.checkFields("MinMaxDatetime")
	if c.require("datetime") != nil {
		l.stringTemplate(c, "datetime", incrementalVars, &d.Datetime)
	}
	d.Format = l.plainString(c, "datetime_format", "")
	l.stringTemplate(c, "min_datetime", incrementalVars, &d.Min)
	l.stringTemplate(c, "max_datetime", incrementalVars, &d.Max)
	return d
}
