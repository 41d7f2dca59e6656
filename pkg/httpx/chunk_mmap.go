//go:build linux || darwin

package httpx

import "golang.org/x/sys/unix"

// mappedChunk is the size from which a chunk is mapped rather than allocated.
const mappedChunk = 1 << 20

// chunk is memory a body of unknown length is read into before it is copied into one buffer.
type chunk struct {
	b      []byte
	mapped []byte // the whole mapping, when b is one
}

// newChunk returns a chunk of n bytes. A large one is mapped from the OS outside the Go
// heap, so that free gives it back at once, rather than when the garbage collector and the
// scavenger get to it: copying a body out of its chunks then costs one chunk more than the
// body, not the body twice.
func newChunk(n int) chunk {
	if n >= mappedChunk {
		if m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON); err == nil {
			return chunk{b: m[:0], mapped: m}
		}
	}
	return chunk{b: make([]byte, 0, n)}
}

// free gives a mapped chunk back to the OS; nothing may use it afterwards.
func (c chunk) free() {
	if c.mapped != nil {
		unix.Munmap(c.mapped)
	}
}
