package ratelimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/acctapi/acctapi/internal/field"
)

// ActionType is the traffic-policy action type this package implements.
const ActionType = "rate-limit"

// AlgorithmSlidingWindow is the only algorithm the specification defines.
const AlgorithmSlidingWindow = "sliding_window"

// Limits of a [Config], from the specification.
const (
	MaxNameChars  = 1023 // a name has fewer than 1024 characters
	MinRate       = 60 * time.Second
	MaxRate       = 24 * time.Hour
	RateStep      = 10 * time.Second
	MaxBucketKeys = 10
)

// Config is the configuration of a rate-limit action, with the
// specification's JSON names. The zero value is not valid; see
// [Config.Validate].
type Config struct {
	// Name names the limit; required, fewer than 1024 characters.
	Name string `json:"name"`
	// Enforce, when false, evaluates and counts the limit without rejecting
	// requests; nil means true. See [Config.Enforced].
	Enforce *bool `json:"enforce,omitempty"`
	// Algorithm must be [AlgorithmSlidingWindow].
	Algorithm string `json:"algorithm"`
	// Capacity is the most requests a bucket admits per window: 1 to
	// 2,000,000,000.
	Capacity int64 `json:"capacity"`
	// Rate is the window, a Go duration ("60s", "10m", "1h30m") that is a
	// multiple of ten seconds from 60s to 24h.
	Rate string `json:"rate"`
	// BucketKey holds one to ten CEL expressions; each combination of their
	// values is one bucket.
	BucketKey []string `json:"bucket_key"`
}

// UnmarshalJSON decodes a rate-limit action's config as strictly as
// [NewPolicy] decodes one in a policy: a member Config lacks (a typing
// mistake such as "enfroce", which would leave a dry run enforcing) is an
// error naming the closest member, and a value of the wrong kind one
// saying what was wanted, each a [*acctapi.FieldError] on its JSON path;
// a member given twice is an error naming it. It does not validate the
// values: see [Config.Validate].
func (c *Config) UnmarshalJSON(b []byte) error { return decodeStrict(b, c) }

// decodeStrict decodes b, one JSON value, into *dst with decodeValue
// (which calls no UnmarshalJSON), after refusing a member given twice. A
// value with errors leaves *dst as it was, and so does JSON null, as
// encoding/json leaves a value.
func decodeStrict[T any](b []byte, dst *T) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if err := duplicateMember(b); err != nil {
		return field.Invalid("", "%v", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	var out T
	if err := decodeValue("", v, &out); err != nil {
		return err
	}
	*dst = out
	return nil
}

// Enforced reports whether the limit rejects requests: Enforce, or true
// when Enforce is nil.
func (c *Config) Enforced() bool { return c.Enforce == nil || *c.Enforce }

// Window returns Rate parsed, or an error if it is not a valid rate.
func (c *Config) Window() (time.Duration, error) {
	d, err := time.ParseDuration(c.Rate)
	switch {
	case c.Rate == "":
		return 0, errors.New("is required")
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration such as \"60s\" or \"10m\"", c.Rate)
	case d%RateStep != 0:
		return 0, fmt.Errorf("%q is not a multiple of 10s", c.Rate)
	case d < MinRate || d > MaxRate:
		return 0, fmt.Errorf("%q is not from 60s to 24h", c.Rate)
	}
	return d, nil
}

// Validate checks every rule of the specification and returns the broken
// ones joined, each an [*field.Error] naming its JSON field
// ("bucket_key[2]"); nil when c is valid. Bucket keys are compiled in the
// package's CEL environment; a key may use any Traffic Policy variable,
// including those [NewLimit] accepts only with a provider option.
func (c *Config) Validate() error {
	_, err := c.compile(nil)
	return err
}

// compile validates c and compiles its bucket keys; prov are the
// providers they may use (nil: any).
func (c *Config) compile(prov *providers) ([]keyProgram, error) {
	var errs []error
	switch n := utf8.RuneCountInString(c.Name); {
	case c.Name == "":
		errs = append(errs, field.Invalid("name", "is required"))
	case n > MaxNameChars:
		errs = append(errs, field.Invalid("name", "has %d characters; must be fewer than 1024", n))
	}
	switch c.Algorithm {
	case AlgorithmSlidingWindow:
	case "":
		errs = append(errs, field.Invalid("algorithm", "is required; the only algorithm is %q", AlgorithmSlidingWindow))
	default:
		errs = append(errs, field.Invalid("algorithm", "%q is not supported; the only algorithm is %q", c.Algorithm, AlgorithmSlidingWindow))
	}
	if c.Capacity < 1 || c.Capacity > MaxCapacity {
		errs = append(errs, field.Invalid("capacity", "%d is not from 1 to 2000000000", c.Capacity))
	}
	if _, err := c.Window(); err != nil {
		errs = append(errs, field.Invalid("rate", "%s", err))
	}
	var keys []keyProgram
	switch n := len(c.BucketKey); {
	case n == 0:
		errs = append(errs, field.Invalid("bucket_key", "is required: give 1 to 10 expressions"))
	case n > MaxBucketKeys:
		errs = append(errs, field.Invalid("bucket_key", "has %d expressions; at most 10 allowed", n))
	default:
		for i, expr := range c.BucketKey {
			k, err := compileKey(expr, prov)
			if err != nil {
				errs = append(errs, field.Invalid(fmt.Sprintf("bucket_key[%d]", i), "%s", err))
				continue
			}
			keys = append(keys, k)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return keys, nil
}

// Action is the rate-limit action as it appears in a traffic policy:
// {"type": "rate-limit", "config": {...}}.
type Action struct {
	// Type is "rate-limit" ([ActionType]).
	Type string `json:"type"`
	// Config is the action's configuration.
	Config Config `json:"config"`
}

// UnmarshalJSON decodes an action as strictly as [Config.UnmarshalJSON]
// decodes its config: a member Action lacks is an error naming the
// closest one, and the config's own errors are named "config.<field>".
func (a *Action) UnmarshalJSON(b []byte) error { return decodeStrict(b, a) }

// Validate checks that Type is [ActionType] and validates Config; field
// errors in the config are named "config.<field>".
func (a *Action) Validate() error {
	var errs []error
	if a.Type != ActionType {
		errs = append(errs, field.Invalid("type", "%q is not %q", a.Type, ActionType))
	}
	if err := a.Config.Validate(); err != nil {
		errs = append(errs, field.Prefix("config", err))
	}
	return errors.Join(errs...)
}
