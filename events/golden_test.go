package events

import (
	"testing"

	"github.com/acctapi/acctapi/internal/apitest"
)

func TestGoldenRoundTrip(t *testing.T) {
	apitest.RunGolden(t, []apitest.GoldenFile{
		{"destination.golden.json", new(Destination)},
		{"destination_list.golden.json", new(DestinationList)},
		{"subscription.golden.json", new(Subscription)},
		{"subscription_list.golden.json", new(SubscriptionList)},
		{"source.golden.json", new(Source)},
		{"source_list.golden.json", new(SourceList)},
	})
}

func TestGoldenValues(t *testing.T) {
	d := apitest.ReadGolden[Destination](t, "destination.golden.json")
	if d.Target.Kinesis == nil || d.Target.Kinesis.Auth.Role == nil {
		t.Errorf("target = %+v; want kinesis with a role", d.Target)
	}

	dl := apitest.ReadGolden[DestinationList](t, "destination_list.golden.json")
	if len(dl.PageItems()) != 2 || dl.NextPageURI == nil || dl.NextPage() != *dl.NextPageURI {
		t.Fatalf("destination list = %+v; want two items and a next page", dl)
	}
	if s3 := dl.Destinations[0].Target.S3; s3 == nil || s3.Auth.Creds == nil || s3.Auth.Role != nil ||
		!s3.Compression || s3.MaxFileSize != 10<<20 || s3.MaxFileAge != 300 {
		t.Errorf("first target = %+v; want s3 with creds, compression, 10 MiB and 300 s", dl.Destinations[0].Target)
	}
	if dl.Destinations[1].Target.CloudLogsIngestion == nil {
		t.Errorf("second target = %+v; want cloud_logs_ingestion", dl.Destinations[1].Target)
	}

	s := apitest.ReadGolden[Subscription](t, "subscription.golden.json")
	if len(s.Sources) != 1 || len(s.Destinations) != 1 {
		t.Errorf("subscription = %+v", s)
	}

	sl := apitest.ReadGolden[SubscriptionList](t, "subscription_list.golden.json")
	if len(sl.PageItems()) != 2 || sl.NextPage() != "" {
		t.Fatalf("subscription list = %+v; want two items on the last page", sl)
	}
	if empty := sl.Subscriptions[0]; empty.Sources == nil || empty.Destinations == nil {
		t.Errorf("subscription %+v; want empty, non-nil sources and destinations", empty)
	}

	if l := apitest.ReadGolden[SourceList](t, "source_list.golden.json"); len(l.Sources) != 1 || !IsEventType(l.Sources[0].Type) {
		t.Errorf("source list = %+v", l)
	}
}
