// Package bench compares [ratelimit.Limiter] with other Go rate limiters on
// the same workloads: golang.org/x/time/rate (one limiter per key in a
// map), github.com/sethvargo/go-limiter (memorystore) and
// github.com/ulule/limiter/v3 (memory store). It is a separate module so
// that the library's go.mod lists none of them. Run
//
//	go test -run x -bench . -benchtime 2000x
//
// for a quick pass, or with a longer -benchtime for numbers.
package bench

import _ "github.com/acctapi/acctapi/ratelimit"
