package run

import (
	"fmt"

	"connector/pkg/paginate"
	"connector/pkg/slice"
)

// PageEvent describes one data request and what followed from it. It carries decisions,
// not prose: the commands word them.
type PageEvent struct {
	Stream string
	// Slice is the slice the page belongs to (empty for a stream without partitions).
	Slice  *slice.Slice
	Number int // 1 for the first page of the slice
	// Lazy marks a slice's first page read from its parent record (lazy_read_pointer): no
	// request was sent for it.
	Lazy   bool
	Method string
	// URL is the request's URL as sent, secrets included: print it through the redactor.
	URL    string
	Status int
	Size   int
	// Records extracted (before the filter) and emitted (after the filter and limits).
	Records, Emitted int
	// Shown are the first Options.ShowRecords records emitted from the page, as JSON text
	// (after the transformations): print them through the redactor.
	Shown       [][]byte
	TokenBefore any
	// TokenAfter is the next page's token: the one the read goes on with, or, when a limit
	// ends the read, the one it would have gone on with.
	TokenAfter any
	// Decision is the paginator's decision on the page (not set for Ignored and Discarded
	// pages).
	Decision paginate.Decision
	// End says whether the read goes on after the page, and if not, why.
	End End
	// Limit is the limit that ended the read (End Limited).
	Limit Limit
	// Ignored is the error handler's reason for ignoring the response (End Ignored).
	Ignored string
	// Err is why the read failed on this page (End Failed).
	Err error
	// Discard says why a page fetched ahead was not used (End Discarded). Its records were
	// not emitted and it is not counted in Result.
	Discard Discard
	// Restart is why and how the slice starts again (End Reset).
	Restart Restart
}

// Restart is a pagination reset (pagination_reset, RESET_PAGINATION).
type Restart struct {
	// Limit is the number_of_records the records since the slice's start reached; 0 when
	// the error handler answered the page (its Status) with RESET_PAGINATION.
	Limit int
	// Slice is the slice the read starts again with (a SPLIT_USING_CURSOR moves its start).
	Slice *slice.Slice
}

// End is what a page means for the read of its slice.
type End int

const (
	// Continue: the read goes on to TokenAfter.
	Continue End = iota
	// Paginated: the paginator said this was the last page (Decision.Why says why).
	Paginated
	// Limited: --max-pages or --max-records ended the stream here.
	Limited
	// Ignored: the error handler ignored the response; the slice ends with no records from
	// it.
	Ignored
	// Failed: the read failed on this page (Err).
	Failed
	// Discarded: a page requested ahead of time that the read did not use.
	Discarded
	// Reset: the slice's pagination starts again from its first page after this page
	// (Restart says with which slice).
	Reset
)

// Limit is one of the limits of a test read.
type Limit struct {
	Flag string // "--max-pages" or "--max-records"; "" when no limit applied
	N    int
}

// Set reports whether a limit applied.
func (l Limit) Set() bool { return l.Flag != "" }

func (l Limit) String() string {
	if !l.Set() {
		return ""
	}
	return fmt.Sprintf("%s %d", l.Flag, l.N)
}

// Discard is why a page requested ahead of time was not used.
type Discard struct {
	Why DiscardWhy
	// Next is the token the page before really led to (WrongGuess).
	Next any
	// Answered says the response had arrived; otherwise the request was cancelled.
	Answered bool
}

// DiscardWhy is the reason of a Discard.
type DiscardWhy int

const (
	// PastTheEnd: a page before it was the last of the slice.
	PastTheEnd DiscardWhy = iota + 1
	// AfterFailure: the read failed on a page before it.
	AfterFailure
	// WrongGuess: it was requested with a token the page before did not lead to.
	WrongGuess
	// AfterReset: the slice's pagination started again from its first page.
	AfterReset
)
