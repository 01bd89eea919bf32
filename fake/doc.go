// Package fake serves the whole Account Management API in-process, backed
// by go-memdb, so that tests of code using the API run without a network.
//
// It behaves like the real service, as the project's contract writes it
// down: authentication (Bearer API keys, compared in constant time, never
// echoed; a body is not read before it succeeds), the Service-Version
// header (and Ngrok-Version, the real service's name for it), routing with
// 404 and 405, strict JSON bodies
// (1 MiB limit, unknown members rejected), validation by the domain
// packages' own Validate methods, the contract's status codes and error
// bodies with operation ids, time-ordered ids, absolute uris, pagination
// (limit, before_id, next_page_uri; a page also ends early where its
// items' JSON would pass [MaxPageBytes]), CEL list filters, uniqueness,
// referential integrity, Kubernetes operators whose CSRs it signs with its
// own CA, and several accounts that cannot see each other.
//
// # Starting
//
// In a test, one line starts a server and closes it when the test ends:
//
//	srv := fake.Start(t)
//	users := account.NewServiceUsers(srv.Client())
//
// [New] does the same without a testing.TB. A server listens on a loopback
// port ([Server.URL]) unless [WithoutListener] is given; then requests reach
// it in memory through [Server.HTTPClient] and [Server.Client], which is
// faster. Inside a testing/synctest bubble, [Start] and [New] make the
// in-memory server by themselves (a listener would block the bubble).
// cmd/acctfake serves the same fake on a TCP address for other languages.
//
// [Server.Client] has retries off, unlike a client of acctapi.NewClient,
// so a fault injected once reaches the code under test; pass
// acctapi.WithRetry(acctapi.DefaultRetryPolicy()) to test with the retries
// the code has in production.
//
// # What tests can do
//
//   - Control time and ids: [WithClock] with a [ManualClock], [WithIDSeed].
//   - Set up accounts and keys: [WithAccount], [Server.AddAccount]; a client
//     for any key: [Server.ClientFor].
//   - Seed any resource, including endpoints and tunnels, which have no API
//     path, through the same validation as the API: [Seed], [Server.LoadFixtures].
//   - Inspect state: [Get], [List] (copies).
//   - See what was sent: [Server.Journal], with the Authorization header never
//     recorded, secrets redacted, no body of a request that failed
//     authentication, and at most a byte budget ([WithJournalBudget],
//     [Server.SetJournalBudget]), or none ([WithoutJournal]); filter it
//     with [Server.JournalMatching], whose pattern is checked against the
//     routes.
//   - Inject faults: [Server.React] and the helpers [Server.FailNext],
//     [Server.FaultNext], [Server.RateLimitNext], [Server.DropNext],
//     [Server.DropAfterNext] (the request takes effect, its answer is lost),
//     [Server.Latency]. A method or path pattern that matches nothing the
//     fake serves panics when the fault is added ([Server.CheckTarget] says
//     so as an error), so a mistyped fault cannot silently never fire.
//   - Read state with the type a client returns or its pointer:
//     [Get] and [List] take account.ServiceUser or *account.ServiceUser,
//     and panic on a type that is no resource of the fake.
//   - Save and restore state: [Server.Snapshot], [Server.Restore],
//     [Server.Reset].
//   - Rate-limit the management API itself: [WithRateLimit].
//   - Bound what each account stores, resources and the references
//     between them: [WithMaxResources] (beyond it, a create or update is
//     a 409 with [acctapi.CodeResourceLimit]).
//
// A Server is safe for concurrent use. The package has no package-level
// mutable state and does not import testing.
//
// # Two dialects
//
// The fake speaks the specification's dialect and the real service's (see
// [acctapi.Dialect]), and tells them by the version header: a request that
// sends Ngrok-Version (in any letter case) and no Service-Version speaks
// the real service's, as that service's own clients and an
// [acctapi.Client] built with acctapi.WithDialect(acctapi.DialectReal) do;
// every other request speaks the specification's. In the real service's
// dialect a body may name event targets as that service does (datadog,
// azure_logs_ingestion, aws_access_key_id, …; see events.Translate, which
// the fake runs before its strict member check; a member given in both
// spellings is a 400), a list may be paged with beforeId as well as
// before_id (next_page_uri still uses before_id), and the answer, field
// paths of errors included, uses the real names. The store holds one
// model; only the wire differs.
//
// # Where the fake differs from the real service
//
// The fake follows the project's contract where the real service's
// behaviour is not documented: its own error codes for not found, 405 and
// inactive service users; 401 (not 403) for authentication failures;
// next_page_uri carrying the filter; filters on tunnel group backends.
// In the real service's dialect, format is answered "JSON" (the real
// service's sample shows "json") and a target lists the historic s3
// member beside the real service's five.
// Secrets (event destination credentials) are returned on reads as stored;
// the journal redacts them. Events are never delivered. Endpoints and
// tunnels are seeded, not created by agents. Bodies are stricter than Go's
// encoding/json: member names must be spelled exactly and appear once.
package fake
