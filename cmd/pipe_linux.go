package cmd

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity asked for a pipe on stdout. Linux gives a pipe 64 KiB; a read
// writes tens of megabytes, and with 1 MiB the reader (jq, a CI script) and the writer
// wake each other sixteen times less often. Unprivileged processes may ask up to
// /proc/sys/fs/pipe-max-size (1 MiB by default).
const pipeSize = 1 << 20

// widenPipe grows the pipe w writes into, when w is one; it is only a speed-up, so a
// refusal is ignored.
func widenPipe(w io.Writer) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if n, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0); err == nil && n < pipeSize {
		unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	}
}
