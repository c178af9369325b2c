//go:build race

package main_test

// raceEnabled: the test runs under the race detector, so the quickstart is
// built with it too.
const raceEnabled = true
