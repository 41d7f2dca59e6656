package cmd

import (
	"fmt"

	"connector/pkg/manifest"
)

// checkDynamic picks the streams a CheckDynamicStream checks: the first stream_count of the
// source (static streams first). No stream at all fails the check; use_check_availability
// false passes it without a request (nil streams, nil error).
func checkDynamic(s *ioStreams, cd *manifest.CheckDynamic, streams []*manifest.Stream) ([]*manifest.Stream, error) {
	if len(streams) == 0 {
		fmt.Fprintln(s.Out, "FAILED  no streams to connect to: the dynamic streams resolved to none")
		return nil, &silentError{code: exitFailure}
	}
	if !cd.UseCheckAvailability {
		fmt.Fprintf(s.Err, "check: use_check_availability is false: %s resolved, none requested\n", plural(len(streams), "stream"))
		return nil, nil
	}
	return streams[:min(cd.StreamCount, len(streams))], nil
}
