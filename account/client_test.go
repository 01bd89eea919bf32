package account_test

import (
	"testing"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/acctapi/acctapi/internal/resources"
)

func TestAPIKeys(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*account.APIKeys, account.APIKey, account.APIKeyList](account.NewAPIKeys, resources.APIKeys.Path(),
		&account.APIKeyCreate{Description: "ci", OwnerID: "service_1"}, `{"description":"ci","owner_id":"service_1"}`,
		&account.APIKeyUpdate{ID: apitest.ID, Metadata: apitest.Ptr("")}, `{"id":"a/b c","metadata":""}`,
		apitest.Filter(), apitest.FilterQuery))
}

func TestServiceUsers(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*account.ServiceUsers, account.ServiceUser, account.ServiceUserList](account.NewServiceUsers, resources.ServiceUsers.Path(),
		&account.ServiceUserCreate{Name: "ci", Active: apitest.Ptr(false)}, `{"name":"ci","active":false}`,
		&account.ServiceUserUpdate{ID: apitest.ID, Active: apitest.Ptr(true)}, `{"id":"a/b c","active":true}`,
		apitest.Filter(), apitest.FilterQuery))
}

func TestBotUsers(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*account.BotUsers, account.BotUser, account.BotUserList](account.NewBotUsers, resources.ServiceUsers.AliasPath(),
		&account.BotUserCreate{Name: "ci"}, `{"name":"ci"}`,
		&account.BotUserUpdate{ID: apitest.ID, Name: apitest.Ptr("renamed")}, `{"id":"a/b c","name":"renamed"}`,
		apitest.Paging(), apitest.PagingQuery))
}

func TestCertificateAuthorities(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*account.CertificateAuthorities, account.CertificateAuthority, account.CertificateAuthorityList](
		account.NewCertificateAuthorities, "/certificate_authorities",
		&account.CertificateAuthorityCreate{Metadata: "{}", CAPEM: caPEM}, `{"metadata":"{}","ca_pem":`+apitest.Quote(caPEM)+`}`,
		&account.CertificateAuthorityUpdate{ID: apitest.ID, Description: apitest.Ptr("root")}, `{"id":"a/b c","description":"root"}`,
		apitest.Filter(), apitest.FilterQuery))
}

func TestNilOptions(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*account.APIKeys, account.APIKey, account.APIKeyList](account.NewAPIKeys, resources.APIKeys.Path(),
		&account.APIKeyCreate{}, `{}`, &account.APIKeyUpdate{ID: apitest.ID}, `{"id":"a/b c"}`, nil, ""))
}
