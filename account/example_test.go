package account_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/internal/apitest"
)

func ExampleAPIKeys_Create() {
	c, stop := apitest.ExampleClient(`{"id": "ak_2NTVHQlDXrEf1EGHRoHIRJPx1bw", "uri": "https://api.example/api_keys/ak_2NTVHQlDXrEf1EGHRoHIRJPx1bw", "description": "ci",
		"created_at": "2025-03-24T19:59:30Z", "token": "2NTVHQ_secret", "owner_id": "usr_1"}`)
	defer stop()

	key, err := account.NewAPIKeys(c).Create(context.Background(), &account.APIKeyCreate{Description: "ci"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The token is shown only now; store it.
	fmt.Println(key.ID, *key.Token)
	// Output: ak_2NTVHQlDXrEf1EGHRoHIRJPx1bw 2NTVHQ_secret
}

func ExampleServiceUsers_List() {
	c, stop := apitest.ExampleClient(`{"service_users": [
		{"id": "service_2", "name": "deploy", "active": true, "created_at": "2025-08-20T21:44:08Z"},
		{"id": "service_1", "name": "ci", "active": false, "created_at": "2025-08-19T10:00:00Z"}
	], "uri": "https://api.example/service_users", "next_page_uri": null}`)
	defer stop()

	ctx := context.Background()
	for u, err := range account.NewServiceUsers(c).List(ctx, &acctapi.FilterOptions{Limit: 50}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(u.Name, u.Active)
	}
	// Output:
	// deploy true
	// ci false
}

func ExampleServiceUserCreate_Validate() {
	r := &account.ServiceUserCreate{}
	err := r.Validate()
	for _, fe := range acctapi.FieldErrors(err) {
		fmt.Println(fe.Field, fe.Code, fe.Reason)
	}
	fmt.Println(errors.Is(err, acctapi.ErrInvalid))
	// Output:
	// name ERR_NGROK_4109 is required
	// true
}

func ExampleParseCA() {
	pemText, err := os.ReadFile("testdata/ca.pem")
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := account.ParseCA(string(pemText))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.SubjectCommonName)
	fmt.Println(info.NotBefore, info.NotAfter)
	fmt.Println(info.KeyUsages, info.ExtendedKeyUsages)
	// Output:
	// Example Root CA
	// 2024-01-01 00:00:00 +0000 UTC 2034-01-01 00:00:00 +0000 UTC
	// [digital_signature cert_sign crl_sign] [server_auth client_auth]
}

func ExampleCertificateAuthorities_Delete() {
	c, stop := apitest.ExampleClient("")
	defer stop()

	err := account.NewCertificateAuthorities(c).Delete(context.Background(), "ca_2k5okJUKY1GccVee92VdRIKGm63")
	fmt.Println(err)
	// Output: <nil>
}
