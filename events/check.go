package events

import (
	"errors"
	"fmt"

	"github.com/acctapi/acctapi"
)

// required reports an empty string member.
func required(field, v string) error {
	if v == "" {
		return acctapi.Invalid(field, "is required")
	}
	return nil
}

// checkEventType reports a missing or unknown event type.
func checkEventType(field, t string) error {
	if !IsEventType(t) {
		return acctapi.Invalid(field, "%q is not a known event type", t)
	}
	return nil
}

// checkEach runs check on every element of list, naming each "field[i]",
// and reports an element equal to an earlier one.
func checkEach[T any, K comparable](field string, list []T, key func(T) K, check func(string, T) error) error {
	var errs []error
	seen := make(map[K]int, len(list))
	for i, v := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		errs = append(errs, check(f, v))
		if j, dup := seen[key(v)]; dup {
			errs = append(errs, acctapi.Invalid(f, "repeats %s[%d]", field, j))
			continue
		}
		seen[key(v)] = i
	}
	return errors.Join(errs...)
}
