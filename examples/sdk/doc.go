// Package sdk shows the acctapi SDK against the fake: start the fake in one
// line, point a client at it, create a service user, page through its API
// keys with a CEL filter, and tell a missing resource from other errors.
//
// The code is in example_test.go, as runnable Examples whose output go test
// checks, so it cannot drift from the library. Run it with
//
//	go test -v ./examples/sdk
//
// The fake is started with fake.WithIDSeed and fake.WithClock so that ids,
// tokens and timestamps are the same on every run; code under test does not
// need either. Against the real service, the only change is the client:
//
//	c, err := acctapi.NewClient(os.Getenv("API_KEY"))
//
// instead of acctapi.NewClient(srv.APIKey(), acctapi.WithBaseURL(srv.URL)).
package sdk
