// Package property shows property-based testing of your own code against
// the fake with pgregory.net/rapid: instead of a few hand-picked cases,
// rapid generates hundreds of inputs and, when a property fails, shrinks
// the input to a minimal counterexample.
//
// The code under test is EnsureServiceUser, a get-or-create wrapper that
// normalizes names, and keyrotation.RotateKeys from examples/testing.
// property_test.go states what must hold for every input:
//
//   - EnsureServiceUser either refuses a name that normalizes to nothing,
//     with a validation error, or returns a user named NormalizeName(name);
//     names that normalize alike get the same user, others a new one.
//   - NormalizeName is idempotent and its result is always a valid name.
//   - RotateKeys, whatever keys exist, leaves the owner with the new key
//     plus exactly the keys not older than the cutoff, and touches no
//     other owner's key.
//
// One fake serves every generated case, put back in its initial state with
// Server.Reset. Run the tests with
//
//	go test -v ./examples/property
//
// and, to look harder, go test ./examples/property -rapid.checks=10000.
package property

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
)

// NormalizeName returns the canonical form of a service user name: valid
// UTF-8, lower case, runs of white space replaced by one "-", leading and
// trailing white space removed, and cut to at most account.MaxNameBytes
// bytes without splitting a character. It returns "" for a name of only
// white space.
func NormalizeName(name string) string {
	n := strings.Join(strings.Fields(strings.ToLower(strings.ToValidUTF8(name, ""))), "-")
	for len(n) > account.MaxNameBytes {
		_, size := utf8.DecodeLastRuneInString(n)
		n = n[:len(n)-size]
	}
	return n
}

// EnsureServiceUser returns the service user named NormalizeName(name),
// creating it if it does not exist. A name that normalizes to "" is
// refused by the client's validation (errors.Is(err, acctapi.ErrInvalid)).
// It is safe to call concurrently for the same name: a create that loses
// the race finds the winner's user.
func EnsureServiceUser(ctx context.Context, users *account.ServiceUsers, name string) (*account.ServiceUser, error) {
	n := NormalizeName(name)
	u, err := users.Create(ctx, &account.ServiceUserCreate{Name: n})
	if err == nil {
		return u, nil
	}
	if !acctapi.HasCode(err, acctapi.CodeNameTaken) {
		return nil, fmt.Errorf("ensure service user %q: %w", n, err)
	}
	// The list cannot be filtered by name; service users are few.
	for u, lerr := range users.List(ctx, nil) {
		if lerr != nil {
			return nil, fmt.Errorf("ensure service user %q: %w", n, lerr)
		}
		if u.Name == n {
			return &u, nil
		}
	}
	return nil, fmt.Errorf("ensure service user %q: name taken but no user has it: %w", n, err)
}
