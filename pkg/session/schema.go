package session

import (
	"sync"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/run"
	"connector/pkg/schemacheck"
)

// SchemaChecks checks the records of a run's streams against what their definition
// declares (--check-schema): the declared schema, the primary key, a stream without
// records. It is a run.Emitter (records are checked, not written) and can wrap a read's output
// (records are checked, then written). Safe for concurrent
// use.
type SchemaChecks struct {
	mu      sync.Mutex
	streams map[string]*manifest.Stream
	by      map[string]*schemacheck.Checker
	errs    map[string]error
	buf     []byte
}

// NewSchemaChecks checks the records of streams.
func NewSchemaChecks(streams []*manifest.Stream) *SchemaChecks {
	c := &SchemaChecks{streams: map[string]*manifest.Stream{}, by: map[string]*schemacheck.Checker{}, errs: map[string]error{}}
	for _, s := range streams {
		c.streams[s.Name] = s
	}
	return c
}

// checker is the checker of a stream, made at its first use; the caller holds c.mu.
func (c *SchemaChecks) checker(stream string) *schemacheck.Checker {
	if ch, ok := c.by[stream]; ok {
		return ch
	}
	var declared any
	var pk [][]string
	if s := c.streams[stream]; s != nil {
		declared, pk = s.Schema, s.PrimaryKeyPaths()
	}
	ch, err := schemacheck.New(declared, pk)
	if err != nil {
		c.errs[stream] = err
	}
	c.by[stream] = ch
	return ch
}

// Records checks records of stream, in order.
func (c *SchemaChecks) Records(stream string, recs []record.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.checker(stream)
	for _, r := range recs {
		var err error
		if c.buf, err = r.AppendJSON(c.buf[:0]); err != nil {
			return err
		}
		if err := ch.AddJSON(c.buf); err != nil {
			return err
		}
	}
	return nil
}

// EndPage does nothing: the checks keep no page.
func (c *SchemaChecks) EndPage() error { return nil }

// Report ends the checks of stream: what they found, and why the declared schema could not
// be used when it could not.
func (c *SchemaChecks) Report(stream string) (schemacheck.Report, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rep := c.checker(stream).Finish()
	return rep, c.errs[stream]
}

// Wrap is out with every record checked as it is written into out's parts. Records are
// numbered in the order they were read: with slices read at once (Workers above 1), that
// can differ from the order of the output.
func (c *SchemaChecks) Wrap(out run.Output) run.Output {
	return checkedOutput{out: out, checks: c}
}

type checkedOutput struct {
	out    run.Output
	checks *SchemaChecks
}

func (o checkedOutput) Part() run.Part { return checkedPart{Part: o.out.Part(), checks: o.checks} }

type checkedPart struct {
	run.Part
	checks *SchemaChecks
}

func (p checkedPart) Records(stream string, recs []record.Record) error {
	if err := p.checks.Records(stream, recs); err != nil {
		return err
	}
	return p.Part.Records(stream, recs)
}
