package imports

import (
	"testing"

	"petstore/db/dbtest"
)

// TestMain removes the migrated templates the tests' stores are copied from.
func TestMain(m *testing.M) { dbtest.Main(m) }
