package acctapi

// Ref is a reference to another resource: its id and its absolute URI.
// The zero value is an empty reference.
type Ref struct {
	// ID is the id of the resource referred to, such as "tn_..." for a tunnel.
	ID string `json:"id"`
	// URI is that resource's absolute URL, filled in by the server.
	URI string `json:"uri"`
}
