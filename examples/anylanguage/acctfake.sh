#!/usr/bin/env bash
# acctfake.sh: drive the fake Account Management API from the shell with
# curl, as a test in any language would. It starts acctfake with a fixed API
# key, admin token, manual clock and fixtures.json (resources that refer to
# each other, and a second account), waits until it listens, then uses the
# account API (create, list, delete, get) and the admin API under
# /_acctfake/ (health, a snapshot and its restore, a fault, the journal, the
# clock, reset), and stops the server.
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
#   ADMIN_TOKEN  the admin API's token; default "example-admin"
set -euo pipefail
# acctfake listens on loopback: curl must not send that through a proxy
# named by http_proxy (Go's client leaves loopback out; curl does not).
export no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}" NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}"

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
admin_token="${ADMIN_TOKEN:-example-admin}"

: >"$tmp/out" # before the background job opens it, so that sed below can read it
"$bin" -addr "${ADDR:-127.0.0.1:0}" -api-key "$key" -admin-token "$admin_token" \
	-clock manual -clock-start 2030-01-01T00:00:00Z -fixtures "$here/fixtures.json" >"$tmp/out" 2>&1 &
pid=$!

# Wait for "listening on http://HOST:PORT", or for acctfake to exit: no
# count of tries, so a slow machine only waits longer.
base=""
while true; do
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
# admin METHOD PATH [JSON]: the same for the admin API, with the admin token.
admin() {
	local args=(-sS -X "$1" "$base/_acctfake/$2" -H "Authorization: Bearer $admin_token" -w '\n%{http_code}\n')
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
# names [KEY]: the service users' names, sorted, as the key's account sees them.
names() {
	curl -sS "$base/service_users" -H "Authorization: Bearer ${1:-$key}" -H "Service-Version: 2" |
		grep -o '"name": *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/' | sort | tr '\n' ' ' | sed 's/ $//'
}
# check WANT OUT: fail unless api's or admin's output OUT has status WANT.
check() { [[ "$(status "$2")" == "$1" ]] || { echo "want HTTP $1, got: $2" >&2; exit 1; }; }

out="$(curl -sS "$base/_acctfake/health")"
echo "admin health: $(field status "$out")"

out="$(api POST /service_users '{"name": "ci"}')"
[[ "$(status "$out")" == 201 ]] || { echo "create failed: $out" >&2; exit 1; }
id="$(field id "$(body "$out")")"
echo "created service user $(field name "$(body "$out")") (${id%%_*}_...)"

echo "service users: $(names)"
echo "the other account's: $(names other-key)"

out="$(api DELETE "/service_users/$id")"
echo "delete: HTTP $(status "$out")"

out="$(api GET "/service_users/$id")"
echo "get after delete: HTTP $(status "$out") $(field error_code "$(body "$out")")"

out="$(curl -sS -o /dev/null -w '%{http_code}' "$base/service_users" -H "Service-Version: 2")"
echo "without a key: HTTP $out"

# A snapshot, a change, and back.
out="$(admin POST snapshots)"
check 201 "$out"
snap="$(field id "$(body "$out")")"
check 201 "$(api POST /service_users '{"name": "temp"}')"
check 200 "$(admin POST "snapshots/$snap/restore")"
echo "after restoring the snapshot: $(names)"

# A fault for the next GET /service_users, then the journal's record of it.
check 201 "$(admin POST faults '{"method": "GET", "path": "/service_users", "times": 1, "status": 503}')"
out="$(api GET /service_users)"
echo "with the fault: HTTP $(status "$out") $(field error_code "$(body "$out")")"
echo "then: HTTP $(status "$(api GET /service_users)")"
out="$(admin GET 'journal?method=GET&path=/service_users&status=503')"
echo "journal: $(body "$out" | grep -o '"id":"op_' | wc -l | tr -d ' ') GET /service_users answered 503"

# The manual clock: two days later.
check 200 "$(admin POST clock/advance '{"by": "48h"}')"
out="$(api POST /service_users '{"name": "later"}')"
echo "created at $(field created_at "$(body "$out")")"

# Reset: back to the fixtures.
check 204 "$(admin POST reset)"
echo "after reset: $(names)"

kill "$pid"
status=0
wait "$pid" || status=$?
pid=""
echo "stopped: exit status $status"
