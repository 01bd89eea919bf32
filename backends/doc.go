// Package backends models the account's reusable backends — failover, fixed
// HTTP response and tunnel group — with request validation and typed
// clients.
//
// Each backend has a model (such as [Failover]), a list page
// ([FailoverList], whose collection member is "backends" for every kind),
// create and update request types whose Validate methods hold the API's
// rules, and a client ([Failovers]) built on an [*acctapi.Client]:
//
//	fo, err := backends.NewFailovers(c).Create(ctx, &backends.FailoverCreate{
//		Backends: []string{primaryID, fallbackID},
//	})
//
// Update types use pointers for every optional member, maps and slices
// included: nil leaves the member unchanged, and a pointer to an empty slice
// or map, or to a nil one, sends [] or {}. The fake server runs the same Validate methods on
// what it receives. Clients are safe for concurrent use; request and model
// types are plain data.
package backends
