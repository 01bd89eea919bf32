package account_test

import (
	"testing"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/apitest"
)

func FuzzRequests(f *testing.F) {
	apitest.FuzzRequests(f, []func() apitest.Validator{
		apitest.New[account.APIKeyCreate],
		apitest.New[account.APIKeyUpdate],
		apitest.New[account.ServiceUserCreate],
		apitest.New[account.ServiceUserUpdate],
		apitest.New[account.CertificateAuthorityCreate],
		apitest.New[account.CertificateAuthorityUpdate],
	},
		`{"description":"ci","metadata":"{}","owner_id":"usr_1"}`,
		`{"id":"ak_1","description":null,"metadata":""}`,
		`{"name":"bot","active":false}`,
		`{"id":"service_1","name":""}`,
		`{"ca_pem":`+apitest.Quote(caPEM)+`}`,
		`{"id":"ca_1","description":"`+apitest.Text(256)+`"}`,
		`[]`,
	)
}
