package fake_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// TestIsolationProperty checks cross-account isolation as a property: with
// two accounts and random operations through each account's clients,
// nothing of one account is ever read, listed, changed or deleted through
// the other's keys. Each attack is made by one account on the other's
// resources (of every kind, including ones deleted since); the victim's
// whole stored state must be the same after it, and no answer the attacker
// gets may mention any id the victim ever had. Between attacks, the
// model-checked operations of TestModel build state in both accounts.
func TestIsolationProperty(t *testing.T) {
	rapidBudget(t, 120, 40)
	t.Cleanup(func() { outcomes.report(t) })
	rapid.Check(t, func(rt *rapid.T) {
		mc := newMachine(rt)
		ever := map[string]map[string]bool{} // account → every id it has had
		for _, a := range mc.accts {
			ever[a.ref.id] = map[string]bool{}
		}
		remember := func() {
			for _, a := range mc.accts {
				for _, id := range accountIDs(a) {
					ever[a.ref.id][id] = true
				}
			}
		}
		remember()
		// pair draws an attacker and a victim.
		pair := func(rt *rapid.T) (from, victim *mAcct) {
			i := rapid.IntRange(0, 1).Draw(rt, "attacker")
			return mc.accts[i], mc.accts[1-i]
		}
		// unchanged runs attack and fails unless the victim's state is
		// the same after it, and nothing the attacker saw names the
		// victim's ids.
		unchanged := func(rt *rapid.T, victim *mAcct, what string, attack func() []any) {
			rt.Helper()
			before := victimState(mc, victim)
			seen := attack()
			if diff := cmp.Diff(before, victimState(mc, victim)); diff != "" {
				rt.Fatalf("%s changed the other account's state (-before +after):\n%s", what, diff)
			}
			raw, err := json.Marshal(seen)
			if err != nil {
				rt.Fatal(err)
			}
			for id := range ever[victim.ref.id] {
				if strings.Contains(string(raw), id) {
					rt.Fatalf("%s: the attacker's answers mention %s of the other account:\n%s", what, id, raw)
				}
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"": func(rt *rapid.T) {
				mc.checkState(rt)
				remember()
			},
			// Operations that build state in either account.
			"createAny":  mc.createAny,
			"createAny2": mc.createAny,
			// rapid draws the first action in sorted order more often than
			// the others: let it be one that builds state.
			"0_createAny":    mc.createAny,
			"createUser":     mc.createUser,
			"createKey":      mc.createKey,
			"createFO":       mc.createFO,
			"createSub":      mc.createSub,
			"seedTunnel":     mc.seedTunnel,
			"updateFO":       mc.updateFO,
			"updateSub":      mc.updateSub,
			"updateUser":     mc.updateUser,
			"delete":         func(rt *rapid.T) { mc.kind(rt).del(mc, rt) },
			"clock":          mc.advanceClock,
			"createCA":       mc.createCA,
			"createOp":       mc.createOp,
			"updateOp":       mc.updateOp,
			"seedEndpoint":   mc.seedEndpoint,
			"createSource":   mc.createSource,
			"deleteSource":   mc.deleteSource,
			"boundEndpoints": mc.boundEndpoints,
			// Attacks.
			"probe": func(rt *rapid.T) {
				from, victim := pair(rt)
				k := mc.kind(rt)
				unchanged(rt, victim, "get, update and delete by the other account", func() []any {
					k.probe(mc, rt, from, victim)
					return nil
				})
			},
			"list": func(rt *rapid.T) {
				from, victim := pair(rt)
				unchanged(rt, victim, "lists of the other account", func() []any {
					var seen []any
					for _, k := range mc.kinds {
						seen = append(seen, k.listAll(mc, rt, from)...)
					}
					outcomes.note("cross-account-list all_kinds", nil, true)
					return seen
				})
			},
			"sources": func(rt *rapid.T) {
				from, victim := pair(rt)
				unchanged(rt, victim, "the sources of the other account's subscriptions", func() []any {
					return sourceAttack(mc, rt, from, victim)
				})
			},
			"boundEndpoints2": func(rt *rapid.T) {
				// The other account's operators' bound endpoints are not
				// found, and one's own operators (a selector of "true"
				// matches every endpoint) never bind the other's
				// endpoints.
				from, victim := pair(rt)
				unchanged(rt, victim, "bound endpoints across accounts", func() []any {
					return boundEndpointsAttack(mc, rt, from, victim)
				})
			},
			"reference": func(rt *rapid.T) {
				from, victim := pair(rt)
				unchanged(rt, victim, "references to the other account's resources", func() []any {
					return referenceAttack(mc, rt, from, victim)
				})
			},
			"sameNames": func(rt *rapid.T) {
				// Names are unique per account only: the attacker may
				// take the victim's service user names.
				from, victim := pair(rt)
				if len(victim.ref.users.items) == 0 {
					rt.Skip("victim has no service user")
				}
				name := rapid.SampledFrom(victim.ref.users.items).Draw(rt, "victim_user").Name
				unchanged(rt, victim, "a service user named as the other account's", func() []any {
					in := account.ServiceUserCreate{Name: name}
					want, f := mc.m.createUser(from.ref, in, mc.now())
					got, err := account.NewServiceUsers(from.raw).Create(mc.ctx, &in)
					if expect(rt, "cross-account-name service_user", err, f, false) {
						want = mc.m.insertUser(from.ref, want, mc.noteID(rt, "service", got.ID))
						same(rt, "created service user", want, *got)
						return []any{got}
					}
					return nil
				})
			},
		})
	})
}

// referenceAttack makes from's client refer to victim's resources: a
// failover of the victim's backends, a subscription to its destinations,
// an API key owned by its service user, and updates that do the same to
// from's own resources. Each must be refused as if the id did not exist.
func referenceAttack(mc *machine, rt *rapid.T, from, victim *mAcct) []any {
	var seen []any
	pick := func(ids []string, label string) string {
		if len(ids) == 0 {
			rt.Skip("victim has nothing to refer to")
		}
		return rapid.SampledFrom(ids).Draw(rt, label)
	}
	switch rapid.IntRange(0, 4).Draw(rt, "reference_kind") {
	case 0:
		id := pick(victim.backendIDs(), "victim_backend")
		got, err := backends.NewFailovers(from.raw).Create(mc.ctx, &backends.FailoverCreate{Backends: []string{id}})
		expect(rt, "cross-account-ref failover.backends", err, failBad(acctapi.CodeUnknownBackend), false)
		seen = append(seen, got)
	case 1:
		id := pick(victim.ref.dsts.ids(), "victim_destination")
		got, err := events.NewSubscriptions(from.raw).Create(mc.ctx, &events.SubscriptionCreate{DestinationIDs: []string{id}})
		expect(rt, "cross-account-ref subscription.destination_ids", err, failBad(acctapi.CodeUnknownDestination), false)
		seen = append(seen, got)
	case 2:
		id := pick(victim.ref.users.ids(), "victim_user")
		got, err := account.NewAPIKeys(from.raw).Create(mc.ctx, &account.APIKeyCreate{OwnerID: id})
		expect(rt, "cross-account-ref api_key.owner_id", err, failInvalid, false)
		seen = append(seen, got)
	case 3:
		own := pick(from.ref.fos.ids(), "own_failover")
		id := pick(victim.backendIDs(), "victim_backend")
		got, err := backends.NewFailovers(from.raw).Update(mc.ctx, &backends.FailoverUpdate{ID: own, Backends: &[]string{id}})
		expect(rt, "cross-account-ref failover.backends(update)", err, failBad(acctapi.CodeUnknownBackend), false)
		seen = append(seen, got)
	default:
		own := pick(from.ref.subs.ids(), "own_subscription")
		id := pick(victim.ref.dsts.ids(), "victim_destination")
		got, err := events.NewSubscriptions(from.raw).Update(mc.ctx, &events.SubscriptionUpdate{ID: own, DestinationIDs: &[]string{id}})
		expect(rt, "cross-account-ref subscription.destination_ids(update)", err, failBad(acctapi.CodeUnknownDestination), false)
		seen = append(seen, got)
	}
	return seen
}

// sourceAttack addresses the sources of one of victim's subscriptions
// through from's client: list, get, create, update and delete must all be
// 404, as if the subscription did not exist.
func sourceAttack(mc *machine, rt *rapid.T, from, victim *mAcct) []any {
	if len(victim.ref.subs.items) == 0 {
		rt.Skip("victim has no subscription")
	}
	sub := rapid.SampledFrom(victim.ref.subs.items).Draw(rt, "victim_subscription")
	typ := "api_key_created.v0"
	if len(sub.Sources) > 0 {
		typ = rapid.SampledFrom(sub.Sources).Draw(rt, "victim_source").Type
	}
	src := events.NewSources(from.raw)
	list, err := src.List(mc.ctx, sub.ID)
	expect(rt, "cross-account-list event_sources", err, failNotFound, false)
	got, err := src.Get(mc.ctx, sub.ID, typ)
	expect(rt, "cross-account-get event_source", err, failNotFound, false)
	created, err := src.Create(mc.ctx, sub.ID, &events.SourceCreate{Type: rapid.SampledFrom([]string{typ, "vault_created.v0"}).Draw(rt, "new_type")})
	expect(rt, "cross-account-create event_source", err, failNotFound, false)
	updated, err := src.Update(mc.ctx, &events.SourceUpdate{SubscriptionID: sub.ID, Type: typ})
	expect(rt, "cross-account-update event_source", err, failNotFound, false)
	err = src.Delete(mc.ctx, sub.ID, typ)
	expect(rt, "cross-account-delete event_source", err, failNotFound, false)
	return []any{list, got, created, updated}
}

// boundEndpointsAttack lists the bound endpoints of one of victim's
// operators through from's client (404), and every page of the bound
// endpoints of each of from's own operators, which must be what the
// model says from's own endpoints give.
func boundEndpointsAttack(mc *machine, rt *rapid.T, from, victim *mAcct) []any {
	var seen []any
	ops := k8sop.NewOperators(from.raw)
	if ids := victim.ref.ops.ids(); len(ids) > 0 {
		id := rapid.SampledFrom(ids).Draw(rt, "victim_operator")
		page, err := ops.BoundEndpointsPage(mc.ctx, id, nil)
		expect(rt, "cross-account-list bound_endpoints", err, failNotFound, false)
		seen = append(seen, page)
	}
	for _, id := range from.ref.ops.ids() {
		want, _ := mc.m.boundEndpoints(from.ref, id)
		got := []k8sop.Endpoint{}
		for e, err := range ops.BoundEndpoints(mc.ctx, id, &acctapi.ListOptions{Limit: rapid.IntRange(1, 5).Draw(rt, "limit")}) {
			if err != nil {
				rt.Fatalf("bound endpoints of %s: %v", id, err)
			}
			got = append(got, e)
		}
		same(rt, "bound endpoints of "+id, want, got)
		seen = append(seen, got)
	}
	outcomes.note("own-list bound_endpoints", nil, true)
	return seen
}

// victimState is everything stored for a, read with the fake's own
// inspection API, by kind.
func victimState(mc *machine, a *mAcct) map[string]any {
	out := map[string]any{"tunnels": fake.List[fake.Tunnel](mc.srv, a.ref.id), "endpoints": fake.List[k8sop.Endpoint](mc.srv, a.ref.id)}
	for i, k := range mc.kinds {
		out[string(rune('a'+i))] = k.state(mc, a)
	}
	return out
}

// accountIDs returns every id a holds now, by the model (which the
// invariant keeps equal to the fake).
func accountIDs(a *mAcct) []string {
	r := a.ref
	return slices.Concat(r.users.ids(), r.keys.ids(), r.hrs.ids(), r.fos.ids(), r.tgs.ids(), r.tunnels.ids(), r.dsts.ids(), r.subs.ids(),
		r.cas.ids(), r.ops.ids(), r.eps.ids())
}
