package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// BasePath is where the API is mounted; the document's servers url.
const BasePath = "/api"

// ErrorStatus maps every error code of SPEC §2 to its HTTP status. Check uses
// it to catch an Error whose code does not fit the status it came with.
var ErrorStatus = map[string]int{
	"bad_request":             http.StatusBadRequest,
	"unauthorized":            http.StatusUnauthorized,
	"forbidden":               http.StatusForbidden,
	"api_key_banned":          http.StatusForbidden,
	"not_found":               http.StatusNotFound,
	"method_not_allowed":      http.StatusMethodNotAllowed,
	"insufficient_stock":      http.StatusConflict,
	"pet_not_available":       http.StatusConflict,
	"invalid_transition":      http.StatusConflict,
	"order_complete":          http.StatusConflict,
	"category_exists":         http.StatusConflict,
	"category_in_use":         http.StatusConflict,
	"pet_has_open_orders":     http.StatusConflict,
	"idempotency_in_progress": http.StatusConflict,
	"too_many_photos":         http.StatusConflict,
	"import_running":          http.StatusConflict,
	"too_many_webhooks":       http.StatusConflict,
	"webhook_disabled":        http.StatusConflict,
	"endpoint_sunset":         http.StatusGone,
	"payload_too_large":       http.StatusRequestEntityTooLarge,
	"unsupported_media_type":  http.StatusUnsupportedMediaType,
	"validation_failed":       http.StatusUnprocessableEntity,
	"idempotency_key_reused":  http.StatusUnprocessableEntity,
	"rate_limited":            http.StatusTooManyRequests,
	"internal":                http.StatusInternalServerError,
	"unavailable":             http.StatusServiceUnavailable,
}

var registerDecoders sync.Once

// registerBodyDecoders teaches openapi3filter the non-JSON media types the
// document uses: the events stream and the docs page, plain strings, and
// the images a photo upload sends, read as bytes. The registry is global to
// the process.
func registerBodyDecoders() {
	registerDecoders.Do(func() {
		openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
		for _, image := range []string{"image/jpeg", "image/png", "image/gif", "image/webp"} {
			openapi3filter.RegisterBodyDecoder(image, openapi3filter.FileBodyDecoder)
		}
	})
}

// Validator checks requests and their responses against the document. It is
// safe for concurrent use by parallel tests.
type Validator struct {
	doc     *openapi3.T
	router  routers.Router
	options openapi3filter.Options

	mu   sync.Mutex
	seen map[string]map[int]bool // operationId → statuses checked
}

// NewValidator loads the embedded document and builds a router over it. It
// registers string body decoders for text/event-stream and text/html with
// openapi3filter (process-wide).
func NewValidator() (*Validator, error) {
	registerBodyDecoders()
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: router: %w", err)
	}
	return &Validator{
		doc:    doc,
		router: router,
		options: openapi3filter.Options{
			AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
			IncludeResponseStatus: true,
			SkipSettingDefaults:   true,
		},
		seen: map[string]map[int]bool{},
	}, nil
}

// Check validates one exchange: req (whose body is given separately as
// reqBody, since it has usually been read by then) and the response's status,
// header and body. The path must include BasePath ("/api/pets").
//
// The response must be documented for the operation (undocumented statuses
// fail) and match its schema and headers. A request the document rejects
// (bad parameter, invalid body) must get a 4xx or 5xx answer; a request the
// document accepts may still get any documented error. Paths the document does
// not have must answer 404 not_found, and wrong methods 405 method_not_allowed
// with Allow (or a 403/429/5xx from the limiter or a failure). On top of the
// schemas it checks what the document cannot say: an Error's status equals the
// HTTP status and its code belongs to that status, requestId equals
// X-Request-Id, Retry-After comes with 429, 503 and 403 api_key_banned, and
// 204 has no body.
func (v *Validator) Check(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) error {
	if header == nil {
		header = http.Header{}
	}
	what := req.Method + " " + req.URL.RequestURI()
	if p := req.URL.Path; p != BasePath && !strings.HasPrefix(p, BasePath+"/") {
		return fmt.Errorf("openapi: %s: not under %s", what, BasePath)
	}

	ctx := req.Context()
	r := req.Clone(ctx)
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	r.ContentLength = int64(len(reqBody))
	head := r.Method == http.MethodHead
	if head {
		r.Method = http.MethodGet // HEAD is answered by the GET route
	}

	route, pathParams, err := v.router.FindRoute(r)
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		return v.checkUnrouted(what, http.StatusNotFound, status, header, respBody)
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return v.checkUnrouted(what, http.StatusMethodNotAllowed, status, header, respBody)
	case err != nil:
		return fmt.Errorf("openapi: %s: find route: %w", what, err)
	}
	v.record(route.Operation.OperationID, status)

	opts := v.options
	reqInput := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: pathParams,
		Route:      route,
		Options:    &opts,
	}
	if reqErr := openapi3filter.ValidateRequest(ctx, reqInput); reqErr != nil && status < 400 {
		return fmt.Errorf("openapi: %s: the document rejects this request, yet the answer was %d: %w", what, status, reqErr)
	}
	if head {
		return nil
	}

	respInput := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqInput,
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(respBody)),
		Options:                &opts,
	}
	if err := openapi3filter.ValidateResponse(ctx, respInput); err != nil {
		return fmt.Errorf("openapi: %s: response %d: %w", what, status, err)
	}
	if err := checkSemantics(status, header, respBody); err != nil {
		return fmt.Errorf("openapi: %s: response %d: %w", what, status, err)
	}
	return nil
}

// WebhookCallback names the callback of POST /webhooks that describes what
// the store sends to a webhook: callbacks.webhookEvent, at the webhook's url.
const (
	WebhookCallback           = "webhookEvent"
	webhookCallbackExpression = "{$request.body#/url}"
)

// CheckWebhook validates one request the store sent to a webhook (its
// header and body) against the document's WebhookCallback: the webhook-*
// headers, the User-Agent and the body (a WebhookEvent).
func (v *Validator) CheckWebhook(header http.Header, body []byte) error {
	item := v.doc.Paths.Value("/webhooks")
	if item == nil || item.Post == nil || item.Post.Callbacks[WebhookCallback] == nil {
		return fmt.Errorf("openapi: POST /webhooks has no callback %s", WebhookCallback)
	}
	target := item.Post.Callbacks[WebhookCallback].Value.Value(webhookCallbackExpression)
	if target == nil || target.Post == nil {
		return fmt.Errorf("openapi: callback %s has no POST at %s", WebhookCallback, webhookCallbackExpression)
	}
	req, err := http.NewRequest(http.MethodPost, "http://receiver.invalid/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	opts := v.options
	input := &openapi3filter.RequestValidationInput{
		Request: req,
		Route:   &routers.Route{Spec: v.doc, Path: webhookCallbackExpression, PathItem: target, Method: http.MethodPost, Operation: target.Post},
		Options: &opts,
	}
	if err := openapi3filter.ValidateRequest(req.Context(), input); err != nil {
		return fmt.Errorf("openapi: webhook request: %w", err)
	}
	return nil
}

// checkUnrouted checks the answer to a path or method the document does not
// have: want (404 or 405), or what the limiter or a failure may give first.
func (v *Validator) checkUnrouted(what string, want, status int, header http.Header, body []byte) error {
	switch status {
	case want, http.StatusForbidden, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusServiceUnavailable:
	default:
		return fmt.Errorf("openapi: %s: not in the document, so the answer must be %d, got %d", what, want, status)
	}
	for _, name := range []string{"X-Request-Id", "X-API-Version"} {
		if header.Get(name) == "" {
			return fmt.Errorf("openapi: %s: response %d: header %s missing", what, status, name)
		}
	}
	if status == http.StatusMethodNotAllowed && header.Get("Allow") == "" {
		return fmt.Errorf("openapi: %s: response 405: header Allow missing", what)
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return fmt.Errorf("openapi: %s: response %d: body is not JSON: %w", what, status, err)
	}
	schema := v.doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(value, openapi3.VisitAsResponse()); err != nil {
		return fmt.Errorf("openapi: %s: response %d: body is not an Error: %w", what, status, err)
	}
	if err := checkSemantics(status, header, body); err != nil {
		return fmt.Errorf("openapi: %s: response %d: %w", what, status, err)
	}
	return nil
}

// checkSemantics checks the rules of SPEC §2 and §6 that a schema cannot express.
func checkSemantics(status int, header http.Header, body []byte) error {
	if status == http.StatusNoContent && len(body) > 0 {
		return fmt.Errorf("204 with a body of %d bytes", len(body))
	}
	if status < 400 {
		return nil
	}
	var e struct {
		Code      string `json:"code"`
		Status    int    `json:"status"`
		RequestID string `json:"requestId"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return fmt.Errorf("error body: %w", err)
	}
	if e.Status != status {
		return fmt.Errorf("the Error object says status %d", e.Status)
	}
	if want, ok := ErrorStatus[e.Code]; ok && want != status {
		return fmt.Errorf("the Error code %q belongs to status %d", e.Code, want)
	}
	if e.RequestID != "" && e.RequestID != header.Get("X-Request-Id") {
		return fmt.Errorf("Error.requestId %q differs from X-Request-Id %q", e.RequestID, header.Get("X-Request-Id"))
	}
	needRetryAfter := status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
		(status == http.StatusForbidden && e.Code == "api_key_banned")
	if needRetryAfter && header.Get("Retry-After") == "" {
		return fmt.Errorf("%s without Retry-After", e.Code)
	}
	return nil
}

func (v *Validator) record(operationID string, status int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen[operationID] == nil {
		v.seen[operationID] = map[int]bool{}
	}
	v.seen[operationID][status] = true
}

// Unchecked lists the operationIds that Check has not yet seen answer with a
// 2xx status, sorted: a suite can fail when an operation went untested.
func (v *Validator) Unchecked() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var ids []string
	for _, item := range v.doc.Paths.Map() {
		for _, op := range item.Operations() {
			ok := false
			for status := range v.seen[op.OperationID] {
				if status >= 200 && status < 300 {
					ok = true
				}
			}
			if !ok {
				ids = append(ids, op.OperationID)
			}
		}
	}
	sort.Strings(ids)
	return ids
}
