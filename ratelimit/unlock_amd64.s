//go:build amd64 && !race && !purego

#include "textflag.h"

// func setUnlocked(p unsafe.Pointer)
TEXT ·setUnlocked(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	MOVB $0xFF, (AX)
	RET
