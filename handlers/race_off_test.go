//go:build !race

package handlers_test

// raceDetector tells a test it runs under -race (see sweepWithoutRace).
const raceDetector = false
