//go:build !amd64

package extract

// useBlocks is false: classify has no SIMD implementation here, and Count walks the bytes.
var useBlocks = false

const classifyBlocks = 1

func classify(src []byte, masks []uint64) { panic("classify: no SIMD implementation") }
