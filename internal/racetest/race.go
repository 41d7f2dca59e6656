//go:build race

package racetest

// Enabled says the tests run under the race detector (go test -race).
const Enabled = true
