// Package clienthook carries what package acctapi tells its internal
// helpers about a Client without exporting it to users: the domain
// packages' request plumbing (internal/rest) needs to know whether a client
// validates requests, and acctapi cannot export that as API.
//
// Package acctapi sets every variable here once, in an init function,
// before any Client exists; nothing else writes them, so reading them needs
// no synchronization. This package imports nothing of the module, so
// acctapi can import it.
package clienthook

// Validates reports whether c, an *acctapi.Client, runs requests' Validate
// methods before sending, that is, was built without
// acctapi.WithoutValidation. It is set by package acctapi's init.
var Validates func(c any) bool
