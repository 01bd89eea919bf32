// Package baseurl checks the base URL of the API, as the SDK's client and
// the fake's public URL take it: one rule, written once.
package baseurl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// IsAbsolute reports whether s begins with the http or https scheme, in
// any letter case (as URLs may write it): an absolute URL of the API, not
// a path.
func IsAbsolute(s string) bool {
	return len(s) >= 7 && strings.EqualFold(s[:7], "http://") || len(s) >= 8 && strings.EqualFold(s[:8], "https://")
}

// Parse returns raw as a base URL: an absolute http or https URL without
// user information, query or fragment, with its trailing slashes dropped
// (an escaped one, "%2F", is kept). Its errors start with prefix ("acctapi:
// base URL") and never show a password.
func Parse(prefix, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL itself may hold a password
		}
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	if u.User != nil {
		// Credentials go in the Authorization header, never in URLs.
		return nil, fmt.Errorf("%s %s: must not carry user information", prefix, u.Redacted())
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("%s %q: want an absolute http or https URL", prefix, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, fmt.Errorf("%s %q: must not have a query or fragment", prefix, raw)
	}
	if u.RawPath == "" {
		u.Path = strings.TrimRight(u.Path, "/")
	} else if trimmed := strings.TrimRight(u.RawPath, "/"); trimmed != u.RawPath {
		// Trim only real slashes: "/a%2F" keeps its escaped one.
		u.RawPath = trimmed
		u.Path, _ = url.PathUnescape(trimmed) // Parse unescaped it whole
	}
	return u, nil
}
