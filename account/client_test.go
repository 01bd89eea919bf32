package account_test

import (
	"testing"

	"github.com/acctapi/acctapi/account"
)

func TestAPIKeys(t *testing.T) {
	testCalls(t, crudCalls[*account.APIKeys, account.APIKey, account.APIKeyList](account.NewAPIKeys, "/api_keys",
		&account.APIKeyCreate{Description: "ci", OwnerID: "service_1"}, `{"description":"ci","owner_id":"service_1"}`,
		&account.APIKeyUpdate{ID: id, Metadata: ptr("")}, `{"id":"a/b c","metadata":""}`,
		filter, filterQuery))
}

func TestServiceUsers(t *testing.T) {
	testCalls(t, crudCalls[*account.ServiceUsers, account.ServiceUser, account.ServiceUserList](account.NewServiceUsers, "/service_users",
		&account.ServiceUserCreate{Name: "ci", Active: ptr(false)}, `{"name":"ci","active":false}`,
		&account.ServiceUserUpdate{ID: id, Active: ptr(true)}, `{"id":"a/b c","active":true}`,
		filter, filterQuery))
}

func TestBotUsers(t *testing.T) {
	testCalls(t, crudCalls[*account.BotUsers, account.BotUser, account.BotUserList](account.NewBotUsers, "/bot_users",
		&account.BotUserCreate{Name: "ci"}, `{"name":"ci"}`,
		&account.BotUserUpdate{ID: id, Name: ptr("renamed")}, `{"id":"a/b c","name":"renamed"}`,
		paging, pagingQuery))
}

func TestCertificateAuthorities(t *testing.T) {
	testCalls(t, crudCalls[*account.CertificateAuthorities, account.CertificateAuthority, account.CertificateAuthorityList](
		account.NewCertificateAuthorities, "/certificate_authorities",
		&account.CertificateAuthorityCreate{Metadata: "{}", CAPEM: caPEM}, `{"metadata":"{}","ca_pem":`+quote(caPEM)+`}`,
		&account.CertificateAuthorityUpdate{ID: id, Description: ptr("root")}, `{"id":"a/b c","description":"root"}`,
		filter, filterQuery))
}

func TestNilOptions(t *testing.T) {
	testCalls(t, crudCalls[*account.APIKeys, account.APIKey, account.APIKeyList](account.NewAPIKeys, "/api_keys",
		&account.APIKeyCreate{}, `{}`, &account.APIKeyUpdate{ID: id}, `{"id":"a/b c"}`, nil, ""))
}
