package acctapi

// Ref is a reference to another resource: its id and its absolute URI.
// The zero value is an empty reference.
type Ref struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
}
