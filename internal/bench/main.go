// Command bench measures connector against a local generator API and a raw-fetch baseline
// (a plain Go HTTP client requesting the same pages), and prints one table: wall time,
// records/s and peak RSS of `connector read` for offset, page and cursor pagination, page
// prefetch against a slow server, partitions and a stream sliced by day (concurrency, and the
// cost of writing the state file), the time from process start to the first request, and
// `validate` of a large real definition. Every figure is also given as a ratio to the
// baseline, and each row says whether its target holds.
//
//	go build -o connector . && go run ./internal/bench -bin ./connector
//
// Run again with -fetch, it is the baseline itself (see fetch).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	var (
		bin      = flag.String("bin", "./connector", "the connector `binary` to measure")
		stripe   = flag.String("validate", "../shared/corpus/airbyte-manifests/stripe.yaml", "the large `definition` timed with validate")
		pageSize = flag.Int("page-size", 1000, "records per page")
		records  = flag.Int("records", 100_000, "records of the main cases")
		big      = flag.Int("big", 1_000_000, "records of the large case (0: skip)")
		repeat   = flag.Int("repeat", 7, "runs of each 100k case (the median is reported)")
		fetchURL = flag.String("fetch", "", "be the raw-fetch baseline against this base `URL`")
		mode     = flag.String("mode", "offset", "pagination of the baseline: offset, page or cursor")
	)
	serve := flag.Bool("serve", false, "only serve -records records and write the definitions, for profiling by hand")
	flag.Parse()
	if *serve {
		err := serveOnly(*records, *pageSize) // returns only on a failure to start
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	if *fetchURL != "" {
		if err := fetch(*fetchURL, *mode, *records, *pageSize); err != nil {
			fmt.Fprintln(os.Stderr, "fetch:", err)
			os.Exit(1)
		}
		return
	}
	b := &bench{bin: *bin, pageSize: *pageSize, repeat: max(*repeat, 1)}
	if err := b.run(*records, *big, *stripe); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// serveOnly runs the generator until interrupted and says how to read from it.
func serveOnly(records, pageSize int) error {
	g, err := newGenerator(records, pageSize, 0)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "connector-bench-")
	if err != nil {
		return err
	}
	defs, vals, err := files(dir, g.addr, pageSize)
	if err != nil {
		return err
	}
	fmt.Printf("serving %d records at %s\n", records, g.addr)
	for _, mode := range []string{"offset", "page", "cursor"} {
		fmt.Printf("  connector read %s --testing-values %s\n", defs[mode], vals)
	}
	select {}
}

type bench struct {
	bin      string
	self     string
	dir      string
	pageSize int
	repeat   int
	rows     []row
	notes    []string
}

// row is one line of the table: connector and, where there is one, the baseline.
type row struct {
	name     string
	records  int
	conn     measure
	base     measure
	hasBase  bool
	target   string
	ok       bool
	hasCheck bool
	// show says which figure the row is about: "wall" (default), "first" (start to first
	// request).
	show string
}

func (b *bench) run(records, big int, stripe string) error {
	start := time.Now()
	if _, err := os.Stat(b.bin); err != nil {
		return fmt.Errorf("%w (build it first: go build -o connector .)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b.self = self
	dir, err := os.MkdirTemp("", "connector-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b.dir = dir

	g, err := newGenerator(records, b.pageSize, 0)
	if err != nil {
		return err
	}
	defer g.close()
	defs, vals, err := files(dir, g.addr, b.pageSize)
	if err != nil {
		return err
	}
	label := count(records)
	for _, mode := range []string{"offset", "page", "cursor"} {
		r, err := b.read(g, defs[mode], vals, mode, records, b.repeat)
		if err != nil {
			return err
		}
		r.name = "read " + mode + ", " + label
		if mode == "offset" {
			r.target = "wall ≤ 2.0× base, RSS ≤ 30 MB"
			r.hasCheck = true
			r.ok = ratio(r.conn.Wall, r.base.Wall) <= 2.0 && r.conn.RSS <= 30<<20
		}
		b.rows = append(b.rows, r)
	}
	small := b.rows[0].conn.RSS
	tr, err := b.read(g, defs["transformed"], vals, "offset", records, b.repeat)
	if err != nil {
		return err
	}
	tr.name = "read offset + 2 AddFields + RemoveFields, " + label
	tr.target = "wall ≤ 4.0× base"
	tr.hasCheck = true
	tr.ok = ratio(tr.conn.Wall, tr.base.Wall) <= 4.0
	b.rows = append(b.rows, tr)

	if big > 0 {
		gb, err := newGenerator(big, b.pageSize, 0)
		if err != nil {
			return err
		}
		_, bvals, err := files(dir, gb.addr, b.pageSize)
		if err != nil {
			return err
		}
		defer gb.close()
		r, err := b.read(gb, defs["offset"], bvals, "offset", big, 1)
		if err != nil {
			return err
		}
		r.name = "read offset, " + count(big)
		r.target = fmt.Sprintf("RSS ≤ 30 MB, ≈ %s run (%s)", label, mib(small))
		r.hasCheck = true
		r.ok = r.conn.RSS <= 30<<20 && float64(r.conn.RSS) <= 1.25*float64(small)
		b.rows = append(b.rows, r)
		rt, err := b.read(gb, defs["transformed"], bvals, "offset", big, 1)
		if err != nil {
			return err
		}
		rt.name = "read offset + transformations, " + count(big)
		rt.target = fmt.Sprintf("RSS ≈ %s run (%s)", label, mib(tr.conn.RSS))
		rt.hasCheck = true
		rt.ok = float64(rt.conn.RSS) <= 1.25*float64(tr.conn.RSS)
		b.rows = append(b.rows, rt)
	}

	if err := b.prefetch(dir); err != nil {
		return err
	}
	if err := b.partitions(dir); err != nil {
		return err
	}
	if err := b.incremental(dir); err != nil {
		return err
	}
	if err := b.airbyte(g, defs["offset"], records); err != nil {
		return err
	}
	if err := b.recording(dir, g, defs["offset"], vals, records); err != nil {
		return err
	}
	if err := b.firstRequest(g, defs["offset"], vals); err != nil {
		return err
	}
	if err := b.validate(stripe); err != nil {
		return err
	}
	b.print(time.Since(start))
	return nil
}

// read measures connector and the baseline on the same pages, each `runs` times, and keeps
// the median wall time (and the largest RSS).
func (b *bench) read(g *generator, def, vals, mode string, total, runs int) (row, error) {
	var conns, bases []measure
	for range runs {
		m, err := spawn(g, b.self, baselineArgs(g.addr, mode, total, b.pageSize)...)
		if err != nil {
			return row{}, err
		}
		bases = append(bases, m)
		m, err = spawn(g, b.bin, "read", def, "--testing-values", vals)
		if err != nil {
			return row{}, err
		}
		if m.Lines != total {
			return row{}, fmt.Errorf("read %s: %d records, want %d", mode, m.Lines, total)
		}
		conns = append(conns, m)
	}
	return row{records: total, conn: median(conns), base: median(bases), hasBase: true}, nil
}

// prefetch compares sequential reading with --prefetch 8 against a server that takes 20 ms
// per request, 100 pages.
func (b *bench) prefetch(dir string) error {
	const pages, delay, ahead = 100, 20 * time.Millisecond, 8
	total := pages*b.pageSize - b.pageSize/2
	g, err := newGenerator(total, b.pageSize, delay)
	if err != nil {
		return err
	}
	defer g.close()
	defs, vals, err := files(dir, g.addr, b.pageSize)
	if err != nil {
		return err
	}
	base, err := spawn(g, b.self, baselineArgs(g.addr, "offset", total, b.pageSize)...)
	if err != nil {
		return err
	}
	seq, err := spawn(g, b.bin, "read", defs["offset"], "--testing-values", vals)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("read offset, %d pages, +%s/request", pages, delay)
	b.rows = append(b.rows, row{name: name + ", sequential", records: total, conn: seq, base: base, hasBase: true})
	par, err := spawn(g, b.bin, "read", defs["offset"], "--testing-values", vals, "--prefetch", strconv.Itoa(ahead))
	if err != nil {
		b.notes = append(b.notes, "--prefetch: "+firstLine(err))
		return nil
	}
	speedup := ratio(seq.Wall, par.Wall)
	same := par.Sum == seq.Sum && par.Lines == seq.Lines
	b.rows = append(b.rows, row{
		name: fmt.Sprintf("%s, --prefetch %d", name, ahead), records: total, conn: par, base: base, hasBase: true,
		target:   fmt.Sprintf("≥ 5× faster than sequential: %.1f×, output identical: %s", speedup, yes(same)),
		hasCheck: true, ok: speedup >= 5 && same,
	})
	return nil
}

// partitions reads a child stream of 1,000 partitions (a parent of 10 pages, one child page
// per parent record): with no latency against the raw-fetch baseline of the same requests,
// and with 20 ms per request one slice at a time against 16 at once.
func (b *bench) partitions(dir string) error {
	const delay, workers = 20 * time.Millisecond, 16
	total := parents * perParent
	g, err := newGenerator(total, b.pageSize, 0)
	if err != nil {
		return err
	}
	defs, vals, err := files(dir, g.addr, b.pageSize)
	if err != nil {
		g.close()
		return err
	}
	args := []string{"read", defs["partitioned"], "--testing-values", vals, "--stream", "children"}
	var conns, bases []measure
	for range 3 {
		m, err := spawn(g, b.self, baselineArgs(g.addr, "partitioned", 0, b.pageSize)...)
		if err != nil {
			g.close()
			return err
		}
		bases = append(bases, m)
		if m, err = spawn(g, b.bin, append(args, "--concurrency", "1")...); err != nil {
			g.close()
			return err
		}
		if m.Lines != total {
			g.close()
			return fmt.Errorf("partitioned read: %d records, want %d", m.Lines, total)
		}
		conns = append(conns, m)
	}
	g.close()
	c, base := median(conns), median(bases)
	b.rows = append(b.rows, row{name: fmt.Sprintf("read %d partitions, 1 slice at a time", parents), records: total,
		conn: c, base: base, hasBase: true, target: "wall ≤ 3× base", hasCheck: true, ok: ratio(c.Wall, base.Wall) <= 3})

	slow, err := newGenerator(total, b.pageSize, delay)
	if err != nil {
		return err
	}
	defer slow.close()
	defs, vals, err = files(dir, slow.addr, b.pageSize)
	if err != nil {
		return err
	}
	args = []string{"read", defs["partitioned"], "--testing-values", vals, "--stream", "children"}
	seq, err := spawn(slow, b.bin, append(args, "--concurrency", "1")...)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("read %d partitions, +%s/request", parents, delay)
	b.rows = append(b.rows, row{name: name + ", --concurrency 1", records: total, conn: seq})
	par, err := spawn(slow, b.bin, append(args, "--concurrency", strconv.Itoa(workers))...)
	if err != nil {
		return err
	}
	speedup := ratio(seq.Wall, par.Wall)
	same := par.Sum == seq.Sum && par.Lines == seq.Lines
	b.rows = append(b.rows, row{
		name: fmt.Sprintf("%s, --concurrency %d", name, workers), records: total, conn: par,
		target:   fmt.Sprintf("≥ 10× faster than 1 at a time: %.1f×, output identical: %s, RSS ≤ 40 MB", speedup, yes(same)),
		hasCheck: true, ok: speedup >= 10 && same && par.RSS <= 40<<20,
	})
	return nil
}

// incremental reads a stream sliced by day over 365 days (one request per slice) from a
// server that takes 20 ms per request: 8 slices at once against one at a time (same stdout,
// same final state file), and the cost of writing the state file after every slice (--state)
// at both concurrencies. The runs with and without --state alternate; the medians of
// b.repeat runs (at most 3) at concurrency 8 and of one run at concurrency 1 are compared.
func (b *bench) incremental(dir string) error {
	const delay, workers = 20 * time.Millisecond, 8
	g, err := newGenerator(days*perDay, b.pageSize, delay)
	if err != nil {
		return err
	}
	defer g.close()
	defs, vals, err := files(dir, g.addr, b.pageSize)
	if err != nil {
		return err
	}
	statePath := filepath.Join(dir, "daily-state.json")
	// read runs one read and returns the final state file ("" without --state).
	read := func(concurrency int, withState bool) (measure, string, error) {
		args := []string{"read", defs["daily"], "--testing-values", vals, "--concurrency", strconv.Itoa(concurrency)}
		if withState {
			if err := os.Remove(statePath); err != nil && !errors.Is(err, os.ErrNotExist) {
				return measure{}, "", err
			}
			args = append(args, "--state", statePath)
		}
		m, err := spawn(g, b.bin, args...)
		if err != nil {
			return m, "", err
		}
		if m.Lines != days*perDay {
			return m, "", fmt.Errorf("daily read: %d records, want %d", m.Lines, days*perDay)
		}
		if !withState {
			return m, "", nil
		}
		state, err := os.ReadFile(statePath)
		return m, string(state), err
	}
	type pair struct {
		plain, state measure
		file         string
	}
	measurePair := func(concurrency, runs int) (pair, error) {
		var plains, states []measure
		var p pair
		for range runs {
			m, _, err := read(concurrency, false)
			if err != nil {
				return p, err
			}
			plains = append(plains, m)
			m, file, err := read(concurrency, true)
			if err != nil {
				return p, err
			}
			states = append(states, m)
			p.file = file
		}
		p.plain, p.state = median(plains), median(states)
		return p, nil
	}
	seq, err := measurePair(1, 1)
	if err != nil {
		return err
	}
	par, err := measurePair(workers, min(b.repeat, 3))
	if err != nil {
		return err
	}
	const wantState = `{"updated_at":"2023-12-31T21:36:00Z"}`
	name := fmt.Sprintf("read %d daily slices, +%s/request", days, delay)
	total := days * perDay
	cost := func(p pair) float64 { return ratio(p.state.Wall, p.plain.Wall) - 1 }
	speedup := ratio(seq.state.Wall, par.state.Wall)
	same := par.state.Sum == seq.state.Sum && par.state.Lines == seq.state.Lines && par.file == seq.file
	expected := strings.Contains(seq.file, wantState)
	b.rows = append(b.rows,
		row{name: name + ", --concurrency 1, no --state", records: total, conn: seq.plain},
		row{
			name: name + ", --concurrency 1, --state", records: total, conn: seq.state,
			target:   fmt.Sprintf("--state ≤ 5%% more wall: %+.1f%%, state %s: %s", 100*cost(seq), wantState, yes(expected)),
			hasCheck: true, ok: cost(seq) <= 0.05 && expected,
		},
		row{name: fmt.Sprintf("%s, --concurrency %d, no --state", name, workers), records: total, conn: par.plain},
		row{
			name: fmt.Sprintf("%s, --concurrency %d, --state", name, workers), records: total, conn: par.state,
			target: fmt.Sprintf("≥ 6× faster than 1 at a time: %.1f×, stdout and state file identical: %s, --state ≤ 5%% more wall: %+.1f%%",
				speedup, yes(same), 100*cost(par)),
			hasCheck: true, ok: speedup >= 6 && same && cost(par) <= 0.05,
		})
	return nil
}

// airbyte measures `connector airbyte read` (every record in a RECORD message) against the
// baseline, and the start-up of `airbyte spec`.
func (b *bench) airbyte(g *generator, def string, total int) error {
	config := filepath.Join(b.dir, "airbyte-config.json")
	catalog := filepath.Join(b.dir, "airbyte-catalog.json")
	if err := os.WriteFile(config, fmt.Appendf(nil, `{"base_url":%q,"api_token":%q}`, g.addr, token), 0o600); err != nil {
		return err
	}
	const cat = `{"streams":[{"stream":{"name":"items","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`
	if err := os.WriteFile(catalog, []byte(cat), 0o600); err != nil {
		return err
	}
	var conns, bases []measure
	for range b.repeat {
		m, err := spawn(g, b.self, baselineArgs(g.addr, "offset", total, b.pageSize)...)
		if err != nil {
			return err
		}
		bases = append(bases, m)
		m, err = spawn(g, b.bin, "airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", catalog)
		if err != nil {
			return err
		}
		// The records, and STARTED, RUNNING, COMPLETE, the closing STATE and LOG messages.
		if m.Lines < total+4 {
			return fmt.Errorf("airbyte read: %d lines, want %d records and their statuses", m.Lines, total)
		}
		conns = append(conns, m)
	}
	r := row{name: "airbyte read offset, " + count(total), records: total, conn: median(conns), base: median(bases), hasBase: true,
		target: "wall ≤ 3.0× base", hasCheck: true}
	r.ok = ratio(r.conn.Wall, r.base.Wall) <= 3.0
	b.rows = append(b.rows, r)

	var specs []measure
	for range 5 {
		m, err := spawn(nil, b.bin, "airbyte", "spec", "--manifest-path", def)
		if err != nil {
			return err
		}
		specs = append(specs, m)
	}
	m := median(specs)
	b.rows = append(b.rows, row{name: "airbyte spec, start to exit", conn: m, target: "≤ 20 ms", hasCheck: true, ok: m.Wall <= 20*time.Millisecond})
	return nil
}

// recording measures what --record costs a read: the 100k offset read of the generator
// (every byte masked, escaped and written: the worst case) and a read of 100 pages from a
// server that takes 20 ms per request, an API's pace. Runs with and without --record
// alternate; medians are compared.
func (b *bench) recording(dir string, g *generator, def, vals string, total int) error {
	har := filepath.Join(dir, "rec.har")
	pair := func(g *generator, def, vals string, total, runs int) (plain, rec measure, err error) {
		var plains, recs []measure
		for range runs {
			m, err := spawn(g, b.bin, "read", def, "--testing-values", vals)
			if err != nil {
				return plain, rec, err
			}
			plains = append(plains, m)
			if m, err = spawn(g, b.bin, "read", def, "--testing-values", vals, "--record", har); err != nil {
				return plain, rec, err
			}
			if m.Lines != total {
				return plain, rec, fmt.Errorf("read --record: %d records, want %d", m.Lines, total)
			}
			recs = append(recs, m)
		}
		return median(plains), median(recs), nil
	}
	plain, rec, err := pair(g, def, vals, total, b.repeat)
	if err != nil {
		return err
	}
	extra := func(rec, plain measure) float64 { return ratio(rec.Wall, plain.Wall) - 1 }
	b.rows = append(b.rows,
		row{name: "read offset, " + count(total) + ", no --record", records: total, conn: plain},
		row{name: "read offset, " + count(total) + ", --record (every byte masked and written)", records: total, conn: rec,
			target: fmt.Sprintf("informational: %+.0f%% wall", 100*extra(rec, plain))})

	const pages, delay = 100, 20 * time.Millisecond
	slowTotal := pages*b.pageSize - b.pageSize/2
	slow, err := newGenerator(slowTotal, b.pageSize, delay)
	if err != nil {
		return err
	}
	defer slow.close()
	defs, svals, err := files(dir, slow.addr, b.pageSize)
	if err != nil {
		return err
	}
	plain, rec, err = pair(slow, defs["offset"], svals, slowTotal, min(b.repeat, 3))
	if err != nil {
		return err
	}
	name := fmt.Sprintf("read offset, %d pages, +%s/request", pages, delay)
	b.rows = append(b.rows,
		row{name: name + ", no --record", records: slowTotal, conn: plain},
		row{name: name + ", --record", records: slowTotal, conn: rec,
			target: fmt.Sprintf("--record ≤ 10%% more wall: %+.1f%%", 100*extra(rec, plain)), hasCheck: true, ok: extra(rec, plain) <= 0.10})
	return nil
}

// firstRequest times process start to the first request, five times, keeping the median.
func (b *bench) firstRequest(g *generator, def, vals string) error {
	var conns, bases []measure
	for range 5 {
		m, err := spawn(g, b.bin, "read", def, "--testing-values", vals, "--max-pages", "1")
		if err != nil {
			return err
		}
		conns = append(conns, m)
		m, err = spawn(g, b.self, baselineArgs(g.addr, "offset", 0, b.pageSize)...)
		if err != nil {
			return err
		}
		bases = append(bases, m)
	}
	byFirst := func(a, b measure) int { return int(a.ToFirst - b.ToFirst) }
	slices.SortFunc(conns, byFirst)
	slices.SortFunc(bases, byFirst)
	c, base := conns[len(conns)/2], bases[len(bases)/2]
	b.rows = append(b.rows, row{
		name: "start → first request", records: c.Lines, conn: c, base: base, hasBase: true, show: "first",
		target: "≤ 20 ms", hasCheck: true, ok: c.ToFirst <= 20*time.Millisecond,
	})
	return nil
}

// validate times `connector validate` of a large real definition, three times.
func (b *bench) validate(path string) error {
	if _, err := os.Stat(path); err != nil {
		b.notes = append(b.notes, fmt.Sprintf("validate skipped: %s not found", path))
		return nil
	}
	var ms []measure
	for range 3 {
		m, err := spawn(nil, b.bin, "validate", path)
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			// Diagnostics (exit 3) are a result of validate like any other.
			if len(ms) == 0 {
				b.notes = append(b.notes, "validate reported problems in "+path+" (exit 3); timed all the same")
			}
		} else if err != nil {
			return err
		}
		ms = append(ms, m)
	}
	m := median(ms)
	info, _ := os.Stat(path)
	b.rows = append(b.rows, row{
		name: fmt.Sprintf("validate %s (%d KB)", baseName(path), info.Size()>>10), conn: m,
		target: "≤ 200 ms", hasCheck: true, ok: m.Wall <= 200*time.Millisecond,
	})
	return nil
}

func (b *bench) print(took time.Duration) {
	fmt.Printf("connector benchmark: %d CPUs, %s, %d records/page of ~%d B, Bearer auth, server on 127.0.0.1\n",
		runtime.NumCPU(), runtime.Version(), b.pageSize, len(recordTemplate)+3*(idWidth-1))
	fmt.Println("base = raw-fetch baseline: a plain Go HTTP client, run as its own process, fetching the same pages and discarding the bodies")
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\twall\tbase\t× base\trecords/s\t× base\tCPU\tbase CPU\tpeak RSS\tbase RSS\t× base\t\ttarget\t")
	for _, r := range b.rows {
		wall, baseWall := r.conn.Wall, r.base.Wall
		if r.show == "first" {
			wall, baseWall = r.conn.ToFirst, r.base.ToFirst
		}
		cells := []string{r.name, ms(wall), "—", "—", "—", "—", ms(r.conn.CPU), "—", mib(r.conn.RSS), "—", "—"}
		if r.records > 0 && r.show == "" {
			cells[4] = fmt.Sprintf("%.0f", float64(r.records)/wall.Seconds())
		}
		if r.hasBase {
			cells[2] = ms(baseWall)
			cells[3] = fmt.Sprintf("%.2f", ratio(wall, baseWall))
			if r.records > 0 && r.show == "" {
				cells[5] = fmt.Sprintf("%.2f", ratio(baseWall, wall))
			}
			cells[7] = ms(r.base.CPU)
			cells[9] = mib(r.base.RSS)
			cells[10] = fmt.Sprintf("%.2f", float64(r.conn.RSS)/float64(r.base.RSS))
		}
		check := ""
		if r.hasCheck {
			check = "FAIL"
			if r.ok {
				check = "ok"
			}
		}
		for _, c := range cells {
			fmt.Fprint(tw, c+"\t")
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", check, r.target)
	}
	tw.Flush()
	for _, n := range b.notes {
		fmt.Println("note:", n)
	}
	fmt.Printf("\n(records/s × base is connector's rate over the baseline's; medians of %d runs for the %s cases, 5 for the first request; took %.1f s)\n",
		b.repeat, "100k", took.Seconds())
}

func median(ms []measure) measure {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b measure) int { return int(a.Wall - b.Wall) })
	m := s[len(s)/2]
	for _, x := range ms {
		m.RSS = max(m.RSS, x.RSS)
	}
	return m
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mib(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM records", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk records", n/1000)
	}
	return fmt.Sprintf("%d records", n)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

func firstLine(err error) string {
	s := err.Error()
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
