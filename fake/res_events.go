package fake

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/google/cel-go/common/types/ref"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
)

var (
	kindDestination  = resources.EventDestinations.Name
	kindSubscription = resources.EventSubscriptions.Name
)

// destinationRefs checks that every id names a destination of the account
// and returns them as refs (uris are filled when rendered).
func destinationRefs(o *op, dests *store.Table[events.Destination, none], ids []string) ([]acctapi.Ref, error) {
	refs := make([]acctapi.Ref, 0, len(ids))
	for i, id := range ids {
		if !dests.Has(o.tx, o.account, id) {
			return nil, &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownDestination, field: fmt.Sprintf("destination_ids[%d]", i),
				msg: fmt.Sprintf("Event destination %q does not exist.", truncate(id, 64))}
		}
		refs = append(refs, acctapi.Ref{ID: id})
	}
	return refs, nil
}

func subscriptionSources(list []events.SubscriptionSource) []events.Source {
	out := make([]events.Source, len(list))
	for i, s := range list {
		out[i] = events.Source{Type: s.Type}
	}
	return out
}

func refIDs(refs []acctapi.Ref) []string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	return ids
}

// renderSubscription fills a subscription's uris and those of its sources
// and destinations.
func renderSubscription(base string, v events.Subscription) events.Subscription {
	v.URI = itemURI(base, kindSubscription, v.ID)
	src := make([]events.Source, len(v.Sources))
	for i, s := range v.Sources {
		src[i] = events.Source{Type: s.Type, URI: sourceURI(base, v.ID, s.Type)}
	}
	dst := make([]acctapi.Ref, len(v.Destinations))
	for i, d := range v.Destinations {
		dst[i] = acctapi.Ref{ID: d.ID, URI: itemURI(base, kindDestination, d.ID)}
	}
	v.Sources, v.Destinations = src, dst
	return v
}

func sourceURI(base, subID, typ string) string {
	return itemURI(base, kindSubscription, subID) + "/sources/" + url.PathEscape(typ)
}

func (s *Server) registerEvents() {
	dests := &resource[events.Destination, none, events.DestinationCreate, events.DestinationUpdate]{
		Desc: resources.EventDestinations,
		field: func(v events.Destination, name string) ref.Val {
			return annotated(name, v.ID, v.Description, v.Metadata, v.CreatedAt)
		},
		build: func(o *op, id string, in *events.DestinationCreate, _ none) (events.Destination, none, error) {
			return events.Destination{ID: id, CreatedAt: o.now, Description: in.Description, Metadata: in.Metadata, Format: in.Format, Target: in.Target}, none{}, nil
		},
		apply: func(o *op, cur store.Row[events.Destination, none], in *events.DestinationUpdate, _ none) (events.Destination, none, error) {
			v := cur.Value
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			patch(&v.Format, in.Format)
			patch(&v.Target, in.Target)
			return v, none{}, nil
		},
	}
	dests.render = renderAt(dests.Name, func(v *events.Destination) (*string, string) { return &v.URI, v.ID })
	register(s, dests)
	subs := &resource[events.Subscription, none, events.SubscriptionCreate, events.SubscriptionUpdate]{
		Desc:        resources.EventSubscriptions,
		constraints: store.Constraints[events.Subscription, none]{Refs: func(v events.Subscription) []string { return refIDs(v.Destinations) }},
		field: func(v events.Subscription, name string) ref.Val {
			return annotated(name, v.ID, v.Description, v.Metadata, v.CreatedAt)
		},
		build: func(o *op, id string, in *events.SubscriptionCreate, _ none) (events.Subscription, none, error) {
			dst, err := destinationRefs(o, dests.table, in.DestinationIDs)
			v := events.Subscription{ID: id, CreatedAt: o.now, Description: in.Description, Metadata: in.Metadata,
				Sources: subscriptionSources(in.Sources), Destinations: dst}
			return v, none{}, err
		},
		apply: func(o *op, cur store.Row[events.Subscription, none], in *events.SubscriptionUpdate, _ none) (events.Subscription, none, error) {
			v := cur.Value
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			if in.Sources != nil {
				v.Sources = subscriptionSources(*in.Sources)
			}
			if in.DestinationIDs != nil {
				dst, err := destinationRefs(o, dests.table, *in.DestinationIDs)
				if err != nil {
					return v, none{}, err
				}
				v.Destinations = dst
			}
			return v, none{}, nil
		},
		render: renderSubscription,
	}
	register(s, subs)
	s.subs = subs.table
	const coll, item = "/event_subscriptions/{id}/sources", "/event_subscriptions/{id}/sources/{type}"
	s.routes.handle(http.MethodPost, coll, nil, s.createSource)
	s.routes.handle(http.MethodGet, coll, nil, s.listSources)
	s.routes.handle(http.MethodGet, item, nil, s.getSource)
	s.routes.handle(http.MethodPatch, item, nil, s.updateSource)
	s.routes.handle(http.MethodDelete, item, nil, s.deleteSource)
}

// changeSubscription runs fn on the subscription named in the path, in a
// write transaction, and stores what fn returns.
func (s *Server) changeSubscription(c *call, fn func(v events.Subscription) (events.Subscription, error)) error {
	return s.db.Write(func(tx *store.Txn) error {
		row, ok := s.subs.Get(tx, c.account, c.params.get("id"))
		if !ok {
			return notFound(c.params.get("id"))
		}
		v, err := fn(row.Value)
		if err != nil {
			return err
		}
		return s.subs.Replace(tx, row, v, none{})
	})
}

func sourceIndex(v events.Subscription, typ string) int {
	return slices.IndexFunc(v.Sources, func(s events.Source) bool { return s.Type == typ })
}

func sourceNotFound(subID, typ string) *apiError {
	return errorf(http.StatusNotFound, acctapi.CodeNotFound, "Source %q not found on event subscription %q.", truncate(typ, 64), subID)
}

func (s *Server) createSource(c *call) (int, any, error) {
	subID := c.params.get("id")
	var in events.SourceCreate
	if err := decode(c.body, &in, &c.s.members); err != nil {
		return 0, nil, err
	}
	if err := field.CheckPathID("subscription_id", in.SubscriptionID, subID); err != nil {
		return 0, nil, fromValidation(err)
	}
	if err := checkRequest(&in); err != nil {
		return 0, nil, err
	}
	err := s.changeSubscription(c, func(v events.Subscription) (events.Subscription, error) {
		if sourceIndex(v, in.Type) >= 0 {
			return v, errorf(http.StatusConflict, acctapi.CodeSourceTypeTaken, "Event type %q is already a source of this subscription.", in.Type)
		}
		v.Sources = append(slices.Clip(v.Sources), events.Source{Type: in.Type})
		return v, nil
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, events.Source{Type: in.Type, URI: sourceURI(c.base, subID, in.Type)}, nil
}

func (s *Server) listSources(c *call) (int, any, error) {
	subID := c.params.get("id")
	row, ok := s.subs.Get(c.read(), c.account, subID)
	if !ok {
		return 0, nil, notFound(subID)
	}
	v := renderSubscription(c.base, row.Value)
	return http.StatusOK, events.SourceList{Sources: v.Sources, URI: itemURI(c.base, kindSubscription, subID) + "/sources"}, nil
}

func (s *Server) getSource(c *call) (int, any, error) {
	subID, typ := c.params.get("id"), c.params.get("type")
	row, ok := s.subs.Get(c.read(), c.account, subID)
	if !ok {
		return 0, nil, notFound(subID)
	}
	if sourceIndex(row.Value, typ) < 0 {
		return 0, nil, sourceNotFound(subID, typ)
	}
	return http.StatusOK, events.Source{Type: typ, URI: sourceURI(c.base, subID, typ)}, nil
}

// updateSource serves PATCH …/sources/{type}. A source has no writable
// member beyond the two that name it, so the update checks them and
// returns the source.
func (s *Server) updateSource(c *call) (int, any, error) {
	subID, typ := c.params.get("id"), c.params.get("type")
	var in events.SourceUpdate
	if err := decode(c.body, &in, &c.s.members); err != nil {
		return 0, nil, err
	}
	if err := errors.Join(field.CheckPathID("subscription_id", in.SubscriptionID, subID),
		field.CheckPathID("type", in.Type, typ)); err != nil {
		return 0, nil, fromValidation(err)
	}
	in.SubscriptionID, in.Type = subID, typ
	if err := checkRequest(&in); err != nil {
		return 0, nil, err
	}
	return s.getSource(c)
}

func (s *Server) deleteSource(c *call) (int, any, error) {
	subID, typ := c.params.get("id"), c.params.get("type")
	err := s.changeSubscription(c, func(v events.Subscription) (events.Subscription, error) {
		i := sourceIndex(v, typ)
		if i < 0 {
			return v, sourceNotFound(subID, typ)
		}
		v.Sources = slices.Delete(slices.Clone(v.Sources), i, i+1)
		return v, nil
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
