// The browser tests are left out of the race detector's pass: the page's server meets its
// goroutines in the workspace and server tests, which run under -race, and the DevTools
// client would cost that pass a race-instrumented build of some sixty protocol packages.

//go:build !race

package dev

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The page is tested in headless Chromium, driven through the DevTools protocol (chromedp).
// Without Chromium these tests skip, unless CI is set: CI installs it (.ci/run).

// browser starts headless Chromium with a 1280×800 window for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" || os.Getenv("CONNECTOR_SCREENSHOTS") != "" {
			t.Fatal("Chromium is not installed, and CI or CONNECTOR_SCREENSHOTS is set: the page's browser tests need it (apt-get install chromium)")
		}
		t.Skip("Chromium is not installed (the Debian package chromium): the page's browser tests are skipped")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 800),
		chromedp.Flag("hide-scrollbars", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// traffic keeps everything the page received: the bodies of its responses and the data of
// its events.
type traffic struct {
	mu       sync.Mutex
	finished []network.RequestID
	events   []string
	urls     map[network.RequestID]string
}

func recordTraffic(ctx context.Context) *traffic {
	tr := &traffic{urls: map[network.RequestID]string{}}
	responses := chromedp.Events(ctx, network.ResponseReceived)
	finished := chromedp.Events(ctx, network.LoadingFinished)
	events := chromedp.Events(ctx, network.EventSourceMessageReceived)
	go func() {
		for ev, err := range responses {
			if err != nil {
				return
			}
			tr.mu.Lock()
			tr.urls[ev.RequestID] = ev.Response.URL
			tr.mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range finished {
			if err != nil {
				return
			}
			tr.mu.Lock()
			tr.finished = append(tr.finished, ev.RequestID)
			tr.mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			tr.mu.Lock()
			tr.events = append(tr.events, ev.Data)
			tr.mu.Unlock()
		}
	}()
	return tr
}

// received returns every body and event the page received, by URL, and their size.
func (tr *traffic) received(t *testing.T, ctx context.Context) (map[string]string, int) {
	t.Helper()
	tr.mu.Lock()
	ids := append([]network.RequestID(nil), tr.finished...)
	events := append([]string(nil), tr.events...)
	tr.mu.Unlock()
	out := map[string]string{}
	size := 0
	for _, id := range ids {
		res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
		if err != nil {
			continue // a response without a body (204, a redirect)
		}
		tr.mu.Lock()
		out[tr.urls[id]] += string(res.Body)
		tr.mu.Unlock()
		size += len(res.Body)
	}
	for i, e := range events {
		out[fmt.Sprintf("event %d", i)] = e
		size += len(e)
	}
	return out, size
}

// waitFor waits until the JavaScript expression is true on the page.
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("waiting for %s: %v\nthe page says:\n%s", what, err, text)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func click(t *testing.T, ctx context.Context, selector string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector))); err != nil {
		t.Fatalf("clicking %s: %v", selector, err)
	}
}

// timeSave saves an edit of the definition and returns how long the page took to show its
// result: from the save to the moment expr holds on the page.
func timeSave(t *testing.T, ctx context.Context, p *project, old, new, expr string) time.Duration {
	t.Helper()
	start := time.Now()
	p.edit(t, old, new)
	waitFor(t, ctx, "the page after the save", expr)
	return time.Since(start)
}

func TestPageInABrowser(t *testing.T) {
	ctx := browser(t)
	p := newProject(t, "definitions/bearer-auth.yaml")
	// The files are watched as connector dev watches them: the times logged are a user's.
	ws := p.start(t, Config{Poll: defaultPoll, Settle: defaultSettle})
	srv := servePage(t, ws, "tok-browser")
	tr := recordTraffic(ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?token=tok-browser")); err != nil {
		t.Fatal(err)
	}

	// The records of the first stream, in a table whose columns are the inferred fields.
	waitFor(t, ctx, "the records", `document.querySelectorAll('tr[id^=record-]').length === 250`)
	if got := eval[string](t, ctx, `document.querySelector('#record-1').innerText`); !strings.Contains(got, "The Crimson Garden, vol. 1") || !strings.Contains(got, "12345678901234567890") {
		t.Errorf("record 1 reads %q: want its title and its global_id to the last digit", got)
	}
	heads := eval[[]string](t, ctx, `[...document.querySelectorAll('table.records th')].map(th => th.textContent)`)
	if want := "#,id,global_id,title,author,price,in_stock,tags,published,blurb"; strings.Join(heads, ",") != want {
		t.Errorf("columns %v, want %s", heads, want)
	}
	if got := eval[string](t, ctx, `document.querySelector('.facts').textContent`); !strings.HasPrefix(got, "250 records · 3 pages · 1 slice · ") {
		t.Errorf("summary %q", got)
	}

	// The request, its Authorization masked.
	click(t, ctx, `button[data-tab=requests]`)
	click(t, ctx, `details.exchange > summary`)
	waitFor(t, ctx, "the request", `document.querySelector('.pair') !== null`)
	if got := eval[string](t, ctx, `document.querySelector('.pair').innerText`); !strings.Contains(got, "Bearer ****") || !strings.Contains(got, "/v1/bearer/books?") {
		t.Errorf("the request reads:\n%s", got)
	}
	// The response body as a tree, numbers as the API wrote them; as text, cut, with a way
	// to see all of it.
	if got := eval[string](t, ctx, `document.querySelector('.json').innerText`); !strings.Contains(got, `"global_id":12345678901234567890`) {
		t.Errorf("the response tree reads:\n%.300s", got)
	}
	click(t, ctx, `.body-tools button`)
	cut := eval[int](t, ctx, `document.querySelector('pre.raw').textContent.length`)
	click(t, ctx, `.json button`)
	whole := eval[int](t, ctx, `document.querySelector('pre.raw').textContent.length`)
	if cut != 20000 || whole <= cut {
		t.Errorf("the raw body shows %d characters, then %d after show all; want 20000, then more", cut, whole)
	}

	// The inferred schema, with the YAML to copy.
	click(t, ctx, `button[data-tab=schema]`)
	waitFor(t, ctx, "the schema", `document.querySelector('table.schema') !== null`)
	if got := eval[string](t, ctx, `document.querySelector('table.schema tbody tr').innerText`); !strings.HasPrefix(got, "id\tnumber") {
		t.Errorf("the first schema row reads %q", got)
	}

	// A save re-reads: with a page size of 30, the five pages a slice may have hold 150 records.
	took := timeSave(t, ctx, p, "page_size: 100", "page_size: 30",
		`document.querySelector('.facts')?.textContent.startsWith('150 records · 5 pages')`)
	t.Logf("save → updated page: %s", took.Round(time.Millisecond))

	// A broken file: its error with its position, the last good result greyed out.
	p.edit(t, "          pagination_strategy:\n", "          pagination_strategy: [\n")
	waitFor(t, ctx, "the error", `document.querySelector('#problems.broken') !== null && !document.querySelector('#problems').hidden`)
	problem := eval[string](t, ctx, `document.querySelector('#problems li').innerText`)
	if !strings.HasPrefix(problem, p.def+":") || !strings.Contains(problem, "error") {
		t.Errorf("the problem reads %q, want %s:LINE:COL: error …", problem, p.def)
	}
	if !eval[bool](t, ctx, `document.querySelector('#result').classList.contains('stale') && document.querySelector('.facts').textContent.startsWith('150 records · 5 pages')`) {
		t.Error("the last good result is not shown greyed out")
	}
	took = timeSave(t, ctx, p, "          pagination_strategy: [\n", "          pagination_strategy:\n",
		`document.querySelector('#problems').hidden && !document.querySelector('#result').classList.contains('stale')`)
	t.Logf("save of the fix → updated page: %s", took.Round(time.Millisecond))

	// No secret of the testing values reached the page, in its DOM or in anything it received.
	dom := eval[string](t, ctx, `document.documentElement.outerHTML`)
	received, size := tr.received(t, ctx)
	received["the DOM"] = dom
	for where, text := range received {
		for _, s := range demoSecrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q", where, s)
			}
		}
	}
	if len(received) < 5 {
		t.Errorf("only %d responses and events were seen: %v", len(received), keys(received))
	}
	t.Logf("the page received %d KB in %d responses and events", size/1024, len(received)-1)
}

func TestPageLimitsAndReadingAgainFromTheState(t *testing.T) {
	ctx := browser(t)
	p := newProject(t, "definitions/incremental-datetime.yaml")
	ws := p.start(t, Config{})
	srv := servePage(t, ws, "tok")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?token=tok")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the first read", `document.querySelector('.facts')?.textContent.includes(' · 5 slices · ')`)
	if got := eval[string](t, ctx, `document.querySelector('#streams').innerText`); got != "events\nincremental" {
		t.Errorf("streams %q", got)
	}
	// New limits from the form: two slices of one page each.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#limits input[name=slices]`), "2"),
		chromedp.SetValue(chromedp.CSS(`#limits input[name=pages]`), "1"),
		chromedp.Click(chromedp.CSS(`#limits button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the read with two slices", `document.querySelector('.facts')?.textContent.includes(' · 2 pages · 2 slices · ')`)
	click(t, ctx, `button[data-tab=state]`)
	before := eval[string](t, ctx, `document.querySelector('pre.state-core').textContent`)
	if !strings.Contains(before, `"updated_at": "2024-`) {
		t.Fatalf("the state after the read: %s", before)
	}
	click(t, ctx, `#read-from-state`)
	waitFor(t, ctx, "the read from the state", `document.querySelector('.facts')?.textContent.endsWith('from the state of the read before')`)
	if got := eval[string](t, ctx, `document.querySelector('pre.state-core').textContent`); got != before {
		t.Errorf("the read started from %s, want %s", got, before)
	}
	if got := eval[string](t, ctx, `document.querySelector('#limits input[name=slices]').value`); got != "2" {
		t.Errorf("the form shows %s slices after the read, want 2", got)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// darkMode makes the page see prefers-color-scheme: dark.
func darkMode(dark bool) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		value := "light"
		if dark {
			value = "dark"
		}
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
		})
		return chromedp.Void{}, err
	}
}

// screenshotSchema is a declared schema for author_books of
// substream-partition-router.yaml that the records do not quite fit: the pictures show
// warnings and differences.
const screenshotSchema = `      primary_key:
        - id
      schema_loader:
        type: InlineSchemaLoader
        schema:
          $schema: http://json-schema.org/draft-07/schema#
          type: object
          properties:
            id: {type: integer}
            global_id: {type: integer}
            title: {type: string, maxLength: 27}
            author:
              type: object
              properties:
                id: {type: integer}
                name: {type: string}
            price: {type: number}
            in_stock: {type: boolean}
            tags: {type: array, items: {type: string}}
            published: {type: string, format: date}
            isbn: {type: string}
      retriever:
        type: SimpleRetriever
        requester:
          $ref: "#/definitions/requester"
          path: "/v1/public/authors/`

// TestScreenshots makes the README's pictures of the page, light and dark, into the folder
// CONNECTOR_SCREENSHOTS names (make screenshots); without it, it is skipped.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("CONNECTOR_SCREENSHOTS")
	if dir == "" {
		t.Skip("CONNECTOR_SCREENSHOTS is not set (make screenshots sets it)")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	p := newProject(t, "definitions/substream-partition-router.yaml")
	p.edit(t, `      primary_key:
        - id
      retriever:
        type: SimpleRetriever
        requester:
          $ref: "#/definitions/requester"
          path: "/v1/public/authors/`, screenshotSchema)
	// The pictures name the files as a person would have typed them.
	t.Chdir(p.dir)
	p.def, p.values = "definitions/"+filepath.Base(p.def), "creds.yaml"
	os.Mkdir("definitions", 0o755)
	os.Rename(filepath.Base(p.def), p.def)
	os.Rename("values.yaml", p.values)
	ws := p.start(t, Config{})
	srv := servePage(t, ws, "screenshot")
	shot := func(name string, dark bool, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, append([]chromedp.Action[chromedp.Void]{darkMode(dark)}, steps...)...); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // let the page paint
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d KB)", path, len(png)/1024)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(srv.URL+"/?token=screenshot")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the first stream", `document.querySelectorAll('tr[id^=record-]').length > 0`)
	click(t, ctx, `#streams li:nth-child(2) button`)
	waitFor(t, ctx, "author_books", `document.querySelector('#stream-name').textContent === 'author_books' && document.querySelector('.facts')?.textContent.startsWith('25 records')`)
	shot("dev-records-light.png", false)
	shot("dev-records-dark.png", true)
	shot("dev-requests-dark.png", true, chromedp.Click(chromedp.CSS(`button[data-tab=requests]`)),
		chromedp.Click(chromedp.CSS(`.slice details.exchange > summary`)))
	shot("dev-schema-light.png", false, chromedp.Click(chromedp.CSS(`button[data-tab=schema]`)))
	p.edit(t, "            field_name: cursor", "            field_nme: cursor")
	waitFor(t, ctx, "the error", `document.querySelector('#problems.broken') !== null`)
	shot("dev-broken-light.png", false, chromedp.Click(chromedp.CSS(`button[data-tab=records]`)))
}
