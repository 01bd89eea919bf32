package events

import (
	"slices"
	"strings"
)

// eventTypes is the sorted list of valid event types, built once and never
// changed.
var eventTypes = buildTypes()

func buildTypes() []string {
	objects := strings.Fields(`api_key certificate_authority event_destination
		event_subscription domain ip_policy ip_policy_rule ip_restriction secret
		ssh_certificate_authority ssh_host_certificate ssh_public_key
		ssh_user_certificate tcp_address tls_certificate tunnel_credential vault`)
	out := []string{"agent_session_start.v0", "agent_session_stop.v0",
		"http_request_complete.v0", "tcp_connection_closed.v0"}
	for _, o := range objects {
		for _, verb := range []string{"created", "updated", "deleted"} {
			out = append(out, o+"_"+verb+".v0")
		}
	}
	slices.Sort(out)
	return out
}

// Types returns every event type a subscription or source may name, such
// as "api_key_created.v0", sorted. The caller owns the returned slice.
func Types() []string { return slices.Clone(eventTypes) }

// IsEventType reports whether t is one of [Types]. Case matters.
func IsEventType(t string) bool {
	_, ok := slices.BinarySearch(eventTypes, t)
	return ok
}
