#include "textflag.h"

// func classify(src []byte, masks []uint64)
//
// For each 64-byte block: compare all its bytes with '"', '\\' and ',' at once, and with
// '{' and '}' after setting bit 0x20 (which turns '[' into '{' and ']' into '}'), and turn
// each comparison into a bit per byte (VPMOVMSKB, 32 bytes at a time).
TEXT ·classify(SB), NOSPLIT, $0-48
	MOVQ src_base+0(FP), SI
	MOVQ src_len+8(FP), CX
	MOVQ masks_base+24(FP), DI
	SHRQ $6, CX
	JZ   done

	MOVQ $0x2222222222222222, AX // '"'
	MOVQ AX, X0
	VPBROADCASTQ X0, Y0
	MOVQ $0x5c5c5c5c5c5c5c5c, AX // '\\'
	MOVQ AX, X1
	VPBROADCASTQ X1, Y1
	MOVQ $0x2020202020202020, AX // the bit that folds [ ] onto { }
	MOVQ AX, X2
	VPBROADCASTQ X2, Y2
	MOVQ $0x7b7b7b7b7b7b7b7b, AX // '{'
	MOVQ AX, X3
	VPBROADCASTQ X3, Y3
	MOVQ $0x7d7d7d7d7d7d7d7d, AX // '}'
	MOVQ AX, X4
	VPBROADCASTQ X4, Y4
	MOVQ $0x2c2c2c2c2c2c2c2c, AX // ','
	MOVQ AX, X5
	VPBROADCASTQ X5, Y5

loop:
	VMOVDQU (SI), Y6
	VMOVDQU 32(SI), Y7

	VPCMPEQB Y0, Y6, Y8
	VPCMPEQB Y0, Y7, Y9
	VPMOVMSKB Y8, AX
	VPMOVMSKB Y9, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, 0(DI)

	VPCMPEQB Y1, Y6, Y8
	VPCMPEQB Y1, Y7, Y9
	VPMOVMSKB Y8, AX
	VPMOVMSKB Y9, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, 8(DI)

	VPOR     Y2, Y6, Y10
	VPOR     Y2, Y7, Y11
	VPCMPEQB Y3, Y10, Y8
	VPCMPEQB Y3, Y11, Y9
	VPCMPEQB Y4, Y10, Y12
	VPCMPEQB Y4, Y11, Y13
	VPOR     Y12, Y8, Y8
	VPOR     Y13, Y9, Y9
	VPMOVMSKB Y8, AX
	VPMOVMSKB Y9, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, 16(DI)

	VPCMPEQB Y5, Y6, Y8
	VPCMPEQB Y5, Y7, Y9
	VPMOVMSKB Y8, AX
	VPMOVMSKB Y9, BX
	SHLQ $32, BX
	ORQ  BX, AX
	MOVQ AX, 24(DI)

	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop

	VZEROUPPER

done:
	RET
