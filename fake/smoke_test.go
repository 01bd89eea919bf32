package fake_test

import (
	"context"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

func TestSmoke(t *testing.T) {
	for _, inMem := range []bool{false, true} {
		var opts []fake.Option
		if inMem {
			opts = append(opts, fake.WithoutListener())
		}
		srv := fake.Start(t, opts...)
		su := account.NewServiceUsers(srv.Client())
		ctx := context.Background()
		u, err := su.Create(ctx, &account.ServiceUserCreate{Name: "a"})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", u)
		for i := range 5 {
			_, err := su.Create(ctx, &account.ServiceUserCreate{Name: string(rune('b' + i))})
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err = su.Create(ctx, &account.ServiceUserCreate{Name: "a"})
		t.Log(err)
		n := 0
		for u, err := range su.List(ctx, &acctapi.FilterOptions{Limit: 2}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			_ = u
		}
		t.Log(n)
		p, err := su.Page(ctx, &acctapi.FilterOptions{Limit: 2, Filter: `obj.created_at > timestamp("2020-01-01T00:00:00Z")`})
		t.Log(p, err)
		_, err = su.Page(ctx, &acctapi.FilterOptions{Limit: 2, Filter: `obj.name == "x"`})
		t.Log(err)
		for _, e := range srv.Journal()[:2] {
			t.Logf("%+v", e)
		}
	}
}
