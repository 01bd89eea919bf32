// Package ratelimit implements the rate-limit traffic policy action: a
// sliding-window limiter keyed by CEL expressions, its configuration, and
// net/http middleware that runs policies of on_http_request rules.
//
// # Layers
//
//   - [Limiter] is a keyed sliding-window limiter, usable alone: at most
//     capacity requests per key in any window, time passed in, truthful
//     retry-after, bounded memory, safe for concurrent use.
//   - [Config] and [Action] are the action's configuration with the
//     specification's JSON names; Validate returns [field.Error]
//     values joined.
//   - [Limit] is a compiled action: bucket-key expressions compiled once
//     and evaluated per request against an [*http.Request], giving a
//     [Result] with the action's result variables.
//   - [Policy] compiles a policy document, YAML or JSON, of on_http_request
//     rules (rate-limit and custom-response actions) into middleware. The
//     next handler finds the last rate-limit action's [Result] with
//     [ResultFromContext]; [WithDecisionHook] sees every decision.
//
// # Options
//
// Each option applies where its type says, so a misplaced one does not
// compile: an [Option] ([WithMaxBuckets], [WithStore]) applies to [NewLimiter],
// [NewLimit] and [NewPolicy]; a [LimitOption] ([WithClock],
// [WithClientIP], [WithDecisionHook] and the providers below) to NewLimit
// and NewPolicy; a [PolicyOption] ([WithRateLimitHeaders],
// [WithSkipUnsupported]) to NewPolicy only. An option given a nil or
// unusable value (a nil [Store], [WithMaxBuckets](0)), and one that would
// do nothing (a provider, or [WithClientIP], that no expression reads;
// WithMaxBuckets with WithStore), makes the constructor return an error
// naming it.
//
// # Bucket keys and rule expressions
//
// Expressions are CEL with every Traffic Policy variable and macro that
// on_http_request can see:
//
//   - from the request: req.* (method, host, url and its parts, headers,
//     cookies, query, content type and encoding, user agent, version,
//     timestamps);
//   - from the connection and its TLS state: conn.client_ip, .client_port,
//     .server_ip, .server_port, conn.tls.* (version, cipher suite, SNI,
//     ALPN, and the client certificate's fields); conn.ts.start,
//     conn.bytes_in and conn.bytes_out need the server to use [Listener]
//     and [ConnContext];
//   - from the clock: time.now and req.ts.header_received;
//   - the action's own results: actions.ngrok.rate_limit.bucket_key,
//     .limited, .error.code and .error.message;
//   - the macros: getReqHeader, hasReqHeader, getQueryParam,
//     hasQueryParam, getReqCookie, hasReqCookie, hashes (hash.sha256 and
//     the others, also as methods), JSON, base64, query-string and URL
//     helpers, inCidrRange, inCidrRanges, isPrivateIp, lower, upper,
//     rand.int, rand.double, has() (also has(m[k]) and has(req.url.port)),
//     and cel-go's standard library with its Strings, Lists and Encoders
//     extensions.
//
// What needs outside data comes from a provider option, and an expression
// that uses it without one does not compile, naming the option:
// [WithIPIntel] (conn.geo.*, conn.client_ip.* and conn.server_ip.*
// intelligence), [WithServerRegion], [WithEndpoint] (endpoint.*),
// [WithSecrets] (secrets.get), [WithServerCertificate]
// (conn.tls.server.*), [WithTLSFingerprint] (conn.tls.ja4_fingerprint,
// which [JA4] computes from the ClientHello) and [WithPodIdentity]
// (conn.k8s.pod.*). req.user_agent.name and the other parsed fields come
// from a built-in parser of the common browsers, systems and crawlers,
// which [WithUserAgentParser] can replace. Names that do not exist fail to
// compile with the closest valid names, and so do members that a cookie
// (getReqCookie, req.cookies), a TLS extension or url.parse's result does
// not have (getReqCookie('s').valu), which CEL would type as a map's keys
// and find missing only on every request. So do comparisons with a
// constant a variable never equals, req.url.scheme == 'HTTPS' and
// req.url.path == 'api' (a path starts with /), and with a standard
// method in another case, req.method == 'get', taken for a typo (clients
// send the standard methods in upper case). Variables of the response phase
// (res.*), set-vars (vars.*) and other actions' results are not available.
//
// Where the documentation leaves a choice open: header names are matched
// in any case (getReqHeader('host') and req.headers['host'] read the Host
// header too); a value the request does not have (req.content_length
// without a declared length, req.url.port without a port,
// req.ts.body_received, a missing client certificate's validity) fails to
// evaluate and has() is false for it; TLS variables of a plain-HTTP
// connection are empty; a cookie (getReqCookie, req.cookies[k][i]) has
// the fields of the documentation's cookie type, name, value, domain,
// path, expires, max_age, secure, http_only, same_site and
// unparsed_attributes, of which a request's Cookie header fills only name
// and value (so getReqCookie('session').secure is false); getReqCookie of
// a missing cookie has an empty name and value; every map an expression
// is given (req.headers, req.url.query_params, req.cookies, what
// json.decode, url.parse and queryString.decode return, ...) iterates in
// key order, so a key built by iterating one is the same for the same
// request; split, lastIndexOf and getMilliseconds behave as in cel-go.
//
// Every expression's evaluation is bounded: one made only of operators,
// the request's variables and functions, conversions, string tests and
// the string functions whose cost is known, and whose worst case with
// every input at most 1 MiB is within 1,000,000 cost units, runs as is;
// any other runs under that limit, every function charged by what it
// reads or builds, and fails to evaluate beyond it. Every iteration of a
// comprehension (all, exists, exists_one, map, filter, sortBy) is also
// charged for the work of following it, which grows with the size of the
// whole expression: ⌈m·(2n+8)/100⌉ units in an expression of n nodes
// (identifiers, literals, operators, calls, and the nodes the macros
// expand to) whose comprehension has m in its condition and step; for
// example 5 units an element for
// getReqHeader('x-forwarded-for')[0].split(',').exists(ip, ip.trim() ==
// '203.0.113.9'), which then reaches the limit at about 65,000 elements
// of a byte or two, and 2 for getReqHeader('x-ids')[0].split(',').map(x, x). join, format,
// json.encode, queryString.encode and replace refuse, before building it,
// a result of more than 1 MiB, and split a list of more than 1,000,000
// elements. distinct, sort, sortBy, flatten, indexOf and lastIndexOf
// compute their cost from their arguments first (the pairs of elements
// they compare, a list counted with all it holds; the elements flatten
// builds; the string's length times the substring's) and refuse a call
// over the limit before running it; so do ==, != and in when they compare
// lists or maps, element by element. json.decode, queryString.decode,
// url.parse and split() are charged four units for each part they may
// build, counted before building, as well as by what they read, and
// refuse likewise. A call of matches whose string length times its pattern's
// compiled size exceeds 2,000,000 fails before it compiles or runs (a
// pattern may be at most 64 KiB and 20,000 instructions, and each compile
// is charged), and a bucket-key value (a list's joined
// form included) may be at most 1 MiB. A YAML policy document may be at
// most 4 MiB with its aliases expanded.
//
// A bucket-key value that is a list joins its elements with ","; bytes
// are their raw contents, valid UTF-8 or not; a map (which only a dyn
// expression such as json.decode gives) is "{k:v,...}" with its entries
// sorted; other values use their CEL string form; null is "". A bucket key that fails to
// evaluate does not limit the request: the result carries
// [CodeEvalFailed] and a message, and processing continues. The exception
// is a key stopped by one of the bounds above: such requests are counted
// in one bucket they all share, so that a client cannot lift a limit by
// sending a request whose bucket key is costly enough to evaluate. This
// holds for bucket keys only: a rule's expression that fails to evaluate,
// on a bound too, counts as false (see [Policy]), so an expression that
// gates a rate-limit action should be one no request can take past a
// bound (matches over getReqHeader(...)[0].substring(0, 1024) rather than
// over the whole header, for example). With several
// bucket keys, each combination of values is one bucket; the values are
// length-prefixed, so ("a|b", "c") and ("a", "b|c") differ.
//
// # Capacity is per process
//
// Buckets live in memory, in the [Limit] (and so the [Policy]) that owns
// them. Like the real service, which applies capacity per ingress server,
// each process enforces capacity on its own: N processes behind a load
// balancer admit up to N times capacity for a bucket.
//
// To share a limit across processes instead, give the constructors a
// [Store] with [WithStore]: the module
// github.com/acctapi/acctapi/ratelimit/redisstore keeps buckets on Redis,
// one atomic script per decision, timed by the Redis server's clock, with
// the same guarantee (never more than capacity in any window, truthful
// retry-after). Its failures are the caller's choice ([FailOpen],
// [FailClosed]), bounded by a timeout per decision, and show in the
// [Result] as [CodeStoreFailed]. Each rate-limit action of a [Policy]
// keeps its own buckets in the store, as in process, even when two share
// a name (see [Bucket]). This package imports no Redis code.
//
// On amd64 the [Limiter] releases a bucket's lock with a few lines of
// assembly (a plain store, cheaper than an atomic instruction); the
// purego build tag, or the race detector, builds the portable atomic
// version instead.
package ratelimit
