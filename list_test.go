package acctapi

import (
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuery(t *testing.T) {
	t.Parallel()
	badLimit := &FieldError{Field: "limit", Code: CodeBadLimit, Reason: "must be from 1 to 100"}
	tests := []struct {
		name string
		opts interface {
			Query() url.Values
			Validate() error
		}
		want    url.Values
		wantErr *FieldError
	}{
		{name: "nil ListOptions", opts: (*ListOptions)(nil), want: nil},
		{name: "nil FilterOptions", opts: (*FilterOptions)(nil), want: nil},
		{name: "zero ListOptions", opts: &ListOptions{}, want: url.Values{}},
		{name: "limit 0 is the default", opts: &ListOptions{Limit: 0, BeforeID: "x"}, want: url.Values{"before_id": {"x"}}},
		{name: "limit 1", opts: &ListOptions{Limit: 1}, want: url.Values{"limit": {"1"}}},
		{name: "limit 100", opts: &ListOptions{Limit: 100}, want: url.Values{"limit": {"100"}}},
		{name: "limit 101", opts: &ListOptions{Limit: 101}, want: url.Values{"limit": {"101"}}, wantErr: badLimit},
		{name: "limit -1", opts: &ListOptions{Limit: -1}, want: url.Values{"limit": {"-1"}}, wantErr: badLimit},
		{name: "filter limit 101", opts: &FilterOptions{Limit: 101, Filter: "true"}, want: url.Values{"limit": {"101"}, "filter": {"true"}}, wantErr: badLimit},
		{name: "all filter options", opts: &FilterOptions{Limit: 5, BeforeID: "b", Filter: `obj.id == "a"`},
			want: url.Values{"limit": {"5"}, "before_id": {"b"}, "filter": {`obj.id == "a"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.opts.Query()); diff != "" {
				t.Errorf("Query() (-want +got):\n%s", diff)
			}
			err := tt.opts.Validate()
			if tt.wantErr == nil {
				if err != nil {
					t.Errorf("Validate(): %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v; want a FieldError", err)
			}
			if diff := cmp.Diff(tt.wantErr, fe); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Validate() error %v does not wrap ErrInvalid", err)
			}
		})
	}
}
