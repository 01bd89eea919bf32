package events

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
	"github.com/acctapi/acctapi/internal/trunc"
)

// FormatJSON is the only serialization format a destination accepts.
const FormatJSON = "JSON"

// Destination is where and how the account's events are delivered.
type Destination struct {
	// ID is set by the server: "ed_" and a suffix that sorts by creation time.
	ID string `json:"id"`
	// URI is the destination's absolute URL, set by the server.
	URI string `json:"uri"`
	// CreatedAt is when the server created the destination; RFC 3339 in JSON,
	// UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Format is the serialization of delivered events; always [FormatJSON].
	Format string `json:"format"`
	// Target is where and how events are sent; exactly one of its members is
	// set.
	Target Target `json:"target"`
}

// Target says where events go. Exactly one member is set; the others are
// nil, and they are encoded as JSON null rather than left out, as the API
// does.
type Target struct {
	// Firehose sends events to a delivery stream.
	Firehose *Firehose `json:"firehose"`
	// Kinesis sends events to a data stream.
	Kinesis *Kinesis `json:"kinesis"`
	// CloudWatchLogs sends events to a log group.
	CloudWatchLogs *CloudWatchLogs `json:"cloudwatch_logs"`
	// S3 writes events as objects to a storage bucket, a historic kind the API
	// still accepts.
	S3 *S3 `json:"s3"`
	// Monitoring sends events to a monitoring service.
	Monitoring *Monitoring `json:"monitoring"`
	// CloudLogsIngestion sends events to a log ingestion endpoint.
	CloudLogsIngestion *CloudLogsIngestion `json:"cloud_logs_ingestion"`
}

// Firehose delivers events to a cloud delivery stream.
type Firehose struct {
	// Auth is how the service gets access to the delivery stream: exactly one
	// of its Role and Creds is set. Required: a nil Auth is refused
	// (ERR_NGROK_5106), as the service refuses a target without auth.
	Auth *CloudAuth `json:"auth"`
	// DeliveryStreamARN is required.
	DeliveryStreamARN string `json:"delivery_stream_arn"`
}

// Kinesis delivers events to a cloud data stream.
type Kinesis struct {
	// Auth is how the service gets access to the stream: exactly one of its
	// Role and Creds is set. Required: a nil Auth is refused
	// (ERR_NGROK_5106), as the service refuses a target without auth.
	Auth *CloudAuth `json:"auth"`
	// StreamARN is required.
	StreamARN string `json:"stream_arn"`
}

// CloudWatchLogs delivers events to a cloud log group.
type CloudWatchLogs struct {
	// Auth is how the service gets access to the log group: exactly one of its
	// Role and Creds is set. Required: a nil Auth is refused
	// (ERR_NGROK_5106), as the service refuses a target without auth.
	Auth *CloudAuth `json:"auth"`
	// LogGroupARN is required.
	LogGroupARN string `json:"log_group_arn"`
}

// S3 delivers events as objects in a cloud storage bucket.
type S3 struct {
	// Auth is how the service gets access to the bucket: exactly one of its
	// Role and Creds is set. Required: a nil Auth is refused
	// (ERR_NGROK_5106), as the service refuses a target without auth.
	Auth *CloudAuth `json:"auth"`
	// BucketARN is required.
	BucketARN string `json:"bucket_arn"`
	// ObjectPrefix begins the name of every object written; optional.
	ObjectPrefix string `json:"object_prefix"`
	// Compression gzips each object.
	Compression bool `json:"compression"`
	// MaxFileSize is how many bytes accumulate per object; 0 or more.
	MaxFileSize int64 `json:"max_file_size"`
	// MaxFileAge is how many seconds of events are batched per object; 0
	// or more.
	MaxFileAge int64 `json:"max_file_age"`
}

// Monitoring delivers events to a monitoring service.
type Monitoring struct {
	// APIKey is required.
	APIKey string `json:"api_key"`
	// Tags are sent with every event, as one string; optional.
	Tags string `json:"tags"`
	// Service is the service name sent with every event; optional.
	Service string `json:"service"`
	// Site is the monitoring site events are sent to; optional.
	Site string `json:"site"`
}

// CloudLogsIngestion delivers events to a cloud log ingestion endpoint.
// Every member is required.
type CloudLogsIngestion struct {
	// TenantID is the tenant of the client identity the service signs in as.
	TenantID string `json:"tenant_id"`
	// ClientID is the id of the client identity the service signs in as.
	ClientID string `json:"client_id"`
	// ClientSecret is the secret of that client identity.
	ClientSecret string `json:"client_secret"`
	// LogsIngestionURI is the URL of the endpoint that ingests the logs.
	LogsIngestionURI string `json:"logs_ingestion_uri"`
	// DataCollectionRuleID is the id of the data collection rule that receives
	// the events.
	DataCollectionRuleID string `json:"data_collection_rule_id"`
	// DataCollectionStreamName is the rule's stream that the events are sent
	// to.
	DataCollectionStreamName string `json:"data_collection_stream_name"`
}

// CloudAuth is how the service authenticates to a cloud target: exactly one
// of Role and Creds is set; the other is encoded as null.
type CloudAuth struct {
	// Role, when set, has the service assume a role to deliver.
	Role *Role `json:"role"`
	// Creds, when set, has the service deliver with long-term access keys.
	Creds *Creds `json:"creds"`
}

// Role is a cloud role the service assumes to deliver.
type Role struct {
	// RoleARN is required.
	RoleARN string `json:"role_arn"`
}

// Creds are long-term cloud access keys; both members are required.
type Creds struct {
	// AccessKeyID is the access key's id (JSON cloud_access_key_id).
	AccessKeyID string `json:"cloud_access_key_id"`
	// SecretAccessKey is the access key's secret (JSON
	// cloud_secret_access_key).
	SecretAccessKey string `json:"cloud_secret_access_key"`
}

// DestinationList is one page of event destinations.
type DestinationList struct {
	// Destinations are the page's destinations, newest first (JSON
	// event_destinations).
	Destinations []Destination `json:"event_destinations"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's destinations.
func (l *DestinationList) PageItems() []Destination { return l.Destinations }

// NextPage returns the next page's URL, or "" on the last page.
func (l *DestinationList) NextPage() string { return rest.Str(l.NextPageURI) }

// DestinationCreate is the body of a create request.
type DestinationCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Format is required: [FormatJSON], in any letter case. The service
	// refuses a destination without it (ERR_NGROK_235), and so does
	// Validate.
	Format string `json:"format"`
	// Target must set exactly one member.
	Target Target `json:"target"`
}

// Validate checks the request against the API's rules.
func (r *DestinationCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
		checkFormat(r.Format),
		field.Prefix("target", r.Target.validate()),
	)
}

// Normalize turns a valid request into its stored form: Format written
// in another letter case becomes [FormatJSON].
func (r *DestinationCreate) Normalize() {
	if isJSON(r.Format) {
		r.Format = FormatJSON
	}
}

// DestinationUpdate is the body of an update request. Nil members are left
// unchanged.
type DestinationUpdate struct {
	// ID is the destination to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
	// Format, when set, is [FormatJSON] in any letter case.
	Format *string `json:"format,omitempty"`
	// Target, when set, replaces the whole target and must set exactly one
	// member.
	Target *Target `json:"target,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *DestinationUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	errs := []error{
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	}
	if r.Format != nil {
		errs = append(errs, checkFormat(*r.Format))
	}
	if r.Target != nil {
		errs = append(errs, field.Prefix("target", r.Target.validate()))
	}
	return errors.Join(errs...)
}

// Normalize turns a valid request into its stored form: a Format written
// in another letter case becomes [FormatJSON].
func (r *DestinationUpdate) Normalize() {
	if r.Format != nil && isJSON(*r.Format) {
		f := FormatJSON
		r.Format = &f
	}
}

// checkFormat reports a format other than JSON, an empty one included.
func checkFormat(f string) error {
	if f == "" {
		return field.InvalidCode(acctapi.CodeBadFormat, "format", "is missing or empty; %q is required", FormatJSON)
	}
	if !isJSON(f) {
		return field.InvalidCode(acctapi.CodeBadFormat, "format", "is %q; only %q is accepted", f, FormatJSON)
	}
	return nil
}

// kind is one member of a Target: its JSON name, whether it is set and its
// validator.
type kind struct {
	name  string
	set   bool
	check func() error
}

func (t *Target) kinds() []kind {
	return []kind{
		{"firehose", t.Firehose != nil, func() error { return t.Firehose.validate() }},
		{"kinesis", t.Kinesis != nil, func() error { return t.Kinesis.validate() }},
		{"cloudwatch_logs", t.CloudWatchLogs != nil, func() error { return t.CloudWatchLogs.validate() }},
		{"s3", t.S3 != nil, func() error { return t.S3.validate() }},
		{"monitoring", t.Monitoring != nil, func() error { return t.Monitoring.validate() }},
		{"cloud_logs_ingestion", t.CloudLogsIngestion != nil, func() error { return t.CloudLogsIngestion.validate() }},
	}
}

func (t *Target) validate() error {
	var set []string
	var errs []error
	for _, k := range t.kinds() {
		if k.set {
			set = append(set, k.name)
			errs = append(errs, field.Prefix(k.name, k.check()))
		}
	}
	if len(set) != 1 {
		code := acctapi.CodeNoTarget
		if len(set) > 1 {
			code = acctapi.CodeManyTargets
		}
		return field.InvalidCode(code, "", "sets %d kinds (%s); exactly one of firehose, kinesis, cloudwatch_logs, s3, monitoring, cloud_logs_ingestion is required",
			len(set), strings.Join(set, ", "))
	}
	return errors.Join(errs...)
}

func (f *Firehose) validate() error {
	return errors.Join(f.Auth.validate(), required("delivery_stream_arn", f.DeliveryStreamARN))
}

func (k *Kinesis) validate() error {
	return errors.Join(k.Auth.validate(), required("stream_arn", k.StreamARN))
}

func (c *CloudWatchLogs) validate() error {
	return errors.Join(c.Auth.validate(), required("log_group_arn", c.LogGroupARN))
}

func (s *S3) validate() error {
	var errs []error
	for _, n := range []struct {
		name string
		v    int64
	}{{"max_file_size", s.MaxFileSize}, {"max_file_age", s.MaxFileAge}} {
		if n.v < 0 {
			errs = append(errs, field.Invalid(n.name, "is %d; want 0 (the service's default) or more", n.v))
		}
	}
	return errors.Join(s.Auth.validate(), required("bucket_arn", s.BucketARN), errors.Join(errs...))
}

func (m *Monitoring) validate() error {
	if m.APIKey == "" {
		return field.InvalidCode(acctapi.CodeNoAPIKey, "api_key", "is required")
	}
	return nil
}

func (c *CloudLogsIngestion) validate() error {
	return errors.Join(
		required("tenant_id", c.TenantID),
		required("client_id", c.ClientID),
		required("client_secret", c.ClientSecret),
		required("logs_ingestion_uri", c.LogsIngestionURI),
		required("data_collection_rule_id", c.DataCollectionRuleID),
		required("data_collection_stream_name", c.DataCollectionStreamName),
	)
}

// validate reports errors under "auth".
func (a *CloudAuth) validate() error {
	switch {
	case a == nil:
		return field.InvalidCode(acctapi.CodeNoAuthField, "auth", "is missing; a cloud target needs auth with exactly one of role and creds")
	case a.Role != nil && a.Creds != nil:
		return field.InvalidCode(acctapi.CodeManyAuths, "auth", "sets both role and creds; exactly one is allowed")
	case a.Role != nil:
		return checkRoleARN("auth.role.role_arn", a.Role.RoleARN)
	case a.Creds != nil:
		return errors.Join(
			required("auth.creds.cloud_access_key_id", a.Creds.AccessKeyID),
			required("auth.creds.cloud_secret_access_key", a.Creds.SecretAccessKey),
		)
	}
	return field.InvalidCode(acctapi.CodeNoAuth, "auth", "sets neither role nor creds; exactly one is required")
}

// checkRoleARN reports a role_arn that is not an IAM role's ARN,
// arn:<partition>:iam::<12-digit account>:role/<name>, as the real
// service does (ERR_NGROK_5104).
func checkRoleARN(path, arn string) error {
	if arn == "" {
		return field.InvalidCode(acctapi.CodeBadRoleARN, path, "is required")
	}
	p := strings.Split(arn, ":")
	if len(p) != 6 || p[0] != "arn" || p[1] == "" || p[2] != "iam" || p[3] != "" ||
		len(p[4]) != 12 || strings.Trim(p[4], "0123456789") != "" || !strings.HasPrefix(p[5], "role/") || len(p[5]) == len("role/") {
		return field.InvalidCode(acctapi.CodeBadRoleARN, path, "is %q, not an IAM role's ARN (arn:aws:iam::123456789012:role/name)",
			trunc.String(arn, 64))
	}
	return nil
}

// Destinations is the client for /event_destinations. It is safe for
// concurrent use.
type Destinations struct {
	c *acctapi.Client
}

// NewDestinations returns the event destinations client built on c.
func NewDestinations(c *acctapi.Client) *Destinations { return &Destinations{c: c} }

// Create creates an event destination.
func (s *Destinations) Create(ctx context.Context, r *DestinationCreate) (*Destination, error) {
	return rest.Create[Destination](ctx, s.c, resources.EventDestinations.Path(), r)
}

// Get returns the event destination with the given id.
func (s *Destinations) Get(ctx context.Context, id string) (*Destination, error) {
	return rest.Get[Destination](ctx, s.c, resources.EventDestinations.Item(id))
}

// Update changes the members of an event destination that r sets.
func (s *Destinations) Update(ctx context.Context, r *DestinationUpdate) (*Destination, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[Destination](ctx, s.c, resources.EventDestinations.Item(r.ID), r)
}

// Delete deletes the event destination with the given id.
func (s *Destinations) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.EventDestinations.Item(id))
}

// List returns every event destination, newest first, following pages as
// needed. The filter may use id, description, metadata and created_at. An
// error ends the sequence.
func (s *Destinations) List(ctx context.Context, opts *acctapi.FilterOptions) iter.Seq2[Destination, error] {
	return rest.All[Destination, DestinationList](ctx, s.c, resources.EventDestinations.Path(), opts)
}

// Page returns one page of event destinations.
func (s *Destinations) Page(ctx context.Context, opts *acctapi.FilterOptions) (*DestinationList, error) {
	return rest.GetPage[DestinationList](ctx, s.c, resources.EventDestinations.Path(), opts)
}

// isJSON reports whether f is "JSON" in any ASCII letter case: the length
// check keeps out Unicode look-alikes that fold to the same letters
// ("jſon", with a long s).
func isJSON(f string) bool { return len(f) == len(FormatJSON) && strings.EqualFold(f, FormatJSON) }
