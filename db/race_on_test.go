//go:build race

package db_test

// raceDetector tells a test it runs under -race, which slows the pure-Go
// SQLite driver about twentyfold: bulk tests write fewer rows there.
const raceDetector = true
