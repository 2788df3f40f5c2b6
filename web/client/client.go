// Package client is the Go client of the pet store's API: the operations
// generated from the OpenAPI document (package petstoreapi, one typed
// method each), sent through a Transport that paces itself, waits out
// 429s, retries 503s and lost connections, and keys every POST for
// idempotency; refusals come back as *Error; lists as iterators. See
// README.md for a complete program.
package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"petstore/web/client/petstoreapi"
)

// Config says where the API is and how to reach it.
type Config struct {
	// URL is the store's address (http://localhost:8080); the API is
	// under its /api.
	URL string
	// Key is the API key, sent as X-API-Key; empty sends none.
	Key string
	// Transport sends the requests; nil means a Transport with its defaults.
	Transport *Transport
}

// Client is the generated client (every operation, typed, with
// …WithResponse methods) with the store's transport under it and the
// list iterators on top. Any answer of 400 and above is returned as an
// *Error by every method, so a nil error means a 2xx (or 304).
type Client struct {
	*petstoreapi.ClientWithResponses
	// Transport is the transport in use (its pacing is shared by every call).
	Transport *Transport
	http      *http.Client
	api       string // the API's root URL, ending in /api
	key       string
}

// New builds a Client from cfg.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("petstore: no URL")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("petstore: the URL must be http(s)://host[:port]")
	}
	api := strings.TrimSuffix(strings.TrimSuffix(cfg.URL, "/"), "/api") + "/api"
	t := cfg.Transport
	if t == nil {
		t = &Transport{}
	}
	c := &Client{Transport: t, http: &http.Client{Transport: t}, api: api, key: cfg.Key}
	gen, err := petstoreapi.NewClientWithResponses(api,
		petstoreapi.WithHTTPClient(refusals{c.http}),
		petstoreapi.WithRequestEditorFn(c.authorize))
	if err != nil {
		return nil, err
	}
	c.ClientWithResponses = gen
	return c, nil
}

func (c *Client) authorize(_ context.Context, req *http.Request) error {
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	return nil
}

// refusals turns every answer of 400 and above into an *Error, so the
// generated methods return it as their error.
type refusals struct{ hc *http.Client }

func (r refusals) Do(req *http.Request) (*http.Response, error) {
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, unwrapURL(err)
	}
	if resp.StatusCode >= 400 {
		return nil, errorFrom(resp)
	}
	return resp, nil
}

// unwrapURL returns a context's error, or the transport's own *Error, as
// itself (not inside *url.Error), so err == context.DeadlineExceeded
// holds as well as errors.Is.
func unwrapURL(err error) error {
	var ue *url.Error
	var e *Error
	if errors.As(err, &ue) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &e)) {
		return ue.Err
	}
	return err
}
