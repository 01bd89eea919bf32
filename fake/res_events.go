package fake

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/google/cel-go/common/types/ref"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake/internal/store"
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
	return base + resources.SubPath(resources.EventSources, subID, typ)
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
	registerSub(s, &subresource[events.Subscription, none, events.Source, events.SourceCreate, events.SourceUpdate]{
		coll: resources.EventSources, key: "type", parent: &subs.table,
		parentMember: "subscription_id", keyMember: "type",
		list: func(_ *op, _ *store.Txn, sub store.Row[events.Subscription, none], _ listParams) ([]events.Source, []string, bool, error) {
			return append([]events.Source{}, sub.Value.Sources...), nil, false, nil
		},
		listBody: func(c *call, _ listParams, items []events.Source, _ []string, _ bool, render func(events.Source) events.Source) (any, error) {
			for i := range items { // a subscription's sources: one of each type at most
				items[i] = render(items[i])
			}
			return events.SourceList{Sources: items, URI: itemURI(c.base, kindSubscription, c.params.get("id")) + "/sources"}, nil
		},
		find: func(v events.Subscription, typ string) (events.Source, bool) {
			i := sourceIndex(v, typ)
			if i < 0 {
				return events.Source{}, false
			}
			return v.Sources[i], true
		},
		add: func(_ *op, v events.Subscription, in *events.SourceCreate) (events.Subscription, events.Source, error) {
			if sourceIndex(v, in.Type) >= 0 {
				e := errorf(http.StatusConflict, acctapi.CodeSourceTypeTaken, "Event type %q is already a source of this subscription.", in.Type)
				e.field = "type"
				return v, events.Source{}, e
			}
			src := events.Source{Type: in.Type}
			v.Sources = append(slices.Clip(v.Sources), src)
			return v, src, nil
		},
		// A source has no writable member beyond the two that name it, so
		// an update checks them and returns the source.
		update: true,
		remove: func(_ *op, v events.Subscription, typ string) (events.Subscription, error) {
			i := sourceIndex(v, typ)
			if i < 0 {
				return v, sourceNotFound(v.ID, typ)
			}
			v.Sources = slices.Delete(slices.Clone(v.Sources), i, i+1)
			return v, nil
		},
		render: func(base, subID string, v events.Source) events.Source {
			return events.Source{Type: v.Type, URI: sourceURI(base, subID, v.Type)}
		},
		missing: func(subID, typ string) error { return sourceNotFound(subID, typ) },
	})
}

func sourceIndex(v events.Subscription, typ string) int {
	return slices.IndexFunc(v.Sources, func(s events.Source) bool { return s.Type == typ })
}

func sourceNotFound(subID, typ string) *apiError {
	return errorf(http.StatusNotFound, acctapi.CodeNotFound, "Source %q not found on event subscription %q.", truncate(typ, 64), subID)
}
