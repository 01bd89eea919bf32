package fake

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

// apiError is an error the fake answers with: a status and the contract's
// error body. Handlers return it; the pipeline writes it.
type apiError struct {
	status int
	code   string
	msg    string
	field  string
	header http.Header
	// fields are the broken rules of a validation error, from which msg
	// is made (see fromValidation), so that it can be made again with the
	// paths of another dialect (see apiError.in).
	fields []*acctapi.FieldError
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func notFound(id string) *apiError {
	return errorf(http.StatusNotFound, acctapi.CodeNotFound, "Resource %q not found.", truncate(id, 128))
}

// fromValidation turns the error of a domain package's Validate into a 400
// naming the first broken rule. The message lists the broken rules, the
// first ten of them, each cut to a bounded length: a reason may quote the
// value it refuses.
func fromValidation(err error) *apiError {
	fes := acctapi.FieldErrors(err)
	if len(fes) == 0 {
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidValue, "%s", truncate(err.Error(), 256))
	}
	e := &apiError{status: http.StatusBadRequest, code: fes[0].Code, field: truncate(fes[0].Field, 128), fields: fes}
	if e.code == "" {
		e.code = acctapi.CodeInvalidValue
	}
	e.msg = validationMessage(fes, acctapi.DialectSpec)
	return e
}

// validationMessage lists broken rules, the first ten of them, each field
// path written in dialect d and each part cut to a bounded length.
func validationMessage(fes []*acctapi.FieldError, d acctapi.Dialect) string {
	var b strings.Builder
	for i, fe := range fes {
		if i == 10 {
			fmt.Fprintf(&b, "; and %d more", len(fes)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		reason := events.TranslateReason(fe.Field, fe.Reason, d) // "exactly one of …, datadog, azure_logs_ingestion"
		b.WriteString(truncate(events.TranslateField(fe.Field, d), 128) + ": " + truncate(reason, 256))
	}
	return b.String()
}

// bodyWithoutOperation is body for an error outside a request (Seed,
// DecodeBody's callers): no operation, so no operation_id.
func (e *apiError) bodyWithoutOperation() *acctapi.Error {
	out := e.body("")
	delete(out.Details, "operation_id")
	return out
}

// body returns the contract's error body for e.
func (e *apiError) body(opID string) *acctapi.Error {
	d := map[string]string{"operation_id": opID}
	if e.field != "" {
		d["field"] = e.field
	}
	return &acctapi.Error{StatusCode: e.status, Msg: e.msg, ErrorCode: e.code, Details: d}
}
