//go:build race

package testcorpus

// raceDetector says the tests run under the race detector (go test -race).
const raceDetector = true
