package client_test

import (
	"testing"

	"petstore/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }
