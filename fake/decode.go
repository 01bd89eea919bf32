package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/acctapi/acctapi"
)

// decode reads a JSON request body into v strictly: unknown members,
// members of the wrong type and trailing data are errors with the
// contract's codes.
func decode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body has data after its JSON value.")
		}
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body is not valid JSON.")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return errorf(http.StatusBadRequest, acctapi.CodeInvalidValue, "The request body must be a JSON object.")
		}
		return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: field,
			msg: "The value of " + field + " must be a JSON " + jsonKind(typ.Type.Kind().String()) + "."}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownField, field: truncate(name, 64),
			msg: "The request member " + truncate(name, 64) + " is unknown."}
	}
	return errorf(http.StatusBadRequest, acctapi.CodeInvalidValue, "The request body has an invalid value: %s.", truncate(err.Error(), 200))
}

// jsonKind names a Go kind as a JSON type.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "number"
	case k == "bool":
		return "boolean"
	case k == "slice" || k == "array":
		return "array"
	case k == "map" || k == "struct" || k == "ptr":
		return "object"
	}
	return k
}
