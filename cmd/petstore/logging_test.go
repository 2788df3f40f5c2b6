package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

// TestRedisLogIsJSON: go-redis's plain-text lines become JSON log
// records at warning level.
func TestRedisLogIsJSON(t *testing.T) {
	var buf bytes.Buffer
	redisLog{newLogger(&buf, slog.LevelInfo)}.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %v\n", 1, "refused")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log line %q is not JSON: %v", buf.String(), err)
	}
	want := map[string]any{"level": "WARN", "msg": "redis client", "detail": "redis: connection pool: failed to dial after 1 attempts: refused"}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("%s = %v, want %v", k, rec[k], v)
		}
	}
}
