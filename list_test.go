package acctapi

import (
	"errors"
	"net/url"
	"strings"
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
		// The filter's own rules, shared with the fake (a review found
		// them in the fake only).
		{name: "filter of 4,096 bytes", opts: &FilterOptions{Filter: strings.Repeat("a", 4096)},
			want: url.Values{"filter": {strings.Repeat("a", 4096)}}},
		{name: "filter of 4,097 bytes", opts: &FilterOptions{Filter: strings.Repeat("a", 4097)},
			want:    url.Values{"filter": {strings.Repeat("a", 4097)}},
			wantErr: &FieldError{Field: "filter", Code: CodeBadFilter, Reason: "is longer than 4096 bytes (4097)"}},
		{name: "filter not UTF-8", opts: &FilterOptions{Filter: "\xff"}, want: url.Values{"filter": {"\xff"}},
			wantErr: &FieldError{Field: "filter", Code: CodeBadFilter, Reason: "is not valid UTF-8"}},
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
