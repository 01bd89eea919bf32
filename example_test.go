package acctapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
)

func ExampleNewClient() {
	// A stand-in for the API that shows what the client sends.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL.EscapedPath())
		fmt.Println("Authorization:", r.Header.Get("Authorization"))
		fmt.Println("Service-Version:", r.Header.Get("Service-Version"))
		json.NewEncoder(w).Encode(map[string]any{"id": "service_1", "name": "ci"})
	}))
	defer srv.Close()

	c, err := acctapi.NewClient("secret-key", acctapi.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	var user struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	err = c.Do(context.Background(), http.MethodGet, "/service_users/service_1", nil, nil, &user)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(user.ID, user.Name)
	// Output:
	// GET /service_users/service_1
	// Authorization: Bearer secret-key
	// Service-Version: 2
	// service_1 ci
}

func ExampleIsNotFound() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"status_code":404,"msg":"service user not found","error_code":"ERR_ACCTAPI_NOT_FOUND","details":{"operation_id":"op_1"}}`)
	}))
	defer srv.Close()

	c, err := acctapi.NewClient("secret-key", acctapi.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = c.Do(context.Background(), http.MethodGet, "/service_users/missing", nil, nil, nil)
	err = fmt.Errorf("look up user: %w", err) // Wrapping does not hide it.

	fmt.Println(acctapi.IsNotFound(err))
	fmt.Println(acctapi.HasCode(err, acctapi.CodeNotFound))
	var apiErr *acctapi.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.OperationID())
	}
	fmt.Println(err)
	// Output:
	// true
	// true
	// 404 op_1
	// look up user: acctapi: HTTP 404: service user not found [ERR_ACCTAPI_NOT_FOUND] (operation op_1)
}

func ExampleFieldErrors() {
	// What a Validate method returns: one FieldError per broken rule,
	// each naming the member's JSON path.
	err := (&backends.FailoverCreate{
		Description: strings.Repeat("é", 200),
		Backends:    []string{"bkd_1", "bkd_1"},
	}).Validate()
	fmt.Println(errors.Is(err, acctapi.ErrInvalid))
	for _, fe := range acctapi.FieldErrors(err) {
		fmt.Printf("%s: %s (%s)\n", fe.Field, fe.Reason, fe.Code)
	}
	// Output:
	// true
	// description: is 400 bytes; at most 255 allowed (ERR_NGROK_420)
	// backends[1]: repeats backends[0] (ERR_NGROK_215)
}

func ExampleListOptions_Query() {
	opts := &acctapi.FilterOptions{Limit: 50, Filter: `obj.id != ""`}
	fmt.Println(opts.Query().Encode(), opts.Validate())

	err := (&acctapi.ListOptions{Limit: 101}).Validate()
	fmt.Println(acctapi.HasCode(err, acctapi.CodeBadLimit), err)
	// Output:
	// filter=obj.id+%21%3D+%22%22&limit=50 <nil>
	// true acctapi: limit: must be from 1 to 100
}

func ExampleWithDialect() {
	// A stand-in for the real service that shows what the client sends.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("Ngrok-Version: %q, Service-Version: %q\n", r.Header.Get("Ngrok-Version"), r.Header.Get("Service-Version"))
		fmt.Println(string(body))
		// The real service answers in its own names; the client reads them.
		fmt.Fprint(w, `{"id":"ed_1","target":{"datadog":{"api_key":"k","ddtags":"env:ci"}}}`)
	}))
	defer srv.Close()

	// The real service behind another URL (a proxy, say): its dialect is
	// named, since only the real service's own URL implies it.
	c, err := acctapi.NewClient("secret-key", acctapi.WithBaseURL(srv.URL), acctapi.WithDialect(acctapi.DialectReal))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := events.NewDestinations(c).Create(context.Background(), &events.DestinationCreate{Format: events.FormatJSON,
		Target: events.Target{Monitoring: &events.Monitoring{APIKey: "k", Tags: "env:ci"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.ID, d.Target.Monitoring.Tags)
	// Output:
	// Ngrok-Version: "2", Service-Version: ""
	// {"description":"","metadata":"","format":"JSON","target":{"firehose":null,"kinesis":null,"cloudwatch_logs":null,"s3":null,"datadog":{"api_key":"k","ddtags":"env:ci","service":"","ddsite":""},"azure_logs_ingestion":null}}
	// ed_1 env:ci
}

func ExampleWithThrottle() {
	// One limiter per account, shared by every client of that account.
	lim := acctapi.NewRealServiceLimiter()
	c, err := acctapi.NewClient("secret-key", acctapi.WithThrottle(lim))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.BaseURL(), c.Dialect(), lim.Burst(), time.Duration(float64(time.Second)/float64(lim.Limit())))
	// Output:
	// https://api.ngrok.com real 10 600ms
}

// The member the server refused is in the error's details: Field reads it.
func ExampleError_Field() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status_code":400,"msg":"The name is taken.","error_code":"ERR_NGROK_215","details":{"operation_id":"op_2","field":"name"}}`)
	}))
	defer srv.Close()

	c, err := acctapi.NewClient("secret-key", acctapi.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = c.Do(context.Background(), http.MethodPost, "/service_users", nil, map[string]string{"name": "ci"}, nil)
	var apiErr *acctapi.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Field(), apiErr.ErrorCode)
	}
	// Output:
	// 400 name ERR_NGROK_215
}
