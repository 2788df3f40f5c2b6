package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
)

// Answer is a 2xx (or 304) answer of Do.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends any operation by method and path (relative to the API's root,
// "/pets?limit=5"; a leading "/api" is accepted too) with an optional JSON
// body, through the same transport as the typed methods. A refusal is an
// *Error.
func (c *Client) Do(ctx context.Context, method, path string, body []byte) (*Answer, error) {
	return c.do(ctx, method, c.resolve(path), body)
}

func (c *Client) resolve(path string) string {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return path
	}
	path = "/" + strings.TrimPrefix(path, "/")
	path = strings.TrimPrefix(path, "/api")
	return c.api + path
}

func (c *Client) do(ctx context.Context, method, target string, body []byte) (*Answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, strings.ToUpper(method), target, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	_ = c.authorize(ctx, req)
	resp, err := refusals{c.http}.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, unwrapURL(err)
	}
	return &Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Items walks a list by path ("/pets?limit=100"), every page, yielding
// each element of each page's JSON array as it came.
func (c *Client) Items(ctx context.Context, path string) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		target := c.resolve(path)
		for target != "" {
			a, err := c.do(ctx, http.MethodGet, target, nil)
			if err != nil {
				yield(nil, err)
				return
			}
			var items []json.RawMessage
			if err := json.Unmarshal(a.Body, &items); err != nil {
				yield(nil, fmt.Errorf("petstore: %s is not a list: %w", path, err))
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			target = ""
			if next := NextLink(a.Header); next != "" {
				base, _ := url.Parse(c.api)
				ref, err := url.Parse(next)
				if err != nil {
					yield(nil, fmt.Errorf("petstore: bad Link %q: %w", next, err))
					return
				}
				target = base.ResolveReference(ref).String()
			}
		}
	}
}
