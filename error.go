package acctapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Error is an error response from the API: every status of 400 and above
// becomes an *Error, even when the body is empty or not JSON (then Msg
// describes the body and ErrorCode is empty).
//
// Match it with [errors.As], or with the helpers [IsNotFound], [HasCode] and
// [IsRateLimited], which see through wrapping.
type Error struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int `json:"status_code"`
	// Msg is the human-readable message: as the server sent it, cut to
	// 4 KiB, with control characters escaped as Go writes them (\n, \x1b),
	// since it goes into logs. Details' keys and values are cut to 200
	// bytes and escaped alike.
	Msg string `json:"msg"`
	// ErrorCode is the machine-readable code, such as "ERR_NGROK_203"; the
	// constants named Code* list them.
	ErrorCode string `json:"error_code"`
	// Details holds further members, such as "operation_id" and "field".
	Details map[string]string `json:"details"`
	// RetryAfter is the delay the server asked for in a Retry-After header,
	// or zero.
	RetryAfter time.Duration `json:"-"`
}

// OperationID returns the operation id from Details, or "".
func (e *Error) OperationID() string { return e.Details["operation_id"] }

// Field returns the JSON path of the request member the server refused,
// from Details ("name", "target.s3.bucket_arn", "filter"), or "". A
// [FieldError] is the client's own refusal of the same member, before
// sending.
func (e *Error) Field() string { return e.Details["field"] }

// Error returns "acctapi: HTTP <status>: <msg> [<code>] (operation <id>)".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "acctapi: HTTP %d: %s", e.StatusCode, e.Msg)
	if e.ErrorCode != "" {
		fmt.Fprintf(&b, " [%s]", e.ErrorCode)
	}
	if id := e.OperationID(); id != "" {
		fmt.Fprintf(&b, " (operation %s)", id)
	}
	return b.String()
}

// ResponseTooLargeError is returned by [Client.Do], and so by every
// resource client, when a success response's body is longer than the
// client's limit ([WithMaxResponseBytes], by default
// [DefaultMaxResponseBytes]). The body is read no further than one byte
// past the limit. Match it with [errors.As].
type ResponseTooLargeError struct {
	// Method and Path are the request's method and URL path.
	Method, Path string
	// Limit is the client's limit, in bytes.
	Limit int64
}

// Error names the request and the limit.
func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("acctapi: %s %s response: body longer than %d bytes (see WithMaxResponseBytes)", e.Method, e.Path, e.Limit)
}

// ErrNoResource is wrapped by the error of a resource client's call whose
// success answer holds nothing of a resource or a list: no id, no uri, no
// list (the API sets them on every resource and list it answers with), or
// no JSON at all ([Client.Do]); and by the error of a DELETE ([Client.Do],
// and so every resource client's Delete) answered with anything below 400
// but 204 No Content, which the API answers every DELETE with. It tells a server that is not the API (a
// wrong base URL, a proxy's login page, 200 with {}, 204 to a GET) from one
// that answered; without it that answer would read as an empty resource, an
// empty list or a delete done.
var ErrNoResource = errors.New("acctapi: the answer holds no resource (no id, uri or list); is the base URL the API's?")

// ErrOtherPath is wrapped by the error a list's iterator (the List method
// of every resource client) yields when the server's next_page_uri names
// another path than the list's: by the API's contract the next page is the
// same path with another query, and another list's page would be decoded
// as this one's, its items lost without an error.
var ErrOtherPath = errors.New("acctapi: the next page is not the same list (next_page_uri names another path)")

// ErrPageLoop is the error a list's iterator (the List method of every
// resource client) yields, wrapped, when the server does not advance: its
// next_page_uri names a page the iterator has already fetched, or asks again
// for items before an id it already asked with, or it has sent more than 16
// pages in a row with no items that each name a next page (fewer are
// followed: a next page means a further item exists). Without it, such a
// server would keep the loop going forever. Match it with [errors.Is].
var ErrPageLoop = errors.New("acctapi: the server's next_page_uri does not advance")

// ErrPageTooLong is the error a page of a list (a resource client's Page,
// or its List iterator) wraps when the server answers more items than the
// limit the page asked for (the options' Limit, or a next page's limit;
// [MaxLimit] when it asked for none). The page is
// not decoded: an item of a few bytes ("{}") decodes into a whole struct,
// so that a page of many would hold a hundred times its size in memory.
// Match it with [errors.Is].
var ErrPageTooLong = errors.New("acctapi: the page holds more items than its limit")

// IsNotFound reports whether err, or any error it wraps, is an [*Error] with
// status 404 that says the resource does not exist. A 404 that says the
// path is not one of the API's is not "not found": the fake's
// [CodeNoRoute], the real service's answer to an unknown path (no error
// code, and a "path" detail where a missing resource has an operation id),
// or any 404 with neither an error code nor an operation id (a proxy's
// page, a server that is not the API).
// Such a 404 means a wrong base URL (one with an extra "/v2", say), which
// code that reads "not found" as "already deleted" must not take for
// success.
func IsNotFound(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusNotFound {
		return false
	}
	// The API's answers about a resource carry an operation id (and the
	// fake's an error code too); a 404 with neither, a proxy's page or
	// Go's "404 page not found", is not the API's.
	noRoute := e.ErrorCode == CodeNoRoute || e.ErrorCode == "" && e.OperationID() == ""
	return !noRoute
}

// HasCode reports whether err, or any error it wraps, is an [*Error] with one
// of the given error codes, or a [*FieldError] with one of them. It panics
// when given no code, which would always report false.
func HasCode(err error, codes ...string) bool {
	if len(codes) == 0 {
		panic("acctapi: HasCode: no error code given; it would always report false")
	}
	var e *Error
	if errors.As(err, &e) {
		for _, c := range codes {
			if e.ErrorCode == c {
				return true
			}
		}
	}
	for _, fe := range FieldErrors(err) {
		for _, c := range codes {
			if fe.Code == c {
				return true
			}
		}
	}
	return false
}

// IsRateLimited reports whether err, or any error it wraps, is an [*Error]
// with status 429, and returns the delay its Retry-After header asked for
// (zero when it gave none).
func IsRateLimited(err error) (retryAfter time.Duration, ok bool) {
	var e *Error
	if errors.As(err, &e) && e.StatusCode == http.StatusTooManyRequests {
		return e.RetryAfter, true
	}
	return 0, false
}
