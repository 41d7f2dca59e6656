package extract

import "golang.org/x/sys/cpu"

// useBlocks: classify has an AVX2 implementation on this machine.
var useBlocks = cpu.X86.HasAVX2

// classifyBlocks is how many 64-byte blocks countBlocks classifies at a time.
const classifyBlocks = 32

// classify writes four words for each 64-byte block of src (len(src) a multiple of 64):
// the bits of its '"' bytes, of its '\\' bytes, of its brackets ({ [ } ]) and of its
// commas. It uses AVX2; see count_amd64.s.
//
//go:noescape
func classify(src []byte, masks []uint64)
