package events

import (
	"testing"

	"github.com/acctapi/acctapi/internal/apitest"
)

func TestValidateAnnotations(t *testing.T) {
	apitest.RunAnnotations(t, []apitest.Annotated{
		{"DestinationCreate", func(d, m string) apitest.Validator {
			return &DestinationCreate{Format: FormatJSON, Description: d, Metadata: m, Target: kinesis}
		}},
		{"DestinationUpdate", func(d, m string) apitest.Validator {
			return &DestinationUpdate{ID: "ed_1", Description: &d, Metadata: &m}
		}},
		{"SubscriptionCreate", func(d, m string) apitest.Validator {
			return &SubscriptionCreate{Description: d, Metadata: m}
		}},
		{"SubscriptionUpdate", func(d, m string) apitest.Validator {
			return &SubscriptionUpdate{ID: "esb_1", Description: &d, Metadata: &m}
		}},
	})
}
