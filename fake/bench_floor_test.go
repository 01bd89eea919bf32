package fake

import (
	"strconv"
	"testing"
	"time"

	"github.com/acctapi/acctapi/account"
)

// BenchmarkMemdbFloor measures what go-memdb alone costs for the store's
// part of creating a service user: one write transaction inserting one
// object into the service-user table (its one index) and committing, with
// ids made as the fake makes them, on a store that grows as the benchmark
// runs, as BenchmarkCreateServiceUser's does. It is the floor under that
// benchmark's figure: no HTTP, JSON, authentication or validation.
func BenchmarkMemdbFloor(b *testing.B) {
	db := newDB()
	ids := newIDGen(1)
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id, name := ids.next("service", now), strconv.Itoa(i)
		txn := db.Txn(true)
		o := &object{Account: "ac_1", Kind: kindSvcUser, ID: id, Unique: uniqueKey(kindSvcUser, "ac_1", name),
			Value: account.ServiceUser{ID: id, Name: name, Active: true, CreatedAt: now}}
		if err := insert(txn, o); err != nil {
			b.Fatal(err)
		}
		txn.Commit()
	}
}
