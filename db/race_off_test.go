//go:build !race

package db_test

// raceDetector tells a test it runs under -race (see race_on_test.go).
const raceDetector = false
