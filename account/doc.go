// Package account models the account's principals and credentials: API
// keys, service users (and their deprecated bot-user alias) and certificate
// authorities, with request validation and typed clients.
//
// Each resource has a model (such as [APIKey]), a list page ([APIKeyList]),
// create and update request types whose Validate methods hold the API's rules,
// and a client ([APIKeys]) built on an [*acctapi.Client]:
//
//	keys := account.NewAPIKeys(c)
//	for k, err := range keys.List(ctx, nil) {
//		...
//	}
//
// The fake server runs the same Validate methods (and [ParseCA]) on what it
// receives, so a rule lives in exactly one place. Clients are safe for
// concurrent use; request and model types are plain data.
package account
