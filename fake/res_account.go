package fake

import (
	"net/http"
	"reflect"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/resources"
)

// Filterable fields (contract §3), as filter tests name them.
var (
	apiKeyFields  = resources.APIKeys.Filter
	svcUserFields = resources.ServiceUsers.Filter
)

// annotated returns the filterable field name that every annotated
// resource has, or nil.
func annotated(name, id, description, metadata string, createdAt time.Time) ref.Val {
	switch name {
	case "id":
		return types.String(id)
	case "description":
		return types.String(description)
	case "metadata":
		return types.String(metadata)
	case "created_at":
		return types.Timestamp{Time: createdAt}
	}
	return nil
}

// patch sets *dst to *src when src is not nil.
func patch[V any](dst *V, src *V) {
	if src != nil {
		*dst = *src
	}
}

// nameTaken is the 409 of a service user name another holds; its details
// name the field, as a 400's do.
func nameTaken() error {
	e := errorf(http.StatusConflict, acctapi.CodeNameTaken, "Service User names must be unique within an account.")
	e.field = "name"
	return e
}

func (s *Server) registerAccount() {
	users := &resource[account.ServiceUser, none, account.ServiceUserCreate, account.ServiceUserUpdate]{
		Desc:        resources.ServiceUsers,
		constraints: store.Constraints[account.ServiceUser, none]{Unique: func(v account.ServiceUser) string { return v.Name }, Taken: nameTaken},
		field: func(v account.ServiceUser, name string) ref.Val {
			return annotated(name, v.ID, "", "", v.CreatedAt) // the filter has id and created_at only
		},
		build: func(o *op, id string, in *account.ServiceUserCreate, _ none) (account.ServiceUser, none, error) {
			v := account.ServiceUser{ID: id, Name: in.Name, Active: true, CreatedAt: o.now}
			patch(&v.Active, in.Active)
			return v, none{}, nil
		},
		apply: func(o *op, cur store.Row[account.ServiceUser, none], in *account.ServiceUserUpdate, _ none) (account.ServiceUser, none, error) {
			v := cur.Value
			patch(&v.Name, in.Name)
			patch(&v.Active, in.Active)
			return v, none{}, nil
		},
		// A service user's API keys go with it.
		deleted: func(o *op, v account.ServiceUser) error {
			for _, k := range s.keys.All(o.tx, o.account) {
				if k.Value.OwnerID == v.ID {
					if err := s.keys.Delete(o.tx, o.account, k.ID); err != nil {
						return err
					}
					if err := s.countResources(o.tx, o.account, -1); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	userURI := func(v *account.ServiceUser) (*string, string) { return &v.URI, v.ID }
	users.render = renderAt(users.Name, userURI)
	users.aliasRender = renderAt(users.Alias, userURI) // bot users' uris on the bot-user paths, as the real service's samples show
	register(s, users)
	s.users = users.table

	keys := apiKeys()
	keys.build = func(o *op, id string, in *account.APIKeyCreate, _ tokenHash) (account.APIKey, tokenHash, error) {
		owner := in.OwnerID
		if owner == "" {
			owner = o.owner
		}
		if owner != s.accountUser(o.tx, o.account) && !s.users.Has(o.tx, o.account, owner) {
			return account.APIKey{}, "", &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: "owner_id",
				msg: "owner_id must be the account's user or one of its service users."}
		}
		token := o.env.newToken()
		v := account.APIKey{ID: id, Description: in.Description, Metadata: in.Metadata, CreatedAt: o.now, OwnerID: owner, Token: &token}
		return v, hashToken(token), nil
	}
	register(s, keys)
	s.keys = keys.table

	cas := &resource[account.CertificateAuthority, none, caCreate, account.CertificateAuthorityUpdate]{
		Desc: resources.CertificateAuthorities,
		field: func(v account.CertificateAuthority, name string) ref.Val {
			switch name {
			case "subject_common_name":
				return types.String(v.SubjectCommonName)
			case "not_before":
				return types.Timestamp{Time: v.NotBefore}
			case "not_after":
				return types.Timestamp{Time: v.NotAfter}
			}
			return annotated(name, v.ID, v.Description, v.Metadata, v.CreatedAt)
		},
		// What validation read from the certificate (caCreate) is what
		// the authority shows.
		build: func(o *op, id string, in *caCreate, _ none) (account.CertificateAuthority, none, error) {
			return account.CertificateAuthority{ID: id, CreatedAt: o.now, Description: in.Description, Metadata: in.Metadata, CAPEM: in.CAPEM, CAInfo: *in.info}, none{}, nil
		},
		apply: func(o *op, cur store.Row[account.CertificateAuthority, none], in *account.CertificateAuthorityUpdate, _ none) (account.CertificateAuthority, none, error) {
			v := cur.Value
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			return v, none{}, nil
		},
	}
	cas.render = renderAt(cas.Name, func(v *account.CertificateAuthority) (*string, string) { return &v.URI, v.ID })
	register(s, cas)
	seedAs[account.CertificateAuthorityCreate, caCreate](s)
}

// caCreate is a certificate authority's create request as the fake decodes
// it: its Validate is the domain package's ValidateParsed, and keeps what
// that read of the certificate for build, so the certificate is parsed
// once.
type caCreate struct {
	account.CertificateAuthorityCreate
	info *account.CAInfo // set by a successful Validate
}

// Validate validates the request and keeps what it read of the
// certificate.
func (r *caCreate) Validate() (err error) {
	r.info, err = r.CertificateAuthorityCreate.ValidateParsed()
	return err
}

// seedAs makes Seed and fixtures take the domain package's create request
// D for a resource the fake registered with its own request type C, which
// embeds D (and so decodes the same JSON).
func seedAs[D, C any](s *Server) {
	s.resByIn[reflect.TypeFor[D]()] = s.resByIn[reflect.TypeFor[C]()]
}

// apiKeys describes API keys but for build, which needs the server's
// tables (registerAccount sets it).
func apiKeys() *resource[account.APIKey, tokenHash, account.APIKeyCreate, account.APIKeyUpdate] {
	keys := &resource[account.APIKey, tokenHash, account.APIKeyCreate, account.APIKeyUpdate]{
		Desc:        resources.APIKeys,
		constraints: store.Constraints[account.APIKey, tokenHash]{Token: func(h tokenHash) string { return string(h) }},
		field: func(v account.APIKey, name string) ref.Val {
			if name == "owner_id" {
				return types.String(v.OwnerID)
			}
			return annotated(name, v.ID, v.Description, v.Metadata, v.CreatedAt)
		},
		redact: func(v account.APIKey) account.APIKey {
			v.Token = nil
			return v
		},
		apply: func(o *op, cur store.Row[account.APIKey, tokenHash], in *account.APIKeyUpdate, _ tokenHash) (account.APIKey, tokenHash, error) {
			v := cur.Value
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			return v, cur.Extra, nil
		},
	}
	keys.render = renderAt(keys.Name, func(v *account.APIKey) (*string, string) { return &v.URI, v.ID })
	return keys
}

// renderAt returns a render hook that sets a value's uri, which at
// returns with its id, to its item uri under the collection coll.
func renderAt[T any](coll string, at func(v *T) (uri *string, id string)) func(base string, v T) T {
	return func(base string, v T) T {
		uri, id := at(&v)
		*uri = itemURI(base, coll, id)
		return v
	}
}

// register adds every resource's table and routes.
func (s *Server) register() {
	s.registerAccounts()
	s.registerAccount()
	s.registerBackends()
	s.registerEvents()
	s.registerOperators()
}
