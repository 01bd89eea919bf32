package account_test

import (
	"testing"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/google/go-cmp/cmp"
)

func TestGoldenRoundTrip(t *testing.T) {
	apitest.RunGolden(t, []apitest.GoldenFile{
		{"service_user.golden.json", new(account.ServiceUser)},
		{"service_user_list.golden.json", new(account.ServiceUserList)},
		{"bot_user_list.golden.json", new(account.BotUserList)},
		{"api_key.golden.json", new(account.APIKey)},
		{"api_key_list.golden.json", new(account.APIKeyList)},
		{"certificate_authority.golden.json", new(account.CertificateAuthority)},
		{"certificate_authority_list.golden.json", new(account.CertificateAuthorityList)},
	})
}

func TestGoldenValues(t *testing.T) {
	var list account.APIKeyList
	apitest.RoundTrip(t, "api_key_list.golden.json", &list)
	if tok := list.Keys[0].Token; tok != nil {
		t.Errorf("listed key's Token = %q, want nil", *tok)
	}
	if got := list.NextPage(); got != "" {
		t.Errorf("NextPage() = %q, want \"\" on the last page", got)
	}

	var ca account.CertificateAuthority
	apitest.RoundTrip(t, "certificate_authority.golden.json", &ca)
	info, err := account.ParseCA(ca.CAPEM)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*info, ca.CAInfo); diff != "" {
		t.Errorf("golden members differ from ParseCA(ca_pem) (-ParseCA +golden):\n%s", diff)
	}
}
