package property_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/examples/property"
	"github.com/acctapi/acctapi/fake"
)

func ExampleNormalizeName() {
	fmt.Printf("%q\n", property.NormalizeName("  Deploy   Bot\n"))
	fmt.Printf("%q\n", property.NormalizeName(" \t "))
	// Output:
	// "deploy-bot"
	// ""
}

// Two spellings of one name get one user.
func ExampleEnsureServiceUser() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	users := account.NewServiceUsers(srv.Client())

	a, err := property.EnsureServiceUser(ctx, users, "Deploy Bot")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := property.EnsureServiceUser(ctx, users, "  deploy   BOT ")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Name, a.ID == b.ID, len(fake.List[account.ServiceUser](srv, "")))

	_, err = property.EnsureServiceUser(ctx, users, "   ")
	fmt.Println(errors.Is(err, acctapi.ErrInvalid))
	// Output:
	// deploy-bot true 1
	// true
}
