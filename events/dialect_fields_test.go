package events_test

import (
	"errors"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
)

// TestFieldNamesInTheClientsDialect pins a review's finding: a client of
// the real service's dialect named the field of an error found before
// sending in the specification's dialect
// (target.kinesis.auth.creds.cloud_secret_access_key), and the same error
// from the server in its own (aws_secret_access_key), so a test matching
// on FieldError.Field passed or failed by where the check ran. Both now
// name it in the client's dialect.
func TestFieldNamesInTheClientsDialect(t *testing.T) {
	t.Parallel()
	srv := fake.Start(t)
	bad := &events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{
		StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s",
		Auth:      &events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKIA"}},
	}}}
	for _, tt := range []struct {
		dialect acctapi.Dialect
		want    string
	}{
		{acctapi.DialectReal, "target.kinesis.auth.creds.aws_secret_access_key"},
		{acctapi.DialectSpec, "target.kinesis.auth.creds.cloud_secret_access_key"},
	} {
		for _, validate := range []bool{true, false} {
			opts := []acctapi.Option{acctapi.WithDialect(tt.dialect)}
			if !validate {
				opts = append(opts, acctapi.WithoutValidation())
			}
			_, err := events.NewDestinations(srv.Client(opts...)).Create(t.Context(), bad)
			var got string
			if fes := acctapi.FieldErrors(err); len(fes) == 1 {
				got = fes[0].Field // found in the client
			} else if e, ok := errors.AsType[*acctapi.Error](err); ok {
				got = e.Details["field"] // the server's answer
			}
			if got != tt.want {
				t.Errorf("%v, validating in the client %t: %v; want one error on %s", tt.dialect, validate, err, tt.want)
			}
		}
	}
}
