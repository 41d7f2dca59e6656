package builder

import (
	"fmt"
	"math"

	"connector/pkg/httpx"
)

// auxTitle is how the CDK titles an auxiliary request: the title, type and description it
// logs the request with (format_http_message).
type auxTitle struct {
	title, typ, description string
}

// async reports an auxiliary request of an asynchronous job: the CDK keeps those with the
// slice they were made in, the others with the read.
func (t auxTitle) async() bool {
	switch t.typ {
	case AuxAsyncCreate, AuxAsyncPoll, AuxAsyncAbort, AuxAsyncDelete:
		return true
	}
	return false
}

// parentTitle is a page of a parent stream: the CDK logs it as a page of that stream, with
// the mark of a substream's requests laid over it ("Parent stream: ", PARENT_STREAM).
func parentTitle(stream string) auxTitle {
	return auxTitle{
		title:       fmt.Sprintf("Parent stream: Stream '%s' request", stream),
		typ:         AuxParentStream,
		description: fmt.Sprintf("Request performed in order to extract records for stream '%s'", stream),
	}
}

// schemaTitle is a page of a DynamicSchemaLoader's retriever, which the CDK names
// dynamic_properties whatever its stream.
func schemaTitle() auxTitle {
	return auxTitle{title: "Schema loader 'dynamic_properties' request", typ: AuxHTTP,
		description: "Request performed in order to extract schema."}
}

// auxTitleOf titles the requests that are not pages: an OAuth token request, a session
// token's login, the steps of an asynchronous job. ok is false for a request the CDK does
// not log: the validation and login of a LegacySessionTokenAuthenticator (sent with plain
// requests) and a job's download_target_requester (logged as the page of another stream,
// which the grouper leaves out), and a page of a stream the read does not show.
func auxTitleOf(e httpx.Exchange, jobTimeout string) (auxTitle, bool) {
	switch e.Kind {
	case "token":
		return auxTitle{title: "Refresh token", typ: AuxAuth, description: "Obtains access token"}, true
	case "login":
		if e.Step == httpx.StepLegacy {
			return auxTitle{}, false
		}
		return auxTitle{title: "Login request", typ: AuxAuth, description: "Obtains session token"}, true
	case "job":
		switch e.Step {
		case httpx.StepCreate:
			return auxTitle{title: "Async Job -- Create", typ: AuxAsyncCreate,
				description: "Create the server-side async job. Timeout after: " + jobTimeout}, true
		case httpx.StepPoll:
			return auxTitle{title: "Async Job -- Polling", typ: AuxAsyncPoll,
				description: "Poll the status of the server-side async job."}, true
		case httpx.StepAbort:
			return auxTitle{title: "Async Job -- Abort", typ: AuxAsyncAbort,
				description: "Abort the running server-side async job."}, true
		case httpx.StepDelete:
			return auxTitle{title: "Async Job -- Delete", typ: AuxAsyncDelete,
				description: "Delete the specified job from the list of Jobs."}, true
		}
	}
	return auxTitle{}, false
}

// pyTimedelta writes a duration of whole seconds as Python's str(timedelta) does:
// "0:15:00", "1:30:00", "1 day, 2:00:00", "3 days, 0:00:00".
func pyTimedelta(seconds float64) string {
	s := int64(math.Round(seconds))
	days, s := s/86400, s%86400
	text := fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
	switch {
	case days == 1:
		return "1 day, " + text
	case days > 1:
		return fmt.Sprintf("%d days, %s", days, text)
	}
	return text
}
