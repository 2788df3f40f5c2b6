package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// profileTo returns an attackSettings.OnPeak that records the server's CPU
// profile (net/http/pprof at pprofBase) for the length d of a peak phase
// into the file path, for `go tool pprof`. A failed profile is reported on
// stderr and does not stop the bench: it is a diagnosis, not a figure.
func profileTo(ctx context.Context, pprofBase, path string, d time.Duration) func() func() {
	return func() func() {
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			if err := fetchProfile(ctx, pprofBase, path, d); err != nil {
				fmt.Fprintf(os.Stderr, "petstore-bench: profile %s: %v\n", path, err)
			}
		}()
		return func() { <-finished }
	}
}

// fetchProfile asks the server for a CPU profile of d (whole seconds, at
// least one) and writes it to path.
func fetchProfile(ctx context.Context, pprofBase, path string, d time.Duration) error {
	secs := max(int(d/time.Second), 1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", pprofBase, secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// profileName is a file name for one row's profile: "sqlite-GET_api_pets.pprof".
func profileName(database, endpoint string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, endpoint)
	for strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", "_")
	}
	return database + "-" + strings.Trim(name, "_") + ".pprof"
}
