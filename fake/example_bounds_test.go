package fake_test

import (
	"context"
	"fmt"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// WithMaxResources bounds what each account stores, every kind together;
// the account's initial API key is one.
func ExampleWithMaxResources() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithMaxResources(2))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	users := account.NewServiceUsers(srv.Client())
	ctx := context.Background()
	_, err = users.Create(ctx, &account.ServiceUserCreate{Name: "ci"})
	fmt.Println(err)
	_, err = users.Create(ctx, &account.ServiceUserCreate{Name: "ops"})
	fmt.Println(acctapi.HasCode(err, acctapi.CodeResourceLimit))
	// Output:
	// <nil>
	// true
}
