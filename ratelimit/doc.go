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
//   - [Policy] compiles a JSON policy document of on_http_request rules
//     (rate-limit and custom-response actions) into middleware.
//
// # Bucket keys
//
// Bucket-key and rule expressions are CEL with these variables: req.host,
// req.method, req.url, req.url.path, req.url.query, req.url.host,
// req.headers (lower-case name to list of values), req.user_agent,
// conn.client_ip, conn.client_port, conn.server_ip, conn.server_port and
// actions.ngrok.rate_limit.bucket_key, .limited, .error.code and
// .error.message; and these functions: getReqHeader(name) and
// getQueryParam(name), which return lists, and hasReqHeader(name) and
// hasQueryParam(name). conn.client_ip is the connection's address unless
// [WithClientIP] says otherwise.
//
// A bucket-key value that is a list joins its elements with ","; other
// values use their CEL string form; null is "". A bucket key that fails to
// evaluate does not limit the request: the result carries
// [CodeEvalFailed] and a message, and processing continues. With several
// bucket keys, each combination of values is one bucket; the values are
// length-prefixed, so ("a|b", "c") and ("a", "b|c") differ.
//
// # Capacity is per process
//
// Buckets live in memory, in the [Limit] (and so the [Policy]) that owns
// them. Like the real service, which applies capacity per ingress server,
// each process enforces capacity on its own: N processes behind a load
// balancer admit up to N times capacity for a bucket.
package ratelimit
