package fake

import (
	"fmt"
	"sync"
	"testing"

	"github.com/acctapi/acctapi/account"
)

// TestNamesUnderConcurrency runs creates, renames and deletes of a few
// names from several goroutines, with snapshots restored in between, and
// checks that the names the server holds are exactly those its store
// holds. Run it with -race.
func TestNamesUnderConcurrency(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	users := account.NewServiceUsers(srv.Client())
	ctx := t.Context()
	snap := srv.Snapshot()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 60 {
				name := fmt.Sprintf("n%d", (g+i)%5)
				switch i % 4 {
				case 0, 1:
					if u, err := users.Create(ctx, &account.ServiceUserCreate{Name: name}); err == nil && i%8 == 1 {
						other := fmt.Sprintf("n%d", (g+i+1)%5)
						_, _ = users.Update(ctx, &account.ServiceUserUpdate{ID: u.ID, Name: &other})
					}
				case 2:
					for u, err := range users.List(ctx, nil) {
						if err != nil {
							break
						}
						if u.Name == name {
							_ = users.Delete(ctx, u.ID)
						}
					}
				case 3:
					if g == 0 {
						srv.Restore(snap)
						snap = srv.Snapshot()
					}
				}
			}
		})
	}
	wg.Wait()
	if err := srv.db.CheckUnique(); err != nil {
		t.Error(err)
	}
	seen := map[string]bool{}
	for _, u := range List[account.ServiceUser](srv, "") {
		if seen[u.Name] {
			t.Errorf("two service users named %q", u.Name)
		}
		seen[u.Name] = true
	}
}
