// Package bench measures the Redis client under ratelimit/redisstore's
// decision script: github.com/redis/go-redis/v9 (the store's client)
// against github.com/redis/rueidis, which pipelines concurrent commands
// on shared connections automatically. It is a separate module so that
// neither the library's go.mod nor redisstore's lists rueidis. See
// README.md for what each benchmark does and the figures measured.
package bench

import _ "github.com/acctapi/acctapi/ratelimit/redisstore"
