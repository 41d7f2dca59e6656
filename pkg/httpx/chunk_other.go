//go:build !(linux || darwin)

package httpx

// chunk is memory a body of unknown length is read into before it is copied into one buffer.
type chunk struct{ b []byte }

// newChunk returns a chunk of n bytes from the Go heap.
func newChunk(n int) chunk { return chunk{b: make([]byte, 0, n)} }

func (chunk) free() {}
