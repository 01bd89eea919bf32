package fake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// TestDeletedInitialKey checks what follows the deletion of an account's
// initial key through the API: Accounts no longer lists its token, the
// token cannot be given to another account, and APIKey and Client keep
// naming it, so that they are answered 401 instead of acting as another
// account.
func TestDeletedInitialKey(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := context.Background()
	tok := srv.APIKey()
	keys := account.NewAPIKeys(srv.Client())
	list := collect(t, keys.List(ctx, nil))
	if len(list) != 1 {
		t.Fatalf("%d keys, want the initial one", len(list))
	}
	if err := keys.Delete(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}

	if got := srv.Accounts()[0].APIKeys; len(got) != 0 {
		t.Errorf("Accounts lists %d keys after the only one was deleted, want none", len(got))
	}
	_, err := srv.AddAccount(fake.Account{ID: "ac_other", APIKeys: []string{tok}})
	var fe *acctapi.FieldError
	if !errors.As(err, &fe) || fe.Field != "api_keys[0]" {
		t.Fatalf("AddAccount with the deleted key's token: %v, want a field error on api_keys[0]", err)
	}
	for _, a := range srv.Accounts() {
		if slices.Contains(a.APIKeys, tok) {
			t.Errorf("account %s lists the deleted key's token", a.ID)
		}
	}
	if srv.APIKey() != tok {
		t.Errorf("APIKey changed after the key was deleted")
	}
	_, err = account.NewServiceUsers(srv.Client()).Create(ctx, &account.ServiceUserCreate{Name: "x"})
	wantAPIError(t, err, 401, acctapi.CodeInvalidToken)
	other := must(srv.AddAccount(fake.Account{ID: "ac_other"}))(t)
	if n := len(fake.List[account.ServiceUser](srv, other.ID)); n != 0 {
		t.Errorf("the other account has %d service users", n)
	}
}

// TestInitialKeysListedWhileLive checks that Accounts lists an account's
// initial keys that still authenticate, and only those.
func TestInitialKeysListedWhileLive(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	a := must(srv.AddAccount(fake.Account{ID: "ac_two", APIKeys: []string{"tok-a", "tok-b"}}))(t)
	c := must(srv.ClientFor("tok-b"))(t)
	keys := account.NewAPIKeys(c)
	list := collect(t, keys.List(context.Background(), nil)) // newest first: tok-b's, then tok-a's
	if len(list) != 2 {
		t.Fatalf("%d keys, want 2", len(list))
	}
	if err := keys.Delete(context.Background(), list[1].ID); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(srv.Accounts(), func(x fake.Account) bool { return x.ID == a.ID })
	if got := srv.Accounts()[i].APIKeys; !slices.Equal(got, []string{"tok-b"}) {
		t.Errorf("Accounts lists %q, want only the live tok-b", got)
	}
}

// TestAccountUserUnique checks that a user id names one account: another
// account given it is refused naming user_id and the account that has it,
// whether the user id was given or made up, and a snapshot from before the
// account was added frees it again.
func TestAccountUserUnique(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	snap := srv.Snapshot()
	first := srv.Accounts()[0]
	a := must(srv.AddAccount(fake.Account{ID: "ac_a", UserID: "usr_a"}))(t)
	for _, taken := range []string{a.UserID, first.UserID} {
		_, err := srv.AddAccount(fake.Account{ID: "ac_b", UserID: taken})
		var fe *acctapi.FieldError
		if !errors.As(err, &fe) || fe.Field != "user_id" {
			t.Errorf("AddAccount with user %s: %v, want a field error on user_id", taken, err)
		}
	}
	if n := len(srv.Accounts()); n != 2 {
		t.Errorf("%d accounts after the refusals, want 2", n)
	}
	srv.Restore(snap)
	must(srv.AddAccount(fake.Account{ID: "ac_b", UserID: "usr_a"}))(t)
}

// TestClientStaysTheServers: a client of the server is the server's: an
// option pointing it at another base URL, which would send the server's
// key there, is an error (a misuse review).
func TestClientStaysTheServers(t *testing.T) {
	t.Parallel()
	for _, srv := range []*fake.Server{fake.Start(t), fake.Start(t, fake.WithoutListener())} {
		if _, err := srv.ClientFor(srv.APIKey(), acctapi.WithBaseURL("https://api.ngrok.com")); err == nil ||
			!strings.Contains(err.Error(), "not the server's "+srv.URL) {
			t.Errorf("ClientFor with another base URL: %v; want an error naming the server's URL", err)
		}
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "leave acctapi.WithBaseURL out") {
					t.Errorf("Client with another base URL: panic %v; want one saying to leave the option out", p)
				}
			}()
			srv.Client(acctapi.WithBaseURL("https://api.ngrok.com"))
		}()
		// The server's own URL, given again, is the server's.
		if _, err := srv.ClientFor(srv.APIKey(), acctapi.WithBaseURL(srv.URL)); err != nil {
			t.Errorf("ClientFor with the server's URL: %v", err)
		}
	}
}
