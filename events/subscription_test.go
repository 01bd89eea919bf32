package events

import (
	"slices"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
)

func TestSubscriptionJSON(t *testing.T) {
	s := apitest.ReadGolden[Subscription](t, "subscription.json")
	if len(s.Sources) != 1 || len(s.Destinations) != 1 {
		t.Errorf("subscription = %+v", s)
	}
	apitest.ReadGolden[SourceList](t, "sources.json")
}

func TestSubscriptionCreateValidate(t *testing.T) {
	src := func(types ...string) []SubscriptionSource {
		var out []SubscriptionSource
		for _, t := range types {
			out = append(out, SubscriptionSource{Type: t})
		}
		return out
	}
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &SubscriptionCreate{}, nil},
		{"full", &SubscriptionCreate{Sources: src("api_key_created.v0", "http_request_complete.v0"), DestinationIDs: []string{"ed_1", "ed_2"}}, nil},
		{"description at limit", &SubscriptionCreate{Description: strings.Repeat("d", 255)}, nil},
		{"description past limit", &SubscriptionCreate{Description: strings.Repeat("d", 256)}, []string{"description " + acctapi.CodeDescriptionTooLong}},
		{"metadata at limit", &SubscriptionCreate{Metadata: strings.Repeat("m", 4096)}, nil},
		{"metadata past limit", &SubscriptionCreate{Metadata: strings.Repeat("m", 4097)}, []string{"metadata " + acctapi.CodeMetadataTooLong}},
		{"unknown type", &SubscriptionCreate{Sources: src("api_key_created.v0", "api_key_created.v1")}, []string{"sources[1].type" + invalid}},
		{"empty type", &SubscriptionCreate{Sources: src("")}, []string{"sources[0].type" + invalid}},
		{"duplicate type", &SubscriptionCreate{Sources: src("vault_deleted.v0", "domain_created.v0", "vault_deleted.v0")}, []string{"sources[2]" + invalid}},
		{"empty destination id", &SubscriptionCreate{DestinationIDs: []string{"ed_1", ""}}, []string{"destination_ids[1]" + invalid}},
		{"duplicate destination id", &SubscriptionCreate{DestinationIDs: []string{"ed_1", "ed_1"}}, []string{"destination_ids[1]" + invalid}},
	})
}

func TestSubscriptionUpdateValidate(t *testing.T) {
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &SubscriptionUpdate{ID: "esb_1"}, nil},
		{"clear lists", &SubscriptionUpdate{Sources: &[]SubscriptionSource{}, DestinationIDs: &[]string{}}, nil},
		{"description past limit", &SubscriptionUpdate{Description: apitest.Ptr(strings.Repeat("d", 256))}, []string{"description " + acctapi.CodeDescriptionTooLong}},
		{"metadata past limit", &SubscriptionUpdate{Metadata: apitest.Ptr(strings.Repeat("m", 4097))}, []string{"metadata " + acctapi.CodeMetadataTooLong}},
		{"unknown type", &SubscriptionUpdate{Sources: &[]SubscriptionSource{{"API_KEY_CREATED.v0"}}}, []string{"sources[0].type" + invalid}},
		{"duplicate destination id", &SubscriptionUpdate{DestinationIDs: &[]string{"ed_1", "ed_2", "ed_1"}}, []string{"destination_ids[2]" + invalid}},
	})
}

func TestSourceValidate(t *testing.T) {
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"create", &SourceCreate{Type: "tcp_connection_closed.v0"}, nil},
		{"create with subscription", &SourceCreate{SubscriptionID: "esb_1", Type: "secret_updated.v0"}, nil},
		{"create unknown type", &SourceCreate{Type: "secret_updated"}, []string{"type" + invalid}},
		{"create empty type", &SourceCreate{}, []string{"type" + invalid}},
		{"update", &SourceUpdate{SubscriptionID: "esb_1", Type: "secret_updated.v0"}, nil},
		{"update without subscription", &SourceUpdate{Type: "secret_updated.v0"}, []string{"subscription_id" + invalid}},
		{"update unknown type", &SourceUpdate{SubscriptionID: "esb_1", Type: "x"}, []string{"type" + invalid}},
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
