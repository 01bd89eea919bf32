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
	// Msg is the human-readable message.
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

// IsNotFound reports whether err, or any error it wraps, is an [*Error] with
// status 404.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusNotFound
}

// HasCode reports whether err, or any error it wraps, is an [*Error] with one
// of the given error codes, or a [*FieldError] with one of them.
func HasCode(err error, codes ...string) bool {
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
