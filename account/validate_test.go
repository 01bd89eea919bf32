package account_test

import (
	"os"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/apitest"
)

// caPEM is a CA certificate: testdata/ca.pem.
var caPEM = func() string {
	b, err := os.ReadFile("testdata/ca.pem")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestValidateAnnotations(t *testing.T) {
	apitest.RunAnnotations(t, []apitest.Annotated{
		{"APIKeyCreate", func(d, m string) apitest.Validator { return &account.APIKeyCreate{Description: d, Metadata: m} }},
		{"APIKeyUpdate", func(d, m string) apitest.Validator {
			return &account.APIKeyUpdate{ID: "ak_1", Description: &d, Metadata: &m}
		}},
		{"CertificateAuthorityCreate", func(d, m string) apitest.Validator {
			return &account.CertificateAuthorityCreate{Description: d, Metadata: m, CAPEM: caPEM}
		}},
		{"CertificateAuthorityUpdate", func(d, m string) apitest.Validator {
			return &account.CertificateAuthorityUpdate{ID: "ca_1", Description: &d, Metadata: &m}
		}},
	})
}

func TestValidate(t *testing.T) {
	noName, longName := "name "+acctapi.CodeNameRequired, "name "+acctapi.CodeNameTooLong
	badPEM := "ca_pem " + acctapi.CodeInvalidValue
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"service user create: no name", &account.ServiceUserCreate{}, []string{noName}},
		{"service user create: name 1 byte", &account.ServiceUserCreate{Name: "a"}, nil},
		{"service user create: name 255 bytes", &account.ServiceUserCreate{Name: apitest.Text(255)}, nil},
		{"service user create: name 256 bytes", &account.ServiceUserCreate{Name: apitest.Text(256)}, []string{longName}},
		{"service user update: nothing", &account.ServiceUserUpdate{ID: "service_1"}, nil},
		{"service user update: active only", &account.ServiceUserUpdate{ID: "service_1", Active: apitest.Ptr(false)}, nil},
		{"service user update: empty name", &account.ServiceUserUpdate{Name: apitest.Ptr("")}, []string{noName}},
		{"service user update: name 255 bytes", &account.ServiceUserUpdate{Name: apitest.Ptr(apitest.Text(255))}, nil},
		{"service user update: name 256 bytes", &account.ServiceUserUpdate{Name: apitest.Ptr(apitest.Text(256))}, []string{longName}},
		{"bot user create: no name", &account.BotUserCreate{}, []string{noName}},
		{"bot user create: name 1 byte", &account.BotUserCreate{Name: "a"}, nil},
		{"bot user create: name 255 bytes", &account.BotUserCreate{Name: apitest.Text(255)}, nil},
		{"bot user create: name 256 bytes", &account.BotUserCreate{Name: apitest.Text(256)}, []string{longName}},
		{"bot user update: nothing", &account.BotUserUpdate{ID: "bot_1"}, nil},
		{"bot user update: empty name", &account.BotUserUpdate{Name: apitest.Ptr("")}, []string{noName}},
		{"bot user update: name 255 bytes", &account.BotUserUpdate{Name: apitest.Ptr(apitest.Text(255))}, nil},
		{"bot user update: name 256 bytes", &account.BotUserUpdate{Name: apitest.Ptr(apitest.Text(256))}, []string{longName}},
		{"api key create: owner", &account.APIKeyCreate{OwnerID: "service_1"}, nil},
		{"api key update: nothing", &account.APIKeyUpdate{ID: "ak_1"}, nil},
		{"certificate authority create: CA", &account.CertificateAuthorityCreate{CAPEM: caPEM}, nil},
		{"certificate authority create: no ca_pem", &account.CertificateAuthorityCreate{}, []string{badPEM}},
		{"certificate authority create: not PEM", &account.CertificateAuthorityCreate{CAPEM: "MIIB"}, []string{badPEM}},
		{"certificate authority create: two certificates", &account.CertificateAuthorityCreate{CAPEM: caPEM + caPEM}, []string{badPEM}},
		{"certificate authority create: not a CA", &account.CertificateAuthorityCreate{CAPEM: leafPEM}, []string{badPEM}},
		{"certificate authority create: every rule", &account.CertificateAuthorityCreate{Description: apitest.Text(256), Metadata: apitest.Text(4097)},
			[]string{"description " + acctapi.CodeDescriptionTooLong, "metadata " + acctapi.CodeMetadataTooLong, badPEM}},
		{"certificate authority update: nothing", &account.CertificateAuthorityUpdate{ID: "ca_1"}, nil},
	})
}

// TestUpdateEmptyNameMessage pins a review's finding: an update's empty
// name said "is required", though name is optional in an update.
func TestUpdateEmptyNameMessage(t *testing.T) {
	t.Parallel()
	for _, r := range []apitest.Validator{&account.ServiceUserUpdate{Name: apitest.Ptr("")}, &account.BotUserUpdate{Name: apitest.Ptr("")}} {
		if err := r.Validate(); err == nil || strings.Contains(err.Error(), "is required") || !strings.Contains(err.Error(), "is empty") {
			t.Errorf("%T with an empty name: %v; want it called empty, not required", r, err)
		}
	}
}
