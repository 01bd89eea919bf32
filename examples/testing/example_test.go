package keyrotation_test

import (
	"context"
	"fmt"
	"time"

	"github.com/acctapi/acctapi/account"
	keyrotation "github.com/acctapi/acctapi/examples/testing"
	"github.com/acctapi/acctapi/fake"
)

// RotateKeys against the fake: two keys from last year are replaced by a
// new one; a key made an hour ago stays.
func ExampleRotateKeys() {
	clock := fake.NewManualClock(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	srv, err := fake.New(fake.WithoutListener(), fake.WithClock(clock), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	bot, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "deploy-bot"})
	if err != nil {
		fmt.Println(err)
		return
	}
	seedKey := func(desc string) {
		if _, err := fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{OwnerID: bot.ID, Description: desc}); err != nil {
			fmt.Println(err)
		}
	}
	seedKey("2025 a")
	seedKey("2025 b")
	clock.Set(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))
	seedKey("this morning")
	now := clock.Advance(time.Hour)

	created, deleted, err := keyrotation.RotateKeys(context.Background(), account.NewAPIKeys(srv.Client()), bot.ID, now.AddDate(0, 0, -30))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("new key:", created.Description, created.Token != nil)
	fmt.Println("deleted:", len(deleted))
	for _, k := range fake.List[account.APIKey](srv, "") {
		if k.OwnerID == bot.ID {
			fmt.Println("kept:", k.Description, k.CreatedAt.Format(time.DateTime))
		}
	}
	// Output:
	// new key: rotated true
	// deleted: 2
	// kept: rotated 2026-03-01 12:00:00
	// kept: this morning 2026-03-01 11:00:00
}
