// Package acctapi is a Go client for the Account Management API — API keys,
// service users, backends, certificate authorities, event destinations and
// subscriptions, Kubernetes operators — with a full in-process fake of the
// API for tests and a standalone implementation of the rate-limit traffic
// policy action.
//
// This package holds what every resource shares: the [Client] transport,
// retries, the [Error] type, validation's [FieldError], pagination and
// [Ref]. The resources live in their own packages.
//
// # Layout
//
//   - account: API keys, service users (and the deprecated bot users),
//     certificate authorities.
//   - backends: failover, HTTP response and tunnel group backends.
//   - events: event destinations, subscriptions and sources, and the event
//     types.
//   - k8sop: Kubernetes operators and their bound endpoints.
//   - fake: the whole API in-process (httptest or no listener), backed by
//     go-memdb, for tests; cmd/acctfake serves it on a TCP port for other
//     languages.
//   - conformance: a test suite that holds any server of the API to its
//     contract.
//   - ratelimit: the rate-limit action — config, a sliding-window limiter,
//     CEL bucket keys and net/http middleware.
//
// Each resource package has plain data types (the resource, its list page,
// its create and update requests, each request with a Validate method) and
// a client built on a shared [Client], one per collection:
//
//	c, err := acctapi.NewClient(os.Getenv("API_KEY"))
//	if err != nil { ... }
//	users := account.NewServiceUsers(c)
//	u, err := users.Create(ctx, &account.ServiceUserCreate{Name: "ci"})
//
// # Quick start
//
// Every call takes a context. Lists are iterators that fetch pages as the
// loop asks for them, following the server's next_page_uri:
//
//	for key, err := range account.NewAPIKeys(c).List(ctx, &acctapi.FilterOptions{
//		Filter: `obj.description.startsWith("ci-")`,
//	}) {
//		if err != nil { ... }
//		fmt.Println(key.ID)
//	}
//
// Update requests use pointers for the members they change; nil leaves a
// member as it is. A client never modifies the values it is given.
//
// # Errors
//
// Every response with a status of 400 or more is an [*Error] carrying the
// status, the error code (the constants named Code*), the message, the
// details and the operation id. Match it with [errors.As] or the helpers,
// which see through wrapping:
//
//	if acctapi.IsNotFound(err) { ... }
//	if acctapi.HasCode(err, acctapi.CodeNameTaken) { ... }
//	if wait, ok := acctapi.IsRateLimited(err); ok { ... }
//
// Before sending, clients run the request's Validate method, which reports
// every broken rule as a [*FieldError] naming its JSON path
// ("target.kinesis.auth.role.role_arn"), joined with [errors.Join];
// [FieldErrors] lists them. The fake runs the very same methods, so a rule
// exists once. [WithoutValidation] turns the client-side check off, to
// send invalid input to a server on purpose.
//
// # Retries
//
// A 429 is retried for every method after its Retry-After; a 5xx or a
// connection error is retried only for GET and DELETE, never for POST or
// PATCH, with jittered backoff. [RetryPolicy] bounds attempts and total
// wait; [WithoutRetry] turns retries off. The context cancels any wait.
// [WithThrottle] spaces requests out with a rate.Limiter instead, so that a
// busy program stays under the server's limit ([NewRealServiceLimiter] for
// the real service's 120 requests per 60 s).
//
// # The real service and the specification
//
// The real service at [DefaultBaseURL] names a few things differently from
// the specification (its version header, some event-target members). A
// client speaks the real service's [Dialect] at that URL and the
// specification's elsewhere, such as at the fake; [WithDialect] says which,
// and responses are read in either. The Go API always uses the
// specification's names.
//
// # Against a broken server
//
// Each attempt has a time limit ([DefaultTimeout], unless [WithHTTPClient]
// gives a client of your own); a success body longer than
// [DefaultMaxResponseBytes] ([WithMaxResponseBytes]) is an error, not an
// allocation; a page of more items than its limit is an error wrapping
// [ErrPageTooLong], not decoded; a list whose next_page_uri does not
// advance (names a page already fetched, or a before_id not below the
// last), or that sends more than 16 pages in a row with no items, ends
// with [ErrPageLoop] (fewer are followed); a success answer with nothing of a resource or list in it
// (no id, uri or list) is an error wrapping [ErrNoResource], not an empty
// resource or an empty list.
//
// # Testing with the fake
//
// Start the fake in one line; it hands you a ready client:
//
//	srv := fake.Start(t) // closed when the test ends
//	users := account.NewServiceUsers(srv.Client())
//
// The fake behaves like the real service — authentication, versioning,
// validation, pagination, CEL filters, referential integrity, several
// isolated accounts — and adds what tests need: seeding (fake.Seed), a
// manual clock and deterministic ids, a request journal with secrets
// redacted, fault injection (failures, latency, dropped connections, 429s),
// snapshots, and an in-memory mode without a listener (fake.WithoutListener).
// The conformance package runs one suite against the fake, cmd/acctfake, or
// any other implementation of the API.
//
// # Rate limiting
//
// Package ratelimit implements the rate-limit traffic policy action on
// your own servers: a keyed sliding-window ratelimit.Limiter with time
// passed in, bucket keys as CEL expressions over the request, and
// middleware built from a traffic policy document.
package acctapi
