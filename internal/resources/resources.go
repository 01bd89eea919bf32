// Package resources is the one description of the API's resources that the
// fake, its tests, the conformance suite and the domain packages' tests
// read: each resource's collection path, id prefix, list member, the fields
// a list filter may use (contract §3), and the operations it has.
//
// A new resource is its domain package (models, Validate, client), its
// fake hooks, and one entry here, added to [All].
package resources

import (
	"net/url"
	"strings"
)

// Desc describes one resource.
type Desc struct {
	// Name is the collection path without its leading slash
	// ("service_users", "backends/failover"), and the fake's table name.
	Name string
	// Prefix is the id prefix, without its underscore ("service").
	Prefix string
	// Member is the list response's collection member ("service_users").
	Member string
	// Filter names the fields a list filter may use; nil: the list takes
	// no filter. It is shared: read it, never change it.
	Filter []string
	// Update reports whether the resource has PATCH.
	Update bool
	// NoAPI marks a resource that has no API path (tunnels, endpoints):
	// the fake's Seed, Get and List reach it, nothing else.
	NoAPI bool
	// Alias is a second collection path serving the same records (the
	// deprecated bot-user alias), with its own list member AliasMember.
	Alias, AliasMember string
}

// Path is the collection path, "/" + Name.
func (d Desc) Path() string { return "/" + d.Name }

// Item is the path of the item id, escaped as one segment.
func (d Desc) Item(id string) string { return "/" + d.Name + "/" + url.PathEscape(id) }

// AliasPath is the alias collection path, "/" + Alias, or "" for none.
func (d Desc) AliasPath() string {
	if d.Alias == "" {
		return ""
	}
	return "/" + d.Alias
}

// AliasItem is the path of the item id under the alias.
func (d Desc) AliasItem(id string) string { return "/" + d.Alias + "/" + url.PathEscape(id) }

// SubPath is the path of a sub-resource (EventSources, BoundEndpoints)
// under the item parentID, followed by keys (a source's type), each
// escaped as one segment.
func SubPath(pattern, parentID string, keys ...string) string {
	p := strings.Replace(pattern, "{id}", url.PathEscape(parentID), 1)
	for _, k := range keys {
		p += "/" + url.PathEscape(k)
	}
	return p
}

// Filterable fields (contract §3).
var (
	annotatedFields = []string{"id", "description", "metadata", "created_at"}
	apiKeyFields    = []string{"id", "description", "metadata", "owner_id", "created_at"}
	svcUserFields   = []string{"id", "created_at"}
	caFields        = []string{"id", "description", "metadata", "subject_common_name", "created_at", "not_before", "not_after"}
)

// The resources.
var (
	ServiceUsers = Desc{Name: "service_users", Prefix: "service", Member: "service_users", Filter: svcUserFields, Update: true,
		Alias: "bot_users", AliasMember: "bot_users"}
	APIKeys                = Desc{Name: "api_keys", Prefix: "ak", Member: "keys", Filter: apiKeyFields, Update: true}
	CertificateAuthorities = Desc{Name: "certificate_authorities", Prefix: "ca", Member: "certificate_authorities", Filter: caFields, Update: true}
	Failovers              = Desc{Name: "backends/failover", Prefix: "bkdfo", Member: "backends", Update: true}
	HTTPResponses          = Desc{Name: "backends/http_response", Prefix: "bkdhr", Member: "backends", Update: true}
	TunnelGroups           = Desc{Name: "backends/tunnel_group", Prefix: "bkdtg", Member: "backends", Filter: annotatedFields, Update: true}
	Tunnels                = Desc{Name: "tunnels", Prefix: "tn", NoAPI: true}
	EventDestinations      = Desc{Name: "event_destinations", Prefix: "ed", Member: "event_destinations", Filter: annotatedFields, Update: true}
	EventSubscriptions     = Desc{Name: "event_subscriptions", Prefix: "esb", Member: "event_subscriptions", Filter: annotatedFields, Update: true}
	Operators              = Desc{Name: "kubernetes_operators", Prefix: "k8sop", Member: "operators", Update: true}
	Endpoints              = Desc{Name: "endpoints", Prefix: "ep", NoAPI: true}
)

// Sub-resources: paths under an item of another resource, "{id}" standing
// for the parent's id.
const (
	// EventSources is a subscription's sources, each named by its type.
	EventSources = "/event_subscriptions/{id}/sources"
	// BoundEndpoints is the endpoints an operator's selectors bind.
	BoundEndpoints = "/kubernetes_operators/{id}/bound_endpoints"
)

// otherPrefixes are the id prefixes of what has no collection here: a
// user (an API key's owner_id) and an operation.
var otherPrefixes = map[string]string{"usr": "user", "op": "operation"}

// OwnerOf returns what an id that starts with a known prefix and "_"
// names, a resource ("api_keys") or "user" or "operation", and that
// prefix; ok is false for an id of no known prefix (a made-up one).
func OwnerOf(id string) (owner, prefix string, ok bool) {
	p, _, found := strings.Cut(id, "_")
	if !found {
		return "", "", false
	}
	for _, d := range All() {
		if d.Prefix == p {
			return d.Name, p, true
		}
	}
	if o, ok := otherPrefixes[p]; ok {
		return o, p, true
	}
	return "", "", false
}

// ForeignItem reports whether path (escaped, a query allowed) names an
// item of a collection, or something under one, by an id that is plainly
// another's (OwnerOf: "/service_users/ak_…"). It returns the collection
// path and the id segment, what the id names and the collection's own
// prefix. An id of no known prefix is not foreign: a made-up one answers
// 404.
func ForeignItem(path string) (collection, id, owner, prefix string, foreign bool) {
	path, _, _ = strings.Cut(path, "?")
	for _, d := range All() {
		for _, name := range []string{d.Name, d.Alias} {
			if d.NoAPI || name == "" {
				continue
			}
			rest, ok := strings.CutPrefix(path, "/"+name+"/")
			if !ok {
				continue
			}
			seg, _, _ := strings.Cut(rest, "/")
			if o, p, ok := OwnerOf(seg); ok && p != d.Prefix {
				return name, seg, o, d.Prefix, true
			}
			return "", "", "", "", false
		}
	}
	return "", "", "", "", false
}

// Collection returns the resource whose collection path (or alias) is
// path, without a query: "/service_users", "/bot_users".
func Collection(path string) (Desc, bool) {
	for _, d := range All() {
		if !d.NoAPI && (path == d.Path() || d.Alias != "" && path == d.AliasPath()) {
			return d, true
		}
	}
	return Desc{}, false
}

// All lists every resource, in the order the fake registers them.
func All() []Desc {
	return []Desc{ServiceUsers, APIKeys, CertificateAuthorities, Failovers, HTTPResponses, TunnelGroups, Tunnels,
		EventDestinations, EventSubscriptions, Operators, Endpoints}
}
