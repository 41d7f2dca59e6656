package cmd

import (
	"context"
	"errors"
	"fmt"

	"connector/pkg/builder"
	"connector/pkg/session"
)

// builderRun is paginate-trace --format builder: the Connector Builder's test read of the
// stream --stream names, printed as its StreamRead JSON (indented by two spaces). The
// limits are the Builder's, each flag that is set replacing its own. A read that failed
// still prints its StreamRead, whose logs say why; the failures are also said on stderr,
// and the exit code is 1.
func builderRun(ctx context.Context, opts *traceOptions, p *prepared, states *session.State) error {
	if err := p.Resolve(ctx, nil); err != nil {
		return sessionError(opts.io, err)
	}
	lim := builder.DefaultLimits()
	for _, f := range []struct{ flag, limit *int }{
		{&opts.flags.maxRecords, &lim.Records},
		{&opts.flags.maxPages, &lim.PagesPerSlice},
		{&opts.flags.maxSlices, &lim.Slices},
	} {
		if *f.flag > 0 {
			*f.limit = *f.flag
		}
	}
	sr, err := builder.TestRead(ctx, p.Session, opts.flags.streams[0], builder.Options{Limits: lim, StateOf: states.Of})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return sessionError(opts.io, err)
	}
	text, err := sr.Indented()
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(opts.io.Out, "%s\n", text); err != nil {
		return err
	}
	failed := false
	for _, l := range sr.Logs {
		if l.Level == "ERROR" {
			opts.io.printError(errors.New(l.Message))
			failed = true
		}
	}
	if failed {
		return &silentError{code: exitFailure}
	}
	return nil
}
