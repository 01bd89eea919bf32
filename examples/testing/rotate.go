// Package keyrotation is code a user of the SDK might write — rotating a
// service user's API keys — and, in its tests, how to test such code with
// the fake: seeding state, asserting on the request journal, and injecting
// faults (a 429 the client retries, a 503 the code must report).
//
// RotateKeys is ordinary code: it takes an *account.APIKeys and knows
// nothing of the fake. The tests (rotate_test.go) give it a client of a
// fake server; production code gives it one built with acctapi.NewClient.
//
// Run the tests with
//
//	go test -v ./examples/testing
//
// The package is named keyrotation, not testing, so that it does not shadow
// the standard library's testing package in its own tests.
package keyrotation

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
)

// RotatedDescription is the description RotateKeys gives the key it
// creates.
const RotatedDescription = "rotated"

// RotateKeys creates a new API key for the service user ownerID and then
// deletes the user's keys created before olderThan, oldest last as the API
// lists them. It returns the new key, whose Token is the only copy of its
// secret, and the ids of the keys it deleted.
//
// It creates before it deletes, so the user is never left without a key:
// when the create fails, nothing is deleted. A key that is already gone
// when RotateKeys deletes it (another rotation got there first) counts as
// deleted. Any other error stops the rotation and is returned, wrapped,
// with what was done so far.
func RotateKeys(ctx context.Context, keys *account.APIKeys, ownerID string, olderThan time.Time) (created *account.APIKey, deleted []string, err error) {
	created, err = keys.Create(ctx, &account.APIKeyCreate{OwnerID: ownerID, Description: RotatedDescription})
	if err != nil {
		return nil, nil, fmt.Errorf("rotate keys of %s: create: %w", ownerID, err)
	}

	// Collect first, delete after: the list is not changed while it is
	// being paged through.
	var old []string
	for k, err := range keys.List(ctx, &acctapi.FilterOptions{Filter: "obj.owner_id == " + strconv.Quote(ownerID)}) {
		if err != nil {
			return created, nil, fmt.Errorf("rotate keys of %s: list: %w", ownerID, err)
		}
		if k.ID != created.ID && k.CreatedAt.Before(olderThan) {
			old = append(old, k.ID)
		}
	}

	for _, id := range old {
		if err := keys.Delete(ctx, id); err != nil && !acctapi.IsNotFound(err) {
			return created, deleted, fmt.Errorf("rotate keys of %s: delete %s: %w", ownerID, id, err)
		}
		deleted = append(deleted, id)
	}
	return created, deleted, nil
}
