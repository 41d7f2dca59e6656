package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"connector/pkg/auth"
	"connector/pkg/decode"
	"connector/pkg/extract"
	"connector/pkg/httpx"
	"connector/pkg/incremental"
	"connector/pkg/manifest"
	"connector/pkg/normalize"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
	"connector/pkg/template"
	"connector/pkg/transform"
)

// stream is what does not change while a stream is read: made once, shared by its slices.
type stream struct {
	o *Options
	s *manifest.Stream
	// auth applies the credentials of the stream's requester.
	auth     auth.Authenticator
	parentOf string
	// read names the stream whose read this one serves (itself, or the child of a parent).
	read string
	pag  *paginate.Paginator
	// handler is the stream's error handler, set on every data request.
	handler *httpx.Handler
	router  slice.Router
	// want says which Go values the templates of the stream need from a page.
	want extract.Want
	// dec decodes the bodies of a stream whose decoder is not JSON (nil: JSON).
	dec *decode.Decoder
	// literalPath is the record selector's field path when it has no template.
	literalPath []string
	// depth is how many pages may be requested and not yet handled; speculate sends them
	// assuming full pages (--prefetch), overlap after counting the page before
	// (Options.Overlap).
	depth     int
	speculate bool
	overlap   bool
	predictor *paginate.Predictor
	// skipped counts, per parent, the records without a value at parent_key.
	skipped []Skipped
	// transform is the stream's transformations (nil: none; records are emitted as sent).
	transform *transform.Chain
	// normalize casts records to the stream's schema (schema_normalization: Default).
	normalize *normalize.Normalizer
	// in is the stream's input state; cursor its incremental cursor (nil: full refresh).
	in     *record.Object
	cursor *incremental.Cursor
	// written counts the records written since the last checkpoint (at the output's head).
	written int
	// parentCursors are the cursors of the parents whose state the child carries.
	mu            sync.Mutex
	parentCursors map[*manifest.Stream]*incremental.Cursor
	// jobHandlers are the error handlers of an AsyncRetriever's job requesters, made with
	// the stream and only read after (async.go).
	jobHandlers map[*manifest.Requester]*httpx.Handler
	// qp is the requester's QueryProperties (nil: none; queryprops.go).
	qp *queryProps
	// spools says the stream's pages go to disk as they arrive, to be read from there
	// (spool.go): its extractor reads whole files (ResponseToFileExtractor).
	spools bool
	// files says the stream's files are downloaded (files.go), with fileHandler, the error
	// handler of the file_uploader's requester (nil: the default).
	files       bool
	fileHandler *httpx.Handler
}

// recordBytes is the share of --max-body each record of a page stands for: a page holds at
// most one record per recordBytes of the limit, so that a page of tiny records cannot make
// its records (some 64 bytes of bookkeeping each) take more memory than half the limit.
const recordBytes = 128

// newStream prepares the read of s; parentOf names the stream it is read for, when it is a
// parent.
func newStream(o *Options, s *manifest.Stream, parentOf string, in *record.Object) (*stream, error) {
	s = o.resolve(s, in).DownloadView() // an AsyncRetriever's pages are its downloads
	// The state_migrations turn the input state into the one the stream reads, before
	// anything reads it (its cursor, the parents' states it carries), as the CDK does when
	// it builds the stream.
	in, err := incremental.Migrate(s, in, o.globals())
	if err != nil {
		return nil, err
	}
	st := &stream{o: o, s: s, parentOf: parentOf, read: s.Name, in: in}
	if s.Requester != nil {
		if st.auth, err = o.authFor(s.Requester.Authenticator); err != nil {
			return nil, err
		}
	}
	g := o.globals()
	pag, err := paginate.New(s.Paginator, g)
	if err != nil {
		return nil, fmt.Errorf("paginator: %w", err)
	}
	if o.strategy != nil {
		pag = pag.WithStrategy(o.strategy)
	}
	st.pag = pag
	if st.handler, err = httpx.NewHandler(s.Requester.ErrorHandler, g); err != nil {
		return nil, err
	}
	st.spools = s.Decoder != nil && s.Decoder.Type == manifest.ResponseToFile
	if s.Files != nil && o.Files != nil {
		st.files = true
		if st.fileHandler, err = httpx.NewHandler(s.Files.Requester.ErrorHandler, g); err != nil {
			return nil, err
		}
	}
	if s.Async != nil {
		if st.jobHandlers, err = jobHandlers(s.Async, g); err != nil {
			return nil, err
		}
	}
	st.router, err = slice.NewRouter(s.Router, slice.Env{
		Globals:    g,
		ReadParent: st.readParent,
		Skipped: func(parent, key string, n int) {
			st.skipped = append(st.skipped, Skipped{Parent: parent, ParentKey: key, Records: n})
		},
	})
	if err != nil {
		return nil, fmt.Errorf("partition_router: %w", err)
	}
	if st.transform, err = transform.New(s.Transformations, g); err != nil {
		return nil, err
	}
	if s.Selector.Normalization == manifest.NormalizationDefault {
		st.normalize = normalize.New(s.Schema)
	}
	if err := st.newCursor(in); err != nil {
		return nil, err
	}
	if s.Decoder != nil {
		st.dec = decode.New(s.Decoder, o.Client.BodyLimit(), "--max-body")
	}
	if st.qp, err = newQueryProps(s); err != nil {
		return nil, err
	}
	st.want = wants(s)
	st.want.Members = st.transform != nil // record.Arena.ShallowAt
	st.want.MaxRecords = int(max(o.Client.BodyLimit()/recordBytes, 1))
	st.literalPath = literalPath(s.Selector.FieldPath)
	st.depth = 1
	st.predictor = pag.Predictor()
	if n := o.Prefetch; n > 1 {
		if why := st.prefetchBlocker(); why != "" {
			if o.Warn != nil {
				o.Warn(fmt.Sprintf("%s: --prefetch %d ignored, reading one page at a time: %s", s.Name, n, why))
			}
		} else {
			st.depth, st.speculate = n, true
		}
	}
	// The early request goes out only where the record count alone decides the next page:
	// not where a reset may follow a number of records, nor in a data feed, whose page ends
	// the read by the cursor value of its last record.
	st.overlap = o.Overlap && st.predictor != nil && !resetsAfterRecords(s) && st.qp == nil &&
		(st.cursor == nil || !st.cursor.DataFeed())
	if st.overlap {
		// The page counted and waiting to be handed over, and the one after it in flight:
		// at most two bodies in memory beyond the page being handled, at most two
		// requests discarded after a page that fails.
		st.depth = max(st.depth, 2)
	}
	return st, nil
}

// literalPath is a field path without templates, rendered once; nil when a segment is a
// template (or the path is empty).
func literalPath(segs []*template.Template) []string {
	out := make([]string, len(segs))
	for i, t := range segs {
		if !t.IsLiteral() {
			return nil
		}
		out[i] = t.Source()
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// prefetchBlocker says why the stream's next page tokens cannot be predicted before its
// pages arrive ("" when they can).
func (st *stream) prefetchBlocker() string {
	switch {
	case !st.pag.Enabled():
		return "the stream does not paginate"
	case st.qp != nil:
		return "QueryProperties sends each page's property chunks one after the other"
	case st.predictor == nil:
		return fmt.Sprintf("%s takes each next page token from the previous response", st.s.Paginator.Strategy.Type)
	case st.predictor.Size <= 0:
		return "without a page_size the next offset depends on the previous page"
	case resetsAfterRecords(st.s):
		return "pagination_reset's number_of_records may start the slice again after any page"
	}
	return ""
}

// wants says which Go values the stream's templates read, so the page parser builds only
// those.
func wants(s *manifest.Stream) extract.Want {
	var w extract.Want
	if s.Selector.Filter != nil {
		w.Values = true
	}
	if p := s.Paginator; p != nil && p.Strategy != nil {
		for _, t := range []*template.Template{p.Strategy.CursorValue, p.Strategy.StopCondition} {
			if t == nil {
				continue
			}
			if t.Reads("response") {
				w.Body, w.LazyBody = true, true
			}
			if t.Reads("last_records") || t.Reads("last_record") {
				w.Values = true
			}
		}
	}
	return w
}

// send sends a data request; a 401 on an OAuth data request renews the token and tries
// once more.
func (st *stream) send(ctx context.Context, req *httpx.Request) (*httpx.Response, error) {
	resp, err := st.o.Client.Do(ctx, req)
	var se *httpx.StatusError
	if errors.As(err, &se) && se.Status == http.StatusUnauthorized {
		if renewer, ok := st.auth.(auth.Retrier); ok {
			renewed, rerr := renewer.Renew(ctx)
			if rerr != nil {
				return nil, rerr
			}
			if renewed {
				if err := reapply(ctx, st.auth, req); err != nil {
					return nil, err
				}
				resp, err = st.o.Client.Do(ctx, req)
			}
		}
	}
	if err != nil {
		if errors.As(err, &se) && se.IsAuth() {
			return nil, &auth.Error{Msg: se.Error()}
		}
		return nil, err
	}
	return resp, nil
}

// reapply replaces the credentials of req after a token renewal.
func reapply(ctx context.Context, a auth.Authenticator, req *httpx.Request) error {
	b := request.New(req.Kind, req.Method, req.URL)
	if err := a.Apply(ctx, b); err != nil {
		return err
	}
	fresh, err := b.Build()
	if err != nil {
		return err
	}
	for k, v := range fresh.Header {
		req.Header[k] = v
	}
	return nil
}

// build assembles the request for one page of sl, and renders the field path its records
// are read from.
func (st *stream) build(ctx context.Context, sl *sliceVars, token any, first bool, prevURL string) (*httpx.Request, []string, error) {
	vars := sl.vars(st.o.globals(), token, first)
	path, err := st.fieldPath(vars)
	if err != nil {
		return nil, nil, err
	}
	b, err := request.FromRequester("data", st.s.Requester, request.NewScope(withParams(vars, st.s.Requester.Parameters), st.o.Client.Redactor))
	if err != nil {
		return nil, nil, err
	}
	// An AsyncRetriever's download requester without an authenticator is sent without
	// credentials, and the partition's request options are not its (async.go).
	async := st.s.Async != nil
	if !async || st.s.Requester.Authenticator != nil {
		if err := st.auth.Apply(ctx, b); err != nil {
			return nil, nil, err
		}
	}
	if err := st.injectChunk(b, sl.s); err != nil {
		return nil, nil, err
	}
	if err := st.pag.Inject(b, token, first, prevURL); err != nil {
		return nil, nil, err
	}
	if !async && (first || !st.s.IgnoreSlicerOnPaginated) {
		if err := st.router.Inject(b, sl.s); err != nil {
			return nil, nil, err
		}
	}
	req, err := b.Build()
	if err != nil {
		return nil, nil, err
	}
	req.Handler = st.handler
	req.Stream, req.Read = st.s.Name, st.read
	if st.o.Cached[st.s.Requester] {
		req.CacheAs = st.s.Name
	}
	return req, path, nil
}

// fieldPath renders the record selector's field path for a page.
func (st *stream) fieldPath(vars map[string]any) ([]string, error) {
	segs := st.s.Selector.FieldPath
	if len(segs) == 0 || st.literalPath != nil {
		return st.literalPath, nil
	}
	pv := withParams(vars, st.s.Selector.Parameters)
	out := make([]string, len(segs))
	for i, t := range segs {
		s, err := t.Render(pv)
		if err != nil {
			return nil, fmt.Errorf("record_selector field_path: %w", err)
		}
		out[i] = s
	}
	return out, nil
}
