package acctapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestErrorDecoding(t *testing.T) {
	t.Parallel()
	longHTML := "<html>" + strings.Repeat("é", 150) + "</html>" // 313 bytes
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   *Error
	}{
		{
			name:   "JSON error body",
			status: http.StatusNotFound,
			body:   `{"status_code":404,"msg":"service user not found","error_code":"ERR_ACCTAPI_NOT_FOUND","details":{"operation_id":"op_123","field":"id"}}`,
			want: &Error{StatusCode: 404, Msg: "service user not found", ErrorCode: CodeNotFound,
				Details: map[string]string{"operation_id": "op_123", "field": "id"}},
		},
		{
			name:   "non-string details",
			status: http.StatusBadRequest,
			body:   `{"status_code":400,"msg":"bad","error_code":"ERR_NGROK_215","details":{"operation_id":"op_1","count":3,"ok":true,"nested":{"a":[1,"b"]},"none":null}}`,
			want: &Error{StatusCode: 400, Msg: "bad", ErrorCode: CodeInvalidValue, Details: map[string]string{
				"operation_id": "op_1", "count": "3", "ok": "true", "nested": `{"a":[1,"b"]}`, "none": "null",
			}},
		},
		{
			// details that are not an object keep msg and error_code (a
			// review saw the whole body taken as text).
			name:   "details not an object",
			status: http.StatusBadRequest,
			body:   `{"msg":"bad","error_code":"ERR_NGROK_215","details":"op_123"}`,
			want:   &Error{StatusCode: 400, Msg: "bad", ErrorCode: CodeInvalidValue},
		},
		{
			name:   "JSON without details",
			status: http.StatusConflict,
			body:   `{"status_code":409,"msg":"name taken","error_code":"ERR_NGROK_4112"}`,
			want:   &Error{StatusCode: 409, Msg: "name taken", ErrorCode: CodeNameTaken},
		},
		{
			name:   "HTTP status wins over the body's status_code",
			status: http.StatusForbidden,
			body:   `{"status_code":200,"msg":"inactive","error_code":"ERR_ACCTAPI_INACTIVE"}`,
			want:   &Error{StatusCode: 403, Msg: "inactive", ErrorCode: CodeInactivePrincipal},
		},
		{
			name:   "HTML body",
			status: http.StatusBadGateway,
			header: map[string]string{"Content-Type": "text/html"},
			body:   "\n<html><body><h1>502 Bad Gateway</h1></body></html>\n",
			want:   &Error{StatusCode: 502, Msg: "<html><body><h1>502 Bad Gateway</h1></body></html>"},
		},
		{
			name:   "long non-JSON body cut at a rune boundary",
			status: http.StatusInternalServerError,
			body:   longHTML,
			want:   &Error{StatusCode: 500, Msg: longHTML[:200] + "…"}, // "<html>" is 6 bytes, so byte 200 starts a rune
		},
		{
			name:   "long non-JSON body cut inside a rune",
			status: http.StatusInternalServerError,
			body:   "x" + longHTML,
			want:   &Error{StatusCode: 500, Msg: ("x" + longHTML)[:199] + "…"},
		},
		{
			name:   "JSON that is not an API error",
			status: http.StatusBadRequest,
			body:   `{"message":"nope"}`,
			want:   &Error{StatusCode: 400, Msg: `{"message":"nope"}`},
		},
		{
			name:   "empty body",
			status: http.StatusServiceUnavailable,
			want:   &Error{StatusCode: 503, Msg: "Service Unavailable"},
		},
		{
			// A member of the wrong type loses only itself (a review's
			// "status_code":"404" lost the code, and IsNotFound with it).
			name:   "status_code a string",
			status: http.StatusNotFound,
			body:   `{"status_code":"404","msg":"gone","error_code":"ERR_ACCTAPI_NOT_FOUND","details":{"operation_id":"op_1"}}`,
			want:   &Error{StatusCode: 404, Msg: "gone", ErrorCode: CodeNotFound, Details: map[string]string{"operation_id": "op_1"}},
		},
		{
			// Names in any letter case, as a struct decode matches them.
			name:   "members in other letter cases",
			status: http.StatusNotFound,
			body:   `{"Msg":"gone","Error_Code":"ERR_ACCTAPI_NOT_FOUND"}`,
			want:   &Error{StatusCode: 404, Msg: "gone", ErrorCode: CodeNotFound},
		},
		{
			name:   "details with control characters",
			status: http.StatusNotFound,
			body:   `{"msg":"gone","error_code":"ERR_ACCTAPI_NOT_FOUND","details":{"operation_id":"op_1\nforged\u001b[2J"}}`,
			want: &Error{StatusCode: 404, Msg: "gone", ErrorCode: CodeNotFound,
				Details: map[string]string{"operation_id": `op_1\nforged\x1b[2J`}},
		},
		{
			name:   "msg a number",
			status: http.StatusBadRequest,
			body:   `{"msg":7,"error_code":"ERR_NGROK_215"}`,
			want:   &Error{StatusCode: 400, ErrorCode: CodeInvalidValue},
		},
		{
			// A server's msg goes into logs: bounded, its control
			// characters escaped.
			name:   "msg long, with control characters",
			status: http.StatusBadRequest,
			body:   `{"msg":"a\nb\u001b[2J` + strings.Repeat("x", 5000) + `","error_code":"ERR_NGROK_215\r"}`,
			want:   &Error{StatusCode: 400, Msg: `a\nb\x1b[2J` + strings.Repeat("x", 4096-11) + "…", ErrorCode: `ERR_NGROK_215\r`},
		},
		{
			name:   "blank body",
			status: http.StatusUnauthorized,
			body:   " \n",
			want:   &Error{StatusCode: 401, Msg: "Unauthorized"},
		},
		{
			name:   "operation id from a header",
			status: http.StatusInternalServerError,
			header: map[string]string{"Operation-Id": "op_hdr"},
			want:   &Error{StatusCode: 500, Msg: "Internal Server Error", Details: map[string]string{"operation_id": "op_hdr"}},
		},
		{
			name:   "operation id from the real service's header",
			status: http.StatusBadGateway,
			header: map[string]string{"Ngrok-Operation-Id": "op_real"},
			want:   &Error{StatusCode: 502, Msg: "Bad Gateway", Details: map[string]string{"operation_id": "op_real"}},
		},
		{
			name:   "operation id in the body wins over the header",
			status: http.StatusNotFound,
			header: map[string]string{"Operation-Id": "op_hdr"},
			body:   `{"msg":"gone","error_code":"ERR_ACCTAPI_NOT_FOUND","details":{"operation_id":"op_body"}}`,
			want:   &Error{StatusCode: 404, Msg: "gone", ErrorCode: CodeNotFound, Details: map[string]string{"operation_id": "op_body"}},
		},
		{
			name:   "rate limited with Retry-After",
			status: http.StatusTooManyRequests,
			header: map[string]string{"Retry-After": "7"},
			body:   `{"status_code":429,"msg":"slow down","error_code":"ERR_NGROK_226","details":{"operation_id":"op_9"}}`,
			want: &Error{StatusCode: 429, Msg: "slow down", ErrorCode: CodeRateLimited,
				Details: map[string]string{"operation_id": "op_9"}, RetryAfter: 7 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			err := c.Do(t.Context(), http.MethodGet, "/things/x", nil, nil, &request{})
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Do = %v (%T), want an *Error", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decoded error (-want +got):\n%s", diff)
			}
			if !utf8.ValidString(got.Msg) {
				t.Errorf("Msg %q is not valid UTF-8", got.Msg)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{
			name: "code and operation",
			err:  &Error{StatusCode: 404, Msg: "not found", ErrorCode: CodeNotFound, Details: map[string]string{"operation_id": "op_1"}},
			want: "acctapi: HTTP 404: not found [ERR_ACCTAPI_NOT_FOUND] (operation op_1)",
		},
		{
			name: "code only",
			err:  &Error{StatusCode: 400, Msg: "bad limit", ErrorCode: CodeBadLimit},
			want: "acctapi: HTTP 400: bad limit [ERR_NGROK_233]",
		},
		{
			name: "operation only",
			err:  &Error{StatusCode: 500, Msg: "Internal Server Error", Details: map[string]string{"operation_id": "op_2"}},
			want: "acctapi: HTTP 500: Internal Server Error (operation op_2)",
		},
		{
			name: "status only",
			err:  &Error{StatusCode: 502, Msg: "Bad Gateway"},
			want: "acctapi: HTTP 502: Bad Gateway",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDetailsAccessors checks OperationID and Field: the member of
// Details each reads, and "" without details.
func TestDetailsAccessors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, member string
		read         func(*Error) string
	}{
		{"OperationID", "operation_id", (*Error).OperationID},
		{"Field", "field", (*Error).Field},
	} {
		if got := tt.read(&Error{}); got != "" {
			t.Errorf("%s() of an Error without details = %q, want empty", tt.name, got)
		}
		if got := tt.read(&Error{Details: map[string]string{tt.member: "v_1", "other": "x"}}); got != "v_1" {
			t.Errorf("%s() = %q, want v_1", tt.name, got)
		}
	}
}

func TestErrorHelpers(t *testing.T) {
	t.Parallel()
	notFound := &Error{StatusCode: 404, Msg: "not found", ErrorCode: CodeNotFound}
	limited := &Error{StatusCode: 429, Msg: "slow down", ErrorCode: CodeRateLimited, RetryAfter: 3 * time.Second}
	limitedNoDelay := &Error{StatusCode: 429, Msg: "slow down", ErrorCode: CodeRateLimited}
	internal := &Error{StatusCode: 500, Msg: "oops", ErrorCode: CodeInternal}
	fieldErr := &FieldError{Field: "limit", Code: CodeBadLimit, Reason: "too big"}

	type result struct {
		NotFound    bool
		HasCode     bool
		RateLimited bool
		RetryAfter  time.Duration
	}
	tests := []struct {
		name  string
		err   error
		codes []string
		want  result
	}{
		{name: "nil", err: nil, codes: []string{CodeNotFound}},
		{name: "plain error", err: errors.New("boom"), codes: []string{CodeNotFound}},
		{name: "not found", err: notFound, codes: []string{CodeNotFound},
			want: result{NotFound: true, HasCode: true}},
		{name: "not found wrapped", err: fmt.Errorf("get thing: %w", notFound), codes: []string{CodeNotFound},
			want: result{NotFound: true, HasCode: true}},
		{name: "not found wrapped twice", err: fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", notFound)),
			codes: []string{CodeInternal, CodeNotFound}, want: result{NotFound: true, HasCode: true}},
		{name: "not found joined", err: errors.Join(errors.New("other"), notFound), codes: []string{CodeNotFound},
			want: result{NotFound: true, HasCode: true}},
		{name: "other code", err: fmt.Errorf("x: %w", notFound), codes: []string{CodeInternal},
			want: result{NotFound: true}},
		{name: "500", err: fmt.Errorf("x: %w", internal), codes: []string{CodeInternal},
			want: result{HasCode: true}},
		{name: "rate limited wrapped", err: fmt.Errorf("list: %w", limited), codes: []string{CodeRateLimited},
			want: result{HasCode: true, RateLimited: true, RetryAfter: 3 * time.Second}},
		{name: "rate limited without delay", err: limitedNoDelay,
			want: result{RateLimited: true}},
		{name: "field error code", err: fmt.Errorf("page: %w", errors.Join(&FieldError{Field: "name", Reason: "bad", Code: CodeInvalidValue}, fieldErr)),
			codes: []string{CodeBadLimit}, want: result{HasCode: true}},
		{name: "field error other code", err: fieldErr, codes: []string{CodeBadFilter}},
		// A 404 for a path that is not the API's (a wrong base URL) is not
		// "not found": code reading that as "already deleted" would pass.
		{name: "no route", err: fmt.Errorf("x: %w", &Error{StatusCode: 404, Msg: "No API path /v2/x.", ErrorCode: CodeNoRoute}),
			codes: []string{CodeNoRoute}, want: result{HasCode: true}},
		{name: "real service's unknown path", err: &Error{StatusCode: 404, Msg: "Not Found", Details: map[string]string{"path": "/v2/x"}}},
		{name: "real service's missing resource", err: &Error{StatusCode: 404, Msg: "Resource not found", Details: map[string]string{"operation_id": "op_1"}},
			want: result{NotFound: true}},
		// Neither an error code nor an operation id: not the API's answer
		// (a proxy's page, Go's "404 page not found"), so "already
		// deleted" code must not take it for success.
		{name: "404 without a body", err: &Error{StatusCode: 404, Msg: "Not Found"}},
		{name: "Go's 404 page", err: &Error{StatusCode: 404, Msg: "404 page not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got result
			got.NotFound = IsNotFound(tt.err)
			if len(tt.codes) > 0 {
				got.HasCode = HasCode(tt.err, tt.codes...)
			}
			got.RetryAfter, got.RateLimited = IsRateLimited(tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("helpers (-want +got):\n%s", diff)
			}
		})
	}
	// No code asked would always report false, which a check that an
	// error is not one of them passes (a misuse review).
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "no error code given") {
			t.Errorf("HasCode(err) with no code: panic %v; want one saying no code was given", p)
		}
	}()
	HasCode(notFound)
}
