package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"petstore/db/dbtest"
)

// TestMain removes the migrated templates the tests' stores are copied
// from, and the binary the process tests share.
func TestMain(m *testing.M) {
	code := dbtest.Run(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is cmd/petstore compiled once for every test that runs the real
// binary as a process of its own (a SIGTERM or SIGKILL, a CLI beside a
// running server, a process's memory).
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildBinary returns the path of the binary, compiling it on the first
// call (without -race: the binary is the product as it ships).
func buildBinary(t *testing.T) string {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// binary is buildBinary for a goroutine of a test's own.
func binary() (string, error) {
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "petstore-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "petstore")
		out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return built.bin, built.err
}
