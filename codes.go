package acctapi

import "github.com/acctapi/acctapi/internal/field"

// The error codes of the API, in one place. The client and the fake share
// them: the fake answers with these codes, and [HasCode] matches them.
//
// Codes named ERR_NGROK_<n> are the real service's; codes named
// ERR_ACCTAPI_<name> are this project's own, for conditions where the real
// service's catalogue has none (see the contract's §2).
const (
	CodeNoAuthorization    = "ERR_NGROK_200"                 // 401: no Authorization header
	CodeBadAuthorization   = "ERR_NGROK_201"                 // 401: Authorization is not "Bearer <token>"
	CodeInvalidToken       = "ERR_NGROK_203"                 // 401: token unknown, or its API key deleted
	CodeInactivePrincipal  = "ERR_ACCTAPI_INACTIVE"          // 403: the key's service user is inactive
	CodeNoVersion          = "ERR_NGROK_218"                 // 400: no version header (Service-Version, or Ngrok-Version)
	CodeBadVersion         = "ERR_NGROK_217"                 // 400: a version other than 2
	CodeBadContentType     = "ERR_NGROK_210"                 // 415: body sent with a non-JSON Content-Type
	CodeNoContentType      = "ERR_NGROK_216"                 // 415: body sent without a Content-Type
	CodeBodyNotExpected    = "ERR_NGROK_211"                 // 400: a body on a method that takes none (GET, DELETE)
	CodeBodyTooLarge       = "ERR_NGROK_212"                 // 413: body over 1 MiB
	CodeInvalidJSON        = field.CodeInvalidJSON           // 400: body is not valid JSON
	CodeUnknownField       = "ERR_NGROK_214"                 // 400: unknown member in a body
	CodeInvalidValue       = field.CodeInvalidValue          // 400: wrong JSON type or invalid value
	CodeDescriptionTooLong = field.CodeDescriptionTooLong    // 400: description over 255 bytes
	CodeMetadataTooLong    = field.CodeMetadataTooLong       // 400: metadata over 4096 bytes
	CodeBadQuery           = "ERR_NGROK_230"                 // 400: the query string could not be parsed
	CodeUnknownQueryParam  = "ERR_NGROK_231"                 // 400: unknown query parameter
	CodeRepeatedQueryParam = "ERR_NGROK_232"                 // 400: query parameter given twice
	CodeBadLimit           = field.CodeBadLimit              // 400: limit not an integer from 1 to 100
	CodeBadFilter          = field.CodeBadFilter             // 400: filter not valid for the resource
	CodeNotFound           = "ERR_ACCTAPI_NOT_FOUND"         // 404: no such resource in the account
	CodeNoRoute            = "ERR_ACCTAPI_NO_ROUTE"          // 404: unknown path
	CodeMethodNotAllowed   = "ERR_ACCTAPI_METHOD"            // 405: known path, method not served
	CodeNameTaken          = "ERR_NGROK_4112"                // 409: service user name taken
	CodeSourceTypeTaken    = "ERR_NGROK_5127"                // 409: event source type already on the subscription
	CodeStillReferenced    = "ERR_NGROK_6502"                // 409: resource still referenced elsewhere
	CodeUnknownBackend     = "ERR_NGROK_6501"                // 400: failover references a missing backend
	CodeLabelCountLimit    = "ERR_NGROK_6508"                // 400: more labels than backends.MaxLabels
	CodeUnknownDestination = "ERR_NGROK_5103"                // 400: subscription references a missing destination
	CodeNameRequired       = "ERR_NGROK_4109"                // 400: service user name empty
	CodeNameTooLong        = "ERR_NGROK_4110"                // 400: service user name over account.MaxNameBytes
	CodeBadFormat          = "ERR_NGROK_235"                 // 400: event destination format missing or other than JSON
	CodeNoTarget           = "ERR_NGROK_5100"                // 400: event destination target sets no kind
	CodeManyTargets        = "ERR_NGROK_5115"                // 400: event destination target sets more than one kind
	CodeNoAuthField        = "ERR_NGROK_5106"                // 400: cloud target without auth
	CodeNoAuth             = "ERR_NGROK_5107"                // 400: target auth sets neither role nor creds
	CodeManyAuths          = "ERR_NGROK_5116"                // 400: target auth sets both role and creds
	CodeBadRoleARN         = "ERR_NGROK_5104"                // 400: target auth role_arn not an IAM role ARN
	CodeNoAPIKey           = "ERR_NGROK_5133"                // 400: monitoring (datadog) target without api_key
	CodeBadEventType       = "ERR_NGROK_238"                 // 400: event source type not a known event type
	CodeRateLimited        = "ERR_NGROK_226"                 // 429: management API rate limit exceeded
	CodeResourceLimit      = "ERR_ACCTAPI_RESOURCE_LIMIT"    // 409: the account stores as many resources as the server allows
	CodeHeadersTooLarge    = "ERR_ACCTAPI_HEADERS_TOO_LARGE" // 431: request line and headers over the server's limit (acctfake's -max-header-bytes)
	CodeMalformedRequest   = "ERR_ACCTAPI_MALFORMED_REQUEST" // 400, 501 or 505: the request could not be read as HTTP/1.1 (a malformed request line, header or path escape; a Host that is not a host with an optional port)
	CodeInternal           = "ERR_ACCTAPI_INTERNAL"          // 500: anything unexpected
	CodeUnavailable        = "ERR_ACCTAPI_UNAVAILABLE"       // 503: service unavailable (fault injection, timeout, shutdown)
)
