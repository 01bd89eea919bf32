// Package anylanguage shows the fake from outside Go: cmd/acctfake serves
// it on a TCP port, and any HTTP client can use it. acctfake.sh is a test
// written in bash and curl: it starts acctfake with a fixed API key, admin
// token, manual clock and fixtures.json, waits for its "listening on" line,
// creates, lists and deletes service users, then drives the admin API
// (health, a snapshot and its restore, a fault and the journal's record of
// it, the clock, reset), and stops it:
//
//	examples/anylanguage/acctfake.sh
//
// Every API request needs two headers, "Authorization: Bearer <key>" and
// "Service-Version: 2"; bodies are JSON. Admin requests, under /_acctfake/,
// need "Authorization: Bearer <admin token>". acctfake prints its address,
// key and admin token on start:
//
//	$ go build -o acctfake ./cmd/acctfake
//	$ ./acctfake -addr 127.0.0.1:9000 -api-key secret -admin-token admin -fixtures examples/anylanguage/fixtures.json
//	listening on http://127.0.0.1:9000
//	api key: secret
//	admin token: admin
//
// fixtures.json lists resources to create at start, each the collection
// path of its create request and the request's body; a fixture's "ref"
// names what it created, and "${ref}" in a later body is its id (an API key
// owned by a fixture service user, a failover over a fixture backend). Its
// "accounts" add a second account with its own key and resources. Fixtures
// go through the same validation as the API, so a broken one stops acctfake
// with an error naming it.
//
// The package holds no code of its own: script_test.go runs acctfake.sh
// (when bash and curl are installed) and checks its output, and
// example_test.go loads fixtures.json into an in-process fake, so neither
// can rot.
package anylanguage
