package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Job statuses of an AsyncRetriever: what status_mapping maps the API's statuses to.
const (
	JobRunning   = "running"
	JobCompleted = "completed"
	JobFailed    = "failed"
	JobTimeout   = "timeout"
	JobSkipped   = "skipped"
)

// Async is an AsyncRetriever: each slice's records come from a job the API runs. A job is
// created (Creation), polled (Polling) until status_mapping says it is done, its records
// downloaded, then deleted. The download is a SimpleRetriever of its own: the stream's
// Download view (Download, DownloadPaginator, DownloadDecoder, and the record selector with
// the download_extractor's field path).
type Async struct {
	Pos Pos
	// Creation is the stream's Requester; the others are nil when absent.
	Creation, Polling, Download   *Requester
	DownloadTarget, Abort, Delete *Requester
	DownloadPaginator             *Paginator
	// DownloadDecoder decodes the downloads (nil: JSON).
	DownloadDecoder *Decoder
	// StatusPath is the status_extractor's field path: its first record is the API status.
	StatusPath []*template.Template
	// Statuses maps an API status, as Python's str() writes it ("None" when there is none),
	// to one of the Job* statuses.
	Statuses map[string]string
	// TargetPath is the download_target_extractor's field path (HasTarget false: none, and
	// one download request is made without a download_target).
	TargetPath []*template.Template
	HasTarget  bool
	// Timeout is polling_job_timeout, in minutes (nil: 60).
	Timeout *template.Template
	// FailedRetryWait is failed_retry_wait_time_in_seconds (nil: a failed job is created
	// again at once).
	FailedRetryWait *template.Template
	// MaxJobs is the definition's max_concurrent_async_job_count, shared by its async
	// streams (T nil: 1).
	MaxJobs *JobLimit
}

// JobLimit is max_concurrent_async_job_count: how many jobs may run at once in a read.
type JobLimit struct {
	T *template.Template
}

// DownloadView is the stream as its downloads are read: the download requester, paginator,
// decoder and extractor in the place of a SimpleRetriever's.
func (s *Stream) DownloadView() *Stream {
	if s.Async == nil {
		return s
	}
	d := *s
	d.Requester, d.Paginator, d.Decoder = s.Async.Download, s.Async.DownloadPaginator, s.Async.DownloadDecoder
	return &d
}

// Template variables of the requesters of an AsyncRetriever (the CDK puts the job's
// responses in the slice's extra fields, which its requesters see as variables).
var (
	pollingVars  = append(append([]string{}, requestVars...), "creation_response")
	targetVars   = append(append([]string{}, requestVars...), "polling_response")
	downloadVars = append(append([]string{}, requestVars...), "download_target", "creation_response", "polling_response")
)

// jobLimit reads the top level max_concurrent_async_job_count once per definition.
func (l *loader) jobLimit(top *comp) *JobLimit {
	if l.asyncJobs != nil {
		return l.asyncJobs
	}
	l.asyncJobs = &JobLimit{}
	if v := top.vals["max_concurrent_async_job_count"]; !isEmpty(v) {
		if v.Kind != yaml.ScalarNode {
			l.at(v, "max_concurrent_async_job_count", diag.CodeType, fmt.Sprintf("`max_concurrent_async_job_count` must be an integer or a template, not %s", kindName(v)), "")
		} else {
			l.tmpl(v, "max_concurrent_async_job_count", "max_concurrent_async_job_count", sizeVars, &l.asyncJobs.T)
		}
	}
	return l.asyncJobs
}

// asyncRetriever reads an AsyncRetriever into s; false when the stream cannot be run.
func (l *loader) asyncRetriever(c *comp, s *Stream, auth *streamAuth, depth int) bool {
	c.checkFields("AsyncRetriever")
	if l.asyncJobs == nil {
		l.asyncJobs = &JobLimit{}
	}
	a := &Async{Pos: pos(c.n), MaxJobs: l.asyncJobs}
	s.Async = a
	ok := true
	var uses []optionUse
	if v := c.get("partition_router"); !isEmpty(v) {
		r, rok := l.routers(v, c.fieldPath("partition_router"), c.params, &uses, depth)
		s.Router = r
		ok = ok && rok
	}
	ok = l.decoder(c, "decoder") && ok
	// requester reads one of the job's requesters; the creation requester is the stream's,
	// the others use the same authenticator or none.
	requester := func(f string, vars []string, required bool) *Requester {
		var n *yaml.Node
		if required {
			n = c.require(f)
		} else {
			n = c.get(f)
		}
		if isEmpty(n) {
			return nil
		}
		rc, rok := l.component(n, c.fieldPath(f), c.params, "HttpRequester")
		if !rok {
			ok = false
			return nil
		}
		if rc.typ != "HttpRequester" {
			l.unsupported(n, rc.path, rc.typ, f)
			ok = false
			return nil
		}
		var own []optionUse
		sa := &streamAuth{name: s.Name, path: auth.path, requester: n}
		r := l.requester(rc, vars, sa, &own)
		l.conflicts = append(l.conflicts, own)
		if f == "creation_requester" {
			auth.requester, auth.node, auth.params = n, sa.node, sa.params
			l.streams = append(l.streams, auth)
		} else {
			l.sameAuth(sa)
		}
		return r
	}
	a.Creation = requester("creation_requester", requestVars, true)
	a.Polling = requester("polling_requester", pollingVars, true)
	a.Download = requester("download_requester", downloadVars, true)
	a.DownloadTarget = requester("download_target_requester", targetVars, false)
	a.Abort = requester("abort_requester", pollingVars, false)
	a.Delete = requester("delete_requester", pollingVars, false)
	if a.Creation == nil || a.Polling == nil || a.Download == nil {
		ok = false
	}
	s.Requester = a.Creation
	if a.DownloadTarget != nil && isEmpty(c.get("download_target_extractor")) {
		l.at(c.n, c.path, diag.CodeMissingField, "AsyncRetriever has a `download_target_requester` but no `download_target_extractor`",
			"add a download_target_extractor that reads the download targets from its response")
		ok = false
	}
	if n := c.require("status_extractor"); n != nil {
		a.StatusPath, ok = l.dpath(n, c.fieldPath("status_extractor"), c.params, ok)
	} else {
		ok = false
	}
	if n := c.get("download_target_extractor"); !isEmpty(n) {
		a.HasTarget = true
		a.TargetPath, ok = l.dpath(n, c.fieldPath("download_target_extractor"), c.params, ok)
	}
	var downloadPath []*template.Template
	var toFile *Decoder
	if n := c.get("download_extractor"); !isEmpty(n) {
		if extractorType(n) == ResponseToFile {
			if ec, cok := l.component(n, c.fieldPath("download_extractor"), c.params, "DpathExtractor"); cok {
				toFile = l.toFileExtractor(ec)
			}
		} else {
			downloadPath, ok = l.dpath(n, c.fieldPath("download_extractor"), c.params, ok)
		}
	}
	if n := c.require("status_mapping"); n != nil {
		a.Statuses, ok = l.statusMapping(n, c.fieldPath("status_mapping"), c.params, ok)
	} else {
		ok = false
	}
	if n := c.get("download_decoder"); !isEmpty(n) {
		d, dok := l.decoderComp(n, c.fieldPath("download_decoder"), c.params, "download_decoder", false)
		if d != nil && d.Type != JSONDecoder {
			a.DownloadDecoder = d
		}
		ok = ok && dok
	}
	if pn := c.get("download_paginator"); pn != nil {
		a.DownloadPaginator = l.paginator(pn, c.fieldPath("download_paginator"), c.params, nil)
		if a.DownloadPaginator != nil && !a.DownloadDecoder.Paginates() {
			l.at(c.get("download_decoder"), c.fieldPath("download_decoder"), diag.CodeType,
				fmt.Sprintf("a download_paginator cannot read the responses of %s: the Airbyte CDK paginates only JsonDecoder, XmlDecoder and a GzipDecoder of JsonDecoder responses", a.DownloadDecoder.Type),
				"remove the download_paginator or use one of those decoders")
		}
	}
	for _, f := range []string{"polling_job_timeout", "failed_retry_wait_time_in_seconds"} {
		v := c.get(f)
		if isEmpty(v) {
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" && v.Tag != "!!str" {
			l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be an integer or a template, not %s", f, describe(v)), "")
			ok = false
			continue
		}
		dst := &a.Timeout
		if f == "failed_retry_wait_time_in_seconds" {
			dst = &a.FailedRetryWait
		}
		l.tmpl(v, c.fieldPath(f), f, sizeVars, dst)
	}
	if toFile != nil {
		// The extractor reads the downloads itself, whatever download_decoder says.
		a.DownloadDecoder = toFile
	}
	if sel := c.require("record_selector"); sel != nil {
		// The CDK's AsyncRetriever filters, transforms and normalizes with its
		// record_selector; the records come from the download_extractor (default: the
		// whole body), not from the selector's own extractor.
		if s.Selector = l.selector(sel, c.fieldPath("record_selector"), c.params); s.Selector != nil {
			s.Selector.FieldPath = downloadPath
		}
	}
	l.conflicts = append(l.conflicts, uses)
	return ok && s.Requester != nil && s.Selector != nil
}

// sameAuth checks that a job requester other than the creation requester uses the stream's
// authenticator or none (a download URL is often signed, and sent without credentials).
func (l *loader) sameAuth(sa *streamAuth) {
	if sa.node == nil || authName(sa.node) == NoAuth {
		return
	}
	l.streams = append(l.streams, sa)
}

// dpath reads a DpathExtractor's field path; ok is false (or stays as given) when it
// cannot be used.
func (l *loader) dpath(n *yaml.Node, path string, parent *params, ok bool) ([]*template.Template, bool) {
	ec, cok := l.component(n, path, parent, "DpathExtractor")
	if !cok {
		return nil, false
	}
	if ec.typ != "DpathExtractor" {
		l.unsupported(n, ec.path, ec.typ, lastSeg(path))
		return nil, false
	}
	ec.checkFields("DpathExtractor")
	l.decoder(ec, "decoder")
	fp := ec.get("field_path")
	switch {
	case fp == nil:
		l.at(n, ec.path, diag.CodeMissingField, "DpathExtractor is missing the required field `field_path`", "write `field_path: []` to select the whole response body")
		return nil, false
	case fp.Kind != yaml.SequenceNode:
		l.at(fp, ec.fieldPath("field_path"), diag.CodeType, fmt.Sprintf("`field_path` must be a list, not %s", kindName(fp)), "")
		return nil, false
	}
	out := make([]*template.Template, len(fp.Content))
	for i, seg := range fp.Content {
		p := fmt.Sprintf("%s[%d]", ec.fieldPath("field_path"), i)
		if seg.Kind != yaml.ScalarNode {
			l.at(seg, p, diag.CodeType, fmt.Sprintf("a `field_path` segment must be a string, not %s", kindName(seg)), "")
			ok = false
			continue
		}
		l.tmpl(seg, p, "field_path", fieldPathVars, &out[i])
	}
	return out, ok
}

// statusMapping reads an AsyncJobStatusMap: running, completed, failed and timeout are
// required (an empty list will do), skipped is optional; an API status is mapped once.
func (l *loader) statusMapping(n *yaml.Node, path string, parent *params, ok bool) (map[string]string, bool) {
	c, cok := l.component(n, path, parent, "AsyncJobStatusMap")
	if !cok {
		return nil, false
	}
	if c.typ != "AsyncJobStatusMap" {
		l.at(n, path, diag.CodeType, fmt.Sprintf("`status_mapping` must be an AsyncJobStatusMap, not %s", c.typ), "")
		return nil, false
	}
	c.checkFields("AsyncJobStatusMap")
	out := map[string]string{}
	for _, st := range []string{JobRunning, JobCompleted, JobFailed, JobTimeout, JobSkipped} {
		v := c.vals[st]
		if isNull(v) {
			if st != JobSkipped {
				l.at(n, path, diag.CodeMissingField, fmt.Sprintf("AsyncJobStatusMap is missing the required field `%s`", st), "write `[]` when no API status means "+st)
				ok = false
			}
			continue
		}
		if v.Kind != yaml.SequenceNode {
			l.at(v, join(path, st), diag.CodeType, fmt.Sprintf("`%s` must be a list of API statuses, not %s", st, kindName(v)), "")
			ok = false
			continue
		}
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				l.at(item, join(path, st), diag.CodeType, fmt.Sprintf("an API status must be a string, not %s", kindName(item)), "")
				ok = false
				continue
			}
			if prev, dup := out[item.Value]; dup {
				l.at(item, join(path, st), diag.CodeType, fmt.Sprintf("the API status `%s` is already mapped to %s", item.Value, prev), "map each API status once")
				ok = false
				continue
			}
			out[item.Value] = st
		}
	}
	return out, ok
}
