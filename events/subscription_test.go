package events

import (
	"fmt"
	"slices"
	"testing"

	"github.com/acctapi/acctapi/internal/apitest"
)

// src makes a subscription's sources of the given types.
func src(types ...string) []SubscriptionSource {
	var out []SubscriptionSource
	for _, t := range types {
		out = append(out, SubscriptionSource{Type: t})
	}
	return out
}

func TestSubscriptionCreateValidate(t *testing.T) {
	types := Types()
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &SubscriptionCreate{}, nil},
		{"full", &SubscriptionCreate{Sources: src("api_key_created.v0", "http_request_complete.v0"), DestinationIDs: []string{"ed_1", "ed_2"}}, nil},
		{"every known type", &SubscriptionCreate{Sources: src(types...)}, nil},
		{"first and last known types", &SubscriptionCreate{Sources: src(types[0], types[len(types)-1])}, nil},
		{"unknown type", &SubscriptionCreate{Sources: src("api_key_created.v0", "api_key_created.v1")}, []string{"sources[1].type" + badType}},
		{"type in upper case", &SubscriptionCreate{Sources: src("Api_key_created.v0")}, []string{"sources[0].type" + badType}},
		{"type without version", &SubscriptionCreate{Sources: src("api_key_created")}, []string{"sources[0].type" + badType}},
		{"type padded", &SubscriptionCreate{Sources: src("api_key_created.v0 ")}, []string{"sources[0].type" + badType}},
		{"empty type", &SubscriptionCreate{Sources: src("")}, []string{"sources[0].type" + badType}},
		{"unknown type twice", &SubscriptionCreate{Sources: src("x", "x")}, []string{"sources[0].type" + badType, "sources[1].type" + badType, "sources[1]" + invalid}},
		{"duplicate type", &SubscriptionCreate{Sources: src("vault_deleted.v0", "domain_created.v0", "vault_deleted.v0")}, []string{"sources[2]" + invalid}},
		{"empty destination id", &SubscriptionCreate{DestinationIDs: []string{"ed_1", ""}}, []string{"destination_ids[1]" + invalid}},
		{"duplicate destination id", &SubscriptionCreate{DestinationIDs: []string{"ed_1", "ed_1"}}, []string{"destination_ids[1]" + invalid}},
		{"destinations at the bound", &SubscriptionCreate{DestinationIDs: destIDs(MaxDestinationIDs)}, nil},
		// One error for the list, whatever its items hold.
		{"destinations over the bound", &SubscriptionCreate{DestinationIDs: append(destIDs(MaxDestinationIDs), "", "")}, []string{"destination_ids" + invalid}},
	})
}

// destIDs returns n distinct destination ids.
func destIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("ed_%d", i)
	}
	return ids
}

func TestSubscriptionUpdateValidate(t *testing.T) {
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &SubscriptionUpdate{ID: "esb_1"}, nil},
		{"clear lists", &SubscriptionUpdate{Sources: &[]SubscriptionSource{}, DestinationIDs: &[]string{}}, nil},
		{"known types", &SubscriptionUpdate{Sources: apitest.Ptr(src("tcp_connection_closed.v0", "vault_updated.v0"))}, nil},
		{"unknown type", &SubscriptionUpdate{Sources: &[]SubscriptionSource{{"API_KEY_CREATED.v0"}}}, []string{"sources[0].type" + badType}},
		{"empty type", &SubscriptionUpdate{Sources: apitest.Ptr(src(""))}, []string{"sources[0].type" + badType}},
		{"duplicate type", &SubscriptionUpdate{Sources: apitest.Ptr(src("vault_updated.v0", "vault_updated.v0"))}, []string{"sources[1]" + invalid}},
		{"destination ids", &SubscriptionUpdate{DestinationIDs: &[]string{"ed_1", "ed_2"}}, nil},
		{"empty destination id", &SubscriptionUpdate{DestinationIDs: &[]string{""}}, []string{"destination_ids[0]" + invalid}},
		{"duplicate destination id", &SubscriptionUpdate{DestinationIDs: &[]string{"ed_1", "ed_2", "ed_1"}}, []string{"destination_ids[2]" + invalid}},
		{"destinations over the bound", &SubscriptionUpdate{DestinationIDs: apitest.Ptr(destIDs(MaxDestinationIDs + 1))}, []string{"destination_ids" + invalid}},
	})
}

func TestSourceValidate(t *testing.T) {
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"create", &SourceCreate{Type: "tcp_connection_closed.v0"}, nil},
		{"create with subscription", &SourceCreate{SubscriptionID: "esb_1", Type: "secret_updated.v0"}, nil},
		{"create unknown type", &SourceCreate{Type: "secret_updated"}, []string{"type" + badType}},
		{"create empty type", &SourceCreate{}, []string{"type" + badType}},
		{"create type in upper case", &SourceCreate{Type: "SECRET_UPDATED.v0"}, []string{"type" + badType}},
		{"update", &SourceUpdate{SubscriptionID: "esb_1", Type: "secret_updated.v0"}, nil},
		{"update without subscription", &SourceUpdate{Type: "secret_updated.v0"}, []string{"subscription_id" + invalid}},
		{"update unknown type", &SourceUpdate{SubscriptionID: "esb_1", Type: "x"}, []string{"type" + badType}},
		{"update empty", &SourceUpdate{}, []string{"subscription_id" + invalid, "type" + badType}},
	})
}

func TestTypes(t *testing.T) {
	types := Types()
	if len(types) != 17*3+4 || !slices.IsSorted(types) {
		t.Fatalf("Types() has %d sorted=%v; want 55 sorted", len(types), slices.IsSorted(types))
	}
	for _, typ := range []string{"api_key_created.v0", "vault_deleted.v0", "ip_policy_rule_updated.v0", "agent_session_stop.v0", "http_request_complete.v0"} {
		if !IsEventType(typ) {
			t.Errorf("IsEventType(%q) = false", typ)
		}
	}
	for _, typ := range []string{"", "api_key_created", "api_key_created.v1", "Api_key_created.v0", "agent_session_start_created.v0"} {
		if IsEventType(typ) {
			t.Errorf("IsEventType(%q) = true", typ)
		}
	}
	types[0] = "changed"
	if Types()[0] == "changed" {
		t.Error("Types shares its slice with the caller")
	}
}
