package fake

import (
	"net/http"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
)

// Filterable fields (contract §3).
var (
	annotatedFields = []string{"id", "description", "metadata", "created_at"}
	apiKeyFields    = []string{"id", "description", "metadata", "owner_id", "created_at"}
	svcUserFields   = []string{"id", "created_at"}
	caFields        = []string{"id", "description", "metadata", "subject_common_name", "created_at", "not_before", "not_after"}
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

func nameTaken() error {
	return errorf(http.StatusConflict, acctapi.CodeNameTaken, "Service User names must be unique within an account.")
}

func serviceUsers() *resource[account.ServiceUser, account.ServiceUserCreate, account.ServiceUserUpdate] {
	const kind = kindSvcUser
	return &resource[account.ServiceUser, account.ServiceUserCreate, account.ServiceUserUpdate]{
		kind: kind, prefix: "service", member: "service_users", alias: "bot_users", aliasMember: "bot_users",
		filter: svcUserFields,
		field: func(v account.ServiceUser, name string) ref.Val {
			return annotated(name, v.ID, "", "", v.CreatedAt) // svcUserFields has id and created_at only
		},
		build: func(c *call, id string, in *account.ServiceUserCreate) (account.ServiceUser, meta, error) {
			v := account.ServiceUser{ID: id, Name: in.Name, Active: true, CreatedAt: c.now}
			patch(&v.Active, in.Active)
			return v, meta{unique: v.Name, uniqueErr: nameTaken}, nil
		},
		apply: func(c *call, v account.ServiceUser, in *account.ServiceUserUpdate) (account.ServiceUser, meta, error) {
			patch(&v.Name, in.Name)
			patch(&v.Active, in.Active)
			return v, meta{unique: v.Name, uniqueErr: nameTaken}, nil
		},
		// A service user's API keys go with it.
		deleted: func(c *call, v account.ServiceUser) error {
			for _, o := range all(c.txn, c.account, kindAPIKey) {
				if keyOwner(o) == v.ID {
					if err := c.s.drop(c.txn, o); err != nil {
						return err
					}
				}
			}
			return nil
		},
		render: func(base string, v account.ServiceUser) account.ServiceUser {
			v.URI = itemURI(base, kind, v.ID)
			return v
		},
	}
}

func apiKeys() *resource[account.APIKey, account.APIKeyCreate, account.APIKeyUpdate] {
	const kind = kindAPIKey
	return &resource[account.APIKey, account.APIKeyCreate, account.APIKeyUpdate]{
		kind: kind, prefix: "ak", member: "keys", filter: apiKeyFields,
		field: func(v account.APIKey, name string) ref.Val {
			if name == "owner_id" {
				return types.String(v.OwnerID)
			}
			return annotated(name, v.ID, v.Description, v.Metadata, v.CreatedAt)
		},
		build: func(c *call, id string, in *account.APIKeyCreate) (account.APIKey, meta, error) {
			owner := in.OwnerID
			if owner == "" {
				owner = c.owner
			}
			if owner != accountUser(c.txn, c.account) && lookup(c.txn, c.account, kindSvcUser, owner) == nil {
				return account.APIKey{}, meta{}, &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: "owner_id",
					msg: "owner_id must be the account's user or one of its service users."}
			}
			token := c.s.newToken()
			v := account.APIKey{ID: id, Description: in.Description, Metadata: in.Metadata, CreatedAt: c.now, OwnerID: owner, Token: &token}
			return v, meta{token: hashToken(token)}, nil
		},
		redact: func(v account.APIKey) account.APIKey {
			v.Token = nil
			return v
		},
		apply: func(c *call, v account.APIKey, in *account.APIKeyUpdate) (account.APIKey, meta, error) {
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			return v, meta{}, nil
		},
		render: func(base string, v account.APIKey) account.APIKey {
			v.URI = itemURI(base, kind, v.ID)
			return v
		},
	}
}

func certificateAuthorities() *resource[account.CertificateAuthority, account.CertificateAuthorityCreate, account.CertificateAuthorityUpdate] {
	const kind = kindCA
	return &resource[account.CertificateAuthority, account.CertificateAuthorityCreate, account.CertificateAuthorityUpdate]{
		kind: kind, prefix: "ca", member: "certificate_authorities", filter: caFields,
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
		build: func(c *call, id string, in *account.CertificateAuthorityCreate) (account.CertificateAuthority, meta, error) {
			info, err := account.ParseCA(in.CAPEM)
			if err != nil {
				return account.CertificateAuthority{}, meta{}, &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: "ca_pem", msg: err.Error()}
			}
			return account.CertificateAuthority{ID: id, CreatedAt: c.now, Description: in.Description, Metadata: in.Metadata, CAPEM: in.CAPEM, CAInfo: *info}, meta{}, nil
		},
		apply: func(c *call, v account.CertificateAuthority, in *account.CertificateAuthorityUpdate) (account.CertificateAuthority, meta, error) {
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			return v, meta{}, nil
		},
		render: func(base string, v account.CertificateAuthority) account.CertificateAuthority {
			v.URI = itemURI(base, kind, v.ID)
			return v
		},
	}
}

// register adds every resource's routes.
func (s *Server) register() {
	register(s, serviceUsers())
	register(s, apiKeys())
	register(s, certificateAuthorities())
	s.registerBackends()
	s.registerEvents()
	s.registerOperators()
}

var _ *memdb.Txn
