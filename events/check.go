package events

import (
	"errors"
	"fmt"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/trunc"
)

// required reports an empty string member.
func required(path, v string) error {
	if v == "" {
		return field.Invalid(path, "is required")
	}
	return nil
}

// checkEventType reports a missing or unknown event type.
func checkEventType(path, t string) error {
	if !IsEventType(t) {
		return field.InvalidCode(acctapi.CodeBadEventType, path, "%q is not a known event type", trunc.String(t, 64))
	}
	return nil
}

// checkEach runs check on every element of list, naming each "field[i]",
// and reports an element equal to an earlier one.
func checkEach[T any, K comparable](path string, list []T, key func(T) K, check func(string, T) error) error {
	var errs []error
	seen := make(map[K]int, len(list))
	for i, v := range list {
		f := fmt.Sprintf("%s[%d]", path, i)
		errs = append(errs, check(f, v))
		if j, dup := seen[key(v)]; dup {
			errs = append(errs, field.Invalid(f, "repeats %s[%d]", path, j))
			continue
		}
		seen[key(v)] = i
	}
	return errors.Join(errs...)
}
