package acctapi

import (
	"fmt"
	"net/url"
	"strings"
)

// Dialect is a wire dialect of the API: the names some members and
// headers have on the wire. The specification and the real service at
// [DefaultBaseURL] describe one model, but name a few things differently;
// the Go API uses the specification's names in both dialects, and a
// [Client] translates at the wire.
//
// What differs: the event targets (package events: the specification's
// monitoring {api_key, tags, service, site} and cloud_logs_ingestion are
// the real service's datadog {api_key, ddtags, service, ddsite} and
// azure_logs_ingestion; the cloud credentials cloud_access_key_id and
// cloud_secret_access_key are aws_access_key_id and aws_secret_access_key),
// and the version header (see [WithDialect]). The zero value is
// [DialectSpec].
type Dialect uint8

const (
	// DialectSpec is the specification's dialect, which the fake speaks by
	// default.
	DialectSpec Dialect = iota
	// DialectReal is the dialect of the real service at [DefaultBaseURL].
	DialectReal
)

// String returns "spec" or "real".
func (d Dialect) String() string {
	switch d {
	case DialectSpec:
		return "spec"
	case DialectReal:
		return "real"
	}
	return fmt.Sprintf("Dialect(%d)", uint8(d))
}

// WithDialect sets the wire dialect the client speaks: how it names event
// targets in request bodies, and which version header it sends.
//
// In [DialectSpec] the client sends both Service-Version: 2, the header the
// specification names, and Ngrok-Version: 2, the real service's, so that
// either kind of server accepts it. In [DialectReal] it sends only
// Ngrok-Version: 2, as the real service's own clients do: a server that
// speaks both dialects (the fake does) tells the real service's clients by
// that header, and answers them in their dialect. Responses are understood
// in either dialect whatever the client speaks.
//
// Without this option the dialect follows the base URL: [DialectReal] when
// it is the real service's origin (that of [DefaultBaseURL], the default),
// since that server knows only its own names, and [DialectSpec] for any
// other (a fake, a proxy, another implementation of the specification).
// Say WithDialect(DialectReal) for the real service behind another URL.
func WithDialect(d Dialect) Option {
	return func(c *Client) error {
		if d != DialectSpec && d != DialectReal {
			return fmt.Errorf("acctapi: WithDialect: unknown dialect %v", d)
		}
		c.dialect, c.dialectSet = d, true
		return nil
	}
}

// Dialect returns the wire dialect the client speaks; see [WithDialect].
// A caller of [Client.Do] with an event destination body encodes it in this
// dialect (package events has the translation).
func (c *Client) Dialect() Dialect { return c.dialect }

// defaultDialect is the dialect of a client built without WithDialect.
func defaultDialect(base *url.URL) Dialect {
	real, _ := url.Parse(DefaultBaseURL)
	if base.Scheme == real.Scheme && strings.EqualFold(base.Hostname(), real.Hostname()) && (base.Port() == "" || base.Port() == "443") {
		return DialectReal
	}
	return DialectSpec
}
