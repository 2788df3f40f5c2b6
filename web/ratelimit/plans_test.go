package ratelimit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanLimits(t *testing.T) {
	for _, tt := range []struct {
		plan   string
		want   Limits
		wantOK bool
	}{
		{PlanFree, Limits{PlanFree, 60, 1000}, true},
		{PlanPro, Limits{PlanPro, 300, 10000}, true},
		{PlanBusiness, Limits{PlanBusiness, 1000, 100000}, true},
		{PlanEnterprise, Limits{}, false},
		{"gold", Limits{}, false},
	} {
		got, ok := PlanLimits(tt.plan)
		if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.wantOK {
			t.Errorf("PlanLimits(%q) = %v (-want +got):\n%s", tt.plan, ok, diff)
		}
	}
	if !ValidPlan(PlanEnterprise) || ValidPlan("gold") {
		t.Error("ValidPlan: enterprise must be valid, unknown names not")
	}
}

func TestAllowRejectsBadLimits(t *testing.T) {
	l := New(Config{})
	if _, err := l.Allow(t.Context(), "k", Limits{Plan: PlanEnterprise}); err == nil {
		t.Error("Allow with zero enterprise limits succeeded")
	}
}
