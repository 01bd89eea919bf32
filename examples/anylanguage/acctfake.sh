#!/usr/bin/env bash
# acctfake.sh: drive the fake Account Management API from the shell with
# curl, as a test in any language would. It starts acctfake with a fixed API
# key and fixtures.json, waits until it listens, creates a service user,
# lists the service users, deletes the new one, checks that it is gone, and
# stops the server.
#
# Usage (from anywhere):
#
#   examples/anylanguage/acctfake.sh
#
# Environment:
#   ACCTFAKE  an acctfake binary to run; default: built with `go build`
#             from this module into a temporary directory
#   ADDR      the address to listen on; default 127.0.0.1:0, a free port
#             (the script reads the port acctfake prints)
#   API_KEY   the key acctfake accepts; default "example-key"
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d)"
pid=""
cleanup() {
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

bin="${ACCTFAKE:-}"
if [[ -z "$bin" ]]; then
	# Build rather than `go run`: stopping `go run` would not stop the
	# server it starts.
	(cd "$root" && go build -o "$tmp/acctfake" ./cmd/acctfake)
	bin="$tmp/acctfake"
fi
key="${API_KEY:-example-key}"

"$bin" -addr "${ADDR:-127.0.0.1:0}" -api-key "$key" -fixtures "$here/fixtures.json" >"$tmp/out" 2>&1 &
pid=$!

# Wait for "listening on http://HOST:PORT" (at most 10 s).
base=""
for _ in $(seq 100); do
	base="$(sed -n 's/^listening on \(http:\/\/.*\)$/\1/p' "$tmp/out")"
	[[ -n "$base" ]] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "acctfake exited:" >&2
		cat "$tmp/out" >&2
		exit 1
	fi
	sleep 0.1
done
if [[ -z "$base" ]]; then
	echo "acctfake did not start:" >&2
	cat "$tmp/out" >&2
	exit 1
fi
echo "acctfake is listening"

# api METHOD PATH [JSON]: one request with the headers every request needs.
# Prints the body, then the HTTP status on a line of its own.
api() {
	local args=(-sS -X "$1" "$base$2" -H "Authorization: Bearer $key" -H "Service-Version: 2" -w '\n%{http_code}\n')
	if [[ $# -ge 3 ]]; then
		args+=(-H "Content-Type: application/json" -d "$3")
	fi
	curl "${args[@]}"
}
# status and body split api's output.
status() { tail -n 1 <<<"$1"; }
body() { sed '$d' <<<"$1"; }
# field NAME JSON: the first string member NAME of a JSON object, without
# needing jq.
field() { grep -o "\"$1\": *\"[^\"]*\"" <<<"$2" | head -n 1 | sed 's/.*: *"\(.*\)"/\1/'; }

out="$(api POST /service_users '{"name": "ci"}')"
[[ "$(status "$out")" == 201 ]] || { echo "create failed: $out" >&2; exit 1; }
id="$(field id "$(body "$out")")"
echo "created service user $(field name "$(body "$out")") (${id%%_*}_...)"

out="$(api GET '/service_users?limit=10')"
[[ "$(status "$out")" == 200 ]] || { echo "list failed: $out" >&2; exit 1; }
names="$(body "$out" | grep -o '"name": *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/' | sort | tr '\n' ' ')"
echo "service users: ${names% }"

out="$(api DELETE "/service_users/$id")"
echo "delete: HTTP $(status "$out")"

out="$(api GET "/service_users/$id")"
echo "get after delete: HTTP $(status "$out") $(field error_code "$(body "$out")")"

out="$(curl -sS -o /dev/null -w '%{http_code}' "$base/service_users" -H "Service-Version: 2")"
echo "without a key: HTTP $out"

kill "$pid"
wait "$pid" || true
pid=""
echo "stopped"
