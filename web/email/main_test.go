package email

import (
	"testing"

	"petstore/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }
