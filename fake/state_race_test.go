package fake_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// holdOnce installs a one-shot reactor on method and pattern that removes
// itself (as a one-shot fault does, before its delay) and holds the
// request until release is closed; entered is closed once it holds it.
func holdOnce(srv *fake.Server, method, pattern string) (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var remove func()
	remove = srv.React(method, pattern, func(*http.Request) *fake.Fault {
		remove()
		close(entered)
		<-release
		return nil
	})
	return entered, release
}

// TestHeldRequestSeesStateAfter pins a review's finding: a request held
// by a reactor that was gone by the time it went on (a one-shot fault
// removes itself before its delay) was served from the state before the
// hold, by its key as it was: a GET held past the DELETE of its user
// answered 200 with the user, a create held while its key was deleted
// succeeded, and a create held while the clock moved on took the time it
// arrived, so its id sorted after a later one of a later created_at. It
// is now served as if it had only now arrived, whenever a reactor ran.
func TestHeldRequestSeesStateAfter(t *testing.T) {
	t.Parallel()
	status := func(err error) int {
		var e *acctapi.Error
		if errors.As(err, &e) {
			return e.StatusCode
		}
		return 0
	}
	t.Run("read", func(t *testing.T) {
		t.Parallel()
		srv, _ := start(t)
		users := account.NewServiceUsers(srv.Client())
		u := must(users.Create(t.Context(), &account.ServiceUserCreate{Name: "u"}))(t)
		entered, release := holdOnce(srv, "GET", "/service_users/*")
		done := make(chan error, 1)
		go func() { _, err := users.Get(t.Context(), u.ID); done <- err }()
		<-entered
		if err := users.Delete(t.Context(), u.ID); err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-done; status(err) != http.StatusNotFound {
			t.Errorf("GET held past the DELETE: %v; want 404", err)
		}
	})
	t.Run("key", func(t *testing.T) {
		t.Parallel()
		srv, _ := start(t)
		keys := account.NewAPIKeys(srv.Client())
		k := must(keys.Create(t.Context(), &account.APIKeyCreate{Description: "k"}))(t)
		c := must(srv.ClientFor(*k.Token))(t)
		entered, release := holdOnce(srv, "POST", "/service_users")
		done := make(chan error, 1)
		go func() {
			_, err := account.NewServiceUsers(c).Create(t.Context(), &account.ServiceUserCreate{Name: "late"})
			done <- err
		}()
		<-entered
		if err := keys.Delete(t.Context(), k.ID); err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-done; status(err) != http.StatusUnauthorized {
			t.Errorf("create held while its key was deleted: %v; want 401", err)
		}
		if n := len(fake.List[account.ServiceUser](srv, "")); n != 0 {
			t.Errorf("%d service users created by a deleted key", n)
		}
	})
	t.Run("clock", func(t *testing.T) {
		t.Parallel()
		srv, clk := start(t)
		users := account.NewServiceUsers(srv.Client())
		entered, release := holdOnce(srv, "POST", "/service_users")
		done := make(chan *account.ServiceUser, 1)
		go func() {
			u, err := users.Create(t.Context(), &account.ServiceUserCreate{Name: "a"})
			if err != nil {
				t.Error(err)
			}
			done <- u
		}()
		<-entered
		clk.Advance(time.Hour)
		b := must(users.Create(t.Context(), &account.ServiceUserCreate{Name: "b"}))(t)
		close(release)
		a := <-done
		if a == nil {
			return
		}
		if !a.CreatedAt.Equal(clk.Now()) || a.ID < b.ID {
			t.Errorf("held create: created %v, id %s; want the time it went on, %v, and an id after %s's (created %v)",
				a.CreatedAt, a.ID, clk.Now(), b.ID, b.CreatedAt)
		}
	})
}
