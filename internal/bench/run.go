package main

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// measure is what one child process did.
type measure struct {
	Wall    time.Duration
	RSS     int64 // peak resident set, bytes
	Lines   int
	Bytes   int64
	CPU     time.Duration // user + system time
	Sum     uint32        // CRC-32C of stdout
	ToFirst time.Duration // process start to the server's first request (0: none)
}

// counter counts the lines and bytes written to it and checksums them.
type counter struct {
	lines int
	bytes int64
	sum   uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (c *counter) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte{'\n'})
	c.bytes += int64(len(p))
	c.sum = crc32.Update(c.sum, castagnoli, p)
	return len(p), nil
}

// spawn runs a command with stdout read by a counter, and measures it. g, when not nil, is
// the server whose first request is timed.
func spawn(g *generator, name string, args ...string) (measure, error) {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return measure{}, err
	}
	if g != nil {
		g.reset()
	}
	c := &counter{}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measure{}, err
	}
	buf := make([]byte, 256<<10)
	if _, err := io.CopyBuffer(c, out, buf); err != nil {
		return measure{}, err
	}
	werr := cmd.Wait()
	wall := time.Since(start)
	m := measure{Wall: wall, Lines: c.lines, Bytes: c.bytes, Sum: c.sum}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.RSS = ru.Maxrss * 1024 // kilobytes on Linux
		m.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if g != nil && g.first.Load() != 0 {
		m.ToFirst = g.firstRequest().Sub(start)
	}
	if werr != nil {
		// The measure is kept: a caller may accept some exit statuses.
		return m, fmt.Errorf("%s %v: %w\n%s", name, args, werr, stderr.Bytes())
	}
	return m, nil
}

// baselineArgs are the arguments that make this program, run again, the raw-fetch baseline.
func baselineArgs(base, mode string, total, pageSize int) []string {
	return []string{"-fetch", base, "-mode", mode, "-records", strconv.Itoa(total), "-page-size", strconv.Itoa(pageSize)}
}

// fetch is the raw-fetch baseline: one plain Go HTTP client (connection reuse) requesting
// the same pages as connector would, bodies discarded.
func fetch(base, mode string, total, pageSize int) error {
	client := &http.Client{}
	buf := make([]byte, 64<<10)
	get := func(url string) error {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.CopyBuffer(io.Discard, res.Body, buf)
		res.Body.Close()
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", url, res.Status)
		}
		return err
	}
	if mode == "partitioned" {
		// The parent's pages, then one request per parent record, as connector reads the
		// child stream one slice at a time.
		for start := 0; start < parents; start += 100 {
			if err := get(fmt.Sprintf("%s/parents?limit=100&offset=%d", base, start)); err != nil {
				return err
			}
		}
		if err := get(fmt.Sprintf("%s/parents?limit=100&offset=%d", base, parents)); err != nil {
			return err
		}
		for id := 1; id <= parents; id++ {
			if err := get(fmt.Sprintf("%s/children?parent=%010d", base, id)); err != nil {
				return err
			}
		}
		return nil
	}
	for start := 0; ; start += pageSize {
		var url string
		switch mode {
		case "offset":
			url = fmt.Sprintf("%s/offset?offset=%d&limit=%d", base, start, pageSize)
		case "page":
			url = fmt.Sprintf("%s/page?page=%d&per_page=%d", base, start/pageSize+1, pageSize)
		case "cursor":
			url = fmt.Sprintf("%s/cursor?limit=%d", base, pageSize)
			if start > 0 {
				url += fmt.Sprintf("&cursor=c%d", start)
			}
		default:
			return fmt.Errorf("unknown mode %q", mode)
		}
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.CopyBuffer(io.Discard, res.Body, buf)
		res.Body.Close()
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, res.Status)
		}
		// A short (or empty) page ends an offset or page read; a cursor read ends on the
		// page without a next cursor. connector makes the same requests.
		if start+pageSize > total || mode == "cursor" && start+pageSize >= total {
			return nil
		}
	}
}
