package api_test

import (
	"testing"

	"petstore/handlers/handlerstest"
)

// apiCase is one exchange of a scenario table; the cases of a table run in
// order, each seeing what the earlier ones did.
type apiCase struct {
	name       string
	method     string
	path       string
	key        string
	body       any
	wantStatus int
	wantCode   string // the Error's code; "" on success
	wantField  string // the first details field, when the error names one
}

// run sends every case and checks its status, code and details.
func run(t *testing.T, a *handlerstest.App, cases []apiCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.Do(handlerstest.Req{Method: tc.method, Path: tc.path, Key: tc.key, Body: tc.body})
			if tc.wantCode == "" {
				r.Want(t, tc.wantStatus)
			} else {
				r.Want(t, tc.wantStatus, tc.wantCode)
			}
			if tc.wantField != "" {
				p := r.Problem(t)
				if len(p.Details) == 0 || p.Details[0].Field != tc.wantField {
					t.Errorf("details = %+v, want the first naming %q", p.Details, tc.wantField)
				}
			}
		})
	}
}
