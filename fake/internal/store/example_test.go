package store_test

import (
	"errors"
	"fmt"

	"github.com/acctapi/acctapi/fake/internal/store"
)

// A table is defined with its constraints, the store opened, and rows
// written in transactions: a unique value another row holds is refused,
// and nothing of the failed write is kept.
func Example() {
	type user struct{ Name string }
	errTaken := errors.New("name taken")
	var s store.Schema
	users := store.Define(&s, "users", store.Constraints[user, struct{}]{
		Unique: func(u user) string { return u.Name },
		Taken:  func() error { return errTaken },
	})
	db, err := s.Open()
	if err != nil {
		fmt.Println(err)
		return
	}
	insert := func(id, name string) error {
		return db.Write(func(tx *store.Txn) error { return users.Insert(tx, "ac_1", id, user{Name: name}, struct{}{}) })
	}
	fmt.Println(insert("u_1", "ci"), insert("u_2", "ci"), insert("u_2", "cd"))

	tx := db.Read()
	names, ids, more, _ := users.Page(&tx, "ac_1", "", 10, nil)
	fmt.Println(names, ids, more)
	_, ok := users.Get(&tx, "ac_2", "u_1")
	fmt.Println("another account sees u_1:", ok)
	// Output:
	// <nil> name taken <nil>
	// [{cd} {ci}] [u_2 u_1] false
	// another account sees u_1: false
}
