package account_test

import (
	"testing"

	"github.com/acctapi/acctapi/account"
)

func FuzzRequests(f *testing.F) {
	fuzzRequests(f, []func() validator{
		func() validator { return new(account.APIKeyCreate) },
		func() validator { return new(account.APIKeyUpdate) },
		func() validator { return new(account.ServiceUserCreate) },
		func() validator { return new(account.ServiceUserUpdate) },
		func() validator { return new(account.CertificateAuthorityCreate) },
		func() validator { return new(account.CertificateAuthorityUpdate) },
	},
		`{"description":"ci","metadata":"{}","owner_id":"usr_1"}`,
		`{"id":"ak_1","description":null,"metadata":""}`,
		`{"name":"bot","active":false}`,
		`{"id":"service_1","name":""}`,
		`{"ca_pem":`+quote(caPEM)+`}`,
		`{"id":"ca_1","description":"`+text(256)+`"}`,
		`[]`,
	)
}
