// Package events manages where the account's events go: event destinations
// (one delivery target each), event subscriptions (which event types go to
// which destinations) and the event sources of a subscription.
//
// Each resource has a model, request types whose Validate methods hold every
// rule of the API (the fake runs the same methods), and a client built on an
// [acctapi.Client]:
//
//	c, _ := acctapi.NewClient(key)
//	d, err := events.NewDestinations(c).Create(ctx, &events.DestinationCreate{
//		Format: events.FormatJSON,
//		Target: events.Target{Kinesis: &events.Kinesis{
//			Auth:      &events.CloudAuth{Role: &events.Role{RoleARN: roleARN}},
//			StreamARN: streamARN,
//		}},
//	})
//
// [Types] lists the event types a subscription or source may name.
package events
