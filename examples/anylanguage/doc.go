// Package anylanguage shows the fake from outside Go: cmd/acctfake serves
// it on a TCP port, and any HTTP client can use it. acctfake.sh does it
// with bash and curl — start acctfake with a fixed API key and
// fixtures.json, wait for its "listening on" line, create a service user,
// list, delete, and stop it:
//
//	examples/anylanguage/acctfake.sh
//
// Every request needs two headers, "Authorization: Bearer <key>" and
// "Service-Version: 2"; bodies are JSON. acctfake prints its address and
// key on start:
//
//	$ go run ./cmd/acctfake -addr 127.0.0.1:9000 -api-key secret -fixtures examples/anylanguage/fixtures.json
//	listening on http://127.0.0.1:9000
//	api key: secret
//
// fixtures.json lists resources to create at start, each the collection
// path of its create request and the request's body; they go through the
// same validation as the API, so a broken fixture stops acctfake with an
// error naming it.
//
// The package holds no code of its own: script_test.go runs acctfake.sh
// (when bash and curl are installed) and checks its output, and
// example_test.go checks fixtures.json, so neither can rot.
package anylanguage
