// Package demoapi is the built-in demo API of connector: a fictional bookshop
// that offers every authentication method and pagination style of the
// builder, so definitions can be tried offline (connector demo-api) and
// end-to-end tests can run against real HTTP (httptest.NewServer(Handler(...))).
//
// # Data
//
// Two collections, books and authors, of Options.Records records each
// (default 250). Record n has "id": n and is generated from n alone (see
// Book and Author), so outputs can be asserted exactly. Keys are served in a
// fixed order, without HTML escaping. Books carry a 20-digit "global_id"
// (12345678901234567890 for book 1), a price written with trailing zeros
// ("price":9.10) and a "blurb" containing <html>, & and quotes, to check that
// a client copies records byte for byte.
//
// # Data endpoints
//
//	GET|POST /v1/{area}/{collection}[/{pagination}]
//
// The area selects the authentication, the pagination segment the paging
// style (offset when absent). Wrong, missing or expired credentials give 401
// with {"error": "unauthorized"|"token_expired", "message": "..."}.
//
//	area                credential
//	public              none
//	basic               Basic demo:demo-password, or reader with an empty password
//	bearer              Authorization: Bearer demo-bearer-token
//	apikey-header       X-API-Key: demo-api-key
//	apikey-query        ?api_key=demo-api-key
//	apikey-form         POST form body field api_key=demo-api-key
//	apikey-json         POST JSON body {"api_key": "demo-api-key"}
//	apikey-json-nested  POST JSON body {"auth": {"key": "demo-api-key"}}
//	oauth               Authorization: Bearer <access token from a token endpoint>
//	session             session token from /auth/login in X-Session-Token,
//	                    ?session_token= or Authorization: Bearer
//
// Pagination styles (limit and per_page default to 25, 1..100; other values
// are 400; every page ends when the collection does):
//
//	offset           offset (0), limit           {"data":[...],"meta":{"offset","limit","total"}}
//	pages            page (from 1), per_page     {"data":[...],"meta":{"page","per_page","total_pages"}}
//	pages-from-zero  page (from 0), per_page     same body as pages
//	cursor           cursor, limit               {"data":[...],"meta":{"next_cursor":"..."|null,"has_more":bool}}
//	cursor-header    cursor, limit               {"data":[...]} + X-Next-Cursor header (absent on the last page)
//	link             page (from 1), per_page     top-level array + Link: <absolute>; rel="next", <...>; rel="last"
//	link-relative    page (from 1), per_page     same with relative references (</v1/...>)
//	next-url         offset, limit               {"data":[...],"next":"http://host/...?offset=..&limit=.."|null}
//	after            starting_after (id), limit  {"object":"list","data":[...],"has_more":bool}
//	array            offset, limit               top-level array
//	range            range=<offset>,<limit>      {"data":[...]} (for custom injection)
//	repeat-cursor    cursor, limit               like cursor but next_cursor never changes (a broken API)
//
// Every pagination parameter is read from the query string, from a POST body
// (form field or top-level JSON property) or from a header (X-Offset,
// X-Limit, X-Page, X-Per-Page, X-Cursor, X-Starting-After, X-Range). The
// same parameter given twice with different values is a 400.
//
// # Parent and child
//
//	GET|POST /v1/{area}/authors/{id}/books[/{pagination}]
//	GET|POST /v1/{area}/books[/{pagination}]?author_id={id}   (also a body property or X-Author-Id)
//
// The books of one author (book n's author is (3n mod 50) + 1: with 250 books, authors 1 to 50
// have 5 each, the others none), paginated in any style, for partition routers. An author
// beyond the collection is a 404.
//
// # Time-filtered collections, for incremental reads
//
//	GET|POST /v1/{area}/events[/{pagination}]?since=S&until=U
//	GET|POST /v1/{area}/authors/{id}/reviews[/{pagination}]?since=S&until=U   (or reviews?author_id={id})
//
// events and reviews have Options.Events records (default 500) with an "updated_at" that
// does not follow the clock: event n is at 2024-01-01T00:00:00Z + (n-1) × 17h34m05s (500
// events fill 2024), review n three hours later, about author (n-1 mod 50) + 1. since and
// until (query, body property, or X-Since / X-Until; format 2006-01-02T15:04:05Z, UTC) keep
// the records with since <= updated_at <= until, then the page is cut in any pagination
// style. since after until, or another format, is a 400. books and authors ignore them.
//
// # Report jobs, for AsyncRetriever
//
//	POST   /v1/{area}/jobs                  {"country": "SE"} (also "polls": N, "fail": true) → 201
//	GET    /v1/{area}/jobs/{id}             {"id","status","country"}, and "rows", "files" when ready
//	GET    /v1/{area}/jobs/{id}/files/{n}   file n (from 1) of a ready job: JSON lines, 25 rows each
//	DELETE /v1/{area}/jobs/{id}             204 (or POST /v1/{area}/jobs/{id}/delete)
//
// A job reports "processing" until its polls-th poll (default 2, 1..10), which answers "ready"
// with the absolute URLs of its files, or "failed" when it was created with "fail": true. The
// answers depend on the number of polls only, never on the clock. The rows are the authors of the
// country (one of NG, SE, FR, JP, PT, CZ, LB; ReportRows lists them: 36 each for SE and JP with
// 250 records). Parameters come as for the data endpoints (JSON or form body, query). A job
// belongs to its area, whose authentication every request needs; a deleted or unknown job is a
// 404, the files of a job not ready a 409. Server.Jobs counts the jobs created, polls, deletions
// and the most jobs processing at once.
//
// # Token endpoints
//
//	POST /oauth/token           grant_type refresh_token (demo-refresh-token, reusable) or
//	                            client_credentials; {"access_token","token_type","expires_in","refresh_token"}
//	POST /oauth/rotating/token  refresh_token only; single-use rotating refresh tokens starting
//	                            with demo-rotating-refresh-token; reuse is 400 invalid_grant
//	POST /oauth/dated/token     like /oauth/token but "expires_at":"2006-01-02T15:04:05Z" (UTC)
//	                            instead of expires_in
//
// Bodies are JSON (the SPEC default; "scopes" is an array) or form-encoded
// ("scopes" repeated, or "scope" space-separated). Client credentials are
// demo-client / demo-client-secret, in the body or as Basic auth; wrong ones
// are 401 invalid_client. Access tokens live Options.AccessTokenTTL.
//
// # Session login
//
//	POST /auth/login  JSON or form body {"username":"demo","password":"demo-password"}
//	GET  /auth/login  Basic demo:demo-password
//
// Both answer {"data":{"session":{"token":"...","expires_in":1800}}}; the
// token lives Options.SessionTTL.
//
// # Error helpers (no auth)
//
//	/v1/errors/status/{code}              that status with a JSON error body
//	/v1/errors/not-json                   200 with an HTML body
//	/v1/errors/flaky?key=K&failures=N     N failures (status=, default 503) for key K, then 200
//
// All accept retry_after=V to send Retry-After: V on the failure.
//
// Server adds Stats and TokenRequests for tests. README.md in this directory
// has the same reference as a table.
package demoapi
