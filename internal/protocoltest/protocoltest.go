// Package protocoltest checks, in tests, that what `connector` writes in the Airbyte
// protocol is what the protocol allows: every line of stdout one AirbyteMessage valid under
// the protocol's own JSON schema. That schema (testdata/airbyte_protocol.schema.json) is
// generated from the protocol's YAML definition (testdata/airbyte-protocol), never written
// by hand; testdata/airbyte_message.schema.json adds only that a message carries the field
// its type names. The validator is github.com/santhosh-tekuri/jsonschema/v6, which only
// tests import.
package protocoltest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var (
	//go:embed testdata/airbyte_protocol.schema.json
	protocolSchema []byte
	//go:embed testdata/airbyte_message.schema.json
	messageSchema []byte
)

// base is where the compiler finds the two schema files: a host nothing loads from, so a
// reference to any other file fails instead of reaching the network.
const base = "https://protocoltest.invalid/"

// messageSchemaOf compiles the message schema once per test binary.
var messageSchemaOf = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(refuse{})
	for name, src := range map[string][]byte{"airbyte_protocol.schema.json": protocolSchema, "airbyte_message.schema.json": messageSchema} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := c.AddResource(base+name, doc); err != nil {
			return nil, err
		}
	}
	return c.Compile(base + "airbyte_message.schema.json")
})

// refuse is a loader that loads nothing.
type refuse struct{}

func (refuse) Load(url string) (any, error) {
	return nil, fmt.Errorf("protocoltest loads no schema from %s", url)
}

// Check fails tb, without stopping it, when out is not a valid stream of Airbyte messages
// (see Validate), with every problem and the output.
func Check(tb testing.TB, out string) {
	tb.Helper()
	if err := Validate(out); err != nil {
		tb.Errorf("stdout is not the Airbyte protocol:\n%v\n--- stdout ---\n%s", err, out)
	}
}

// Validate checks out, what a run wrote on stdout in the Airbyte protocol: lines each ended
// by a newline, each one JSON object that is a valid AirbyteMessage, and the stream statuses
// in the order the protocol gives them (see sequence). Nothing (a run that wrote no message)
// is valid. The error names every line that is not, by number, with each reason: for the
// schema, the place in the message, what is wrong there, and the schema's keyword.
func Validate(out string) error {
	sch, err := messageSchemaOf()
	if err != nil {
		return fmt.Errorf("the protocol schema does not compile: %w", err)
	}
	if out == "" {
		return nil
	}
	var problems []string
	if !strings.HasSuffix(out, "\n") {
		problems = append(problems, "the last line has no newline")
	}
	var seq sequence
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		err := validateLine(sch, line)
		if err == nil {
			err = seq.next(line)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("line %d: %v", i+1, err))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func validateLine(sch *jsonschema.Schema, line string) error {
	if t := strings.TrimSpace(line); t == "" || t[0] != '{' {
		return fmt.Errorf("not a JSON object: %q", line)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(line)) // numbers as json.Number, exact
	if err != nil {
		return fmt.Errorf("not one JSON value: %v", err)
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(strings.Join(reasons(ve), "; "))
	}
	return err
}

var printer = message.NewPrinter(language.English)

// reasons are the leaves of a validation error, each as "at /trace/emitted_at: got string,
// want number (airbyte_protocol.schema.json#/definitions/AirbyteTraceMessage/properties/emitted_at/type)":
// where in the message, what is wrong, and the keyword that says so.
func reasons(e *jsonschema.ValidationError) []string {
	if len(e.Causes) > 0 {
		var out []string
		for _, c := range e.Causes {
			out = append(out, reasons(c)...)
		}
		return out
	}
	file, keyword, _ := strings.Cut(e.SchemaURL, "#")
	if name, ok := strings.CutPrefix(file, base); ok {
		keyword = name + "#" + keyword
	} else { // the protocol's schema goes by its $id
		keyword = "airbyte_protocol.schema.json#" + keyword
	}
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		keyword = strings.TrimSuffix(keyword, "/") + "/" + strings.Join(kp, "/")
	}
	return []string{fmt.Sprintf("at /%s: %s (%s)", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(printer), keyword)}
}

// sequence follows the stream statuses of a read, which the schema cannot see across lines:
// the protocol's stream status lifecycle, as the CDK writes it. A stream starts (STARTED)
// once, runs (RUNNING) once after it started and before its first RECORD, and ends once:
// COMPLETE after it started, or INCOMPLETE (also for a stream of the catalog that never
// started). No RECORD of a stream comes before it runs or after it ends.
type sequence struct {
	status map[string]string // the last status of each stream
	// limited says the last status of a stream was RUNNING for RATE_LIMITED.
	limited map[string]bool
}

func (s *sequence) next(line string) error {
	var m struct {
		Type   string
		Record struct {
			Stream, Namespace string
		}
		Trace struct {
			Type         string
			StreamStatus struct {
				StreamDescriptor struct{ Name, Namespace string } `json:"stream_descriptor"`
				Status           string
				Reasons          []struct{ Type string }
			} `json:"stream_status"`
		}
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return err
	}
	if s.status == nil {
		s.status = map[string]string{}
	}
	switch {
	case m.Type == "RECORD":
		name := streamName(m.Record.Stream, m.Record.Namespace)
		switch st := s.status[name]; st {
		case "RUNNING":
			return nil
		case "":
			return fmt.Errorf("a RECORD of stream %s, which has no RUNNING status before it", name)
		default:
			return fmt.Errorf("a RECORD of stream %s after its %s status, not RUNNING", name, st)
		}
	case m.Type == "TRACE" && m.Trace.Type == "STREAM_STATUS":
		d := m.Trace.StreamStatus.StreamDescriptor
		name, to := streamName(d.Name, d.Namespace), m.Trace.StreamStatus.Status
		from := s.status[name]
		// A RUNNING status with the reason RATE_LIMITED reports a wait, as the CDK's
		// HttpClient does at every rate-limited retry: RUNNING may come again around it.
		limited := len(m.Trace.StreamStatus.Reasons) == 1 && m.Trace.StreamStatus.Reasons[0].Type == "RATE_LIMITED"
		if s.limited == nil {
			s.limited = map[string]bool{}
		}
		if to == "RUNNING" && from == "RUNNING" && (limited || s.limited[name]) {
			s.limited[name] = limited
			return nil
		}
		s.limited[name] = to == "RUNNING" && limited
		allowed := map[string][]string{
			"STARTED":    {""},
			"RUNNING":    {"STARTED"},
			"COMPLETE":   {"STARTED", "RUNNING"},
			"INCOMPLETE": {"", "STARTED", "RUNNING"},
		}[to]
		s.status[name] = to // reported once, not again at each record after it
		for _, a := range allowed {
			if from == a {
				return nil
			}
		}
		if from == "" {
			return fmt.Errorf("stream %s is %s without a STARTED status before", name, to)
		}
		return fmt.Errorf("stream %s is %s after %s", name, to, from)
	}
	return nil
}

// streamName is a stream's name, with its namespace when it has one.
func streamName(name, namespace string) string {
	if namespace != "" {
		return fmt.Sprintf("%q (namespace %q)", name, namespace)
	}
	return fmt.Sprintf("%q", name)
}
