//go:build amd64 && !purego

#include "textflag.h"

// The eleven AES-128 round keys into X1..X11.
#define LOADKEYS(rk) \
	MOVOU 0(rk), X1; MOVOU 16(rk), X2; MOVOU 32(rk), X3; MOVOU 48(rk), X4; \
	MOVOU 64(rk), X5; MOVOU 80(rk), X6; MOVOU 96(rk), X7; MOVOU 112(rk), X8; \
	MOVOU 128(rk), X9; MOVOU 144(rk), X10; MOVOU 160(rk), X11

// Rounds 1..10 on x, keys in X2..X11 (round 0's key, X1, is XORed by the caller).
#define ROUNDS(x) \
	AESENC X2, x; AESENC X3, x; AESENC X4, x; AESENC X5, x; AESENC X6, x; \
	AESENC X7, x; AESENC X8, x; AESENC X9, x; AESENC X10, x; AESENCLAST X11, x

// func cfb8Encrypt(rk *[176]byte, iv *[16]byte, dst, src *byte, n int)
//
// Per byte: ks = E(iv); out = in ^ ks[0]; iv = iv[1:] || out. The loop
// carries X15 = iv ^ k0 so the chain is AES's ten rounds, one shift and one
// XOR; the next register's other fifteen bytes are prepared beside it.
TEXT ·cfb8Encrypt(SB), NOSPLIT, $0-40
	MOVQ rk+0(FP), AX
	MOVQ iv+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ src+24(FP), SI
	MOVQ n+32(FP), CX
	LOADKEYS(AX)
	MOVOU (BX), X0        // X0 = iv
	MOVO X0, X15
	PXOR X1, X15          // X15 = iv ^ k0
	TESTQ CX, CX
	JZ encdone
encloop:
	MOVO X15, X12
	ROUNDS(X12)           // X12 = E(iv)
	MOVBLZX (SI), DX
	MOVQ DX, X14
	PSLLDQ $15, X14       // in at byte 15
	MOVO X0, X13
	PSRLDQ $1, X13
	PXOR X1, X13
	PXOR X14, X13         // X13 = (iv>>8 | in<<120) ^ k0
	PSLLDQ $15, X12       // ks[0] at byte 15, zeros below
	PXOR X13, X12         // X12 = next iv ^ k0 (byte 15: in ^ ks[0])
	MOVO X12, X15
	MOVO X12, X0
	PXOR X1, X0           // X0 = next iv
	PEXTRB $15, X0, DX
	MOVB DX, (DI)
	INCQ SI
	INCQ DI
	DECQ CX
	JNZ encloop
encdone:
	MOVOU X0, (BX)
	RET

// One block j of a sixteen-byte step: bytes j..j+15 of W || N (X8 || X9).
#define BLOCK(j, x) MOVO X9, x; PALIGNR $j, X8, x; PXOR X10, x

// Rounds 1..10 on X0..X7 with the keys read from rk (AX).
#define ROUND8(off) \
	MOVOU off(AX), X11; \
	AESENC X11, X0; AESENC X11, X1; AESENC X11, X2; AESENC X11, X3; \
	AESENC X11, X4; AESENC X11, X5; AESENC X11, X6; AESENC X11, X7
#define LAST8 \
	MOVOU 160(AX), X11; \
	AESENCLAST X11, X0; AESENCLAST X11, X1; AESENCLAST X11, X2; AESENCLAST X11, X3; \
	AESENCLAST X11, X4; AESENCLAST X11, X5; AESENCLAST X11, X6; AESENCLAST X11, X7
#define RUN8 \
	ROUND8(16); ROUND8(32); ROUND8(48); ROUND8(64); ROUND8(80); \
	ROUND8(96); ROUND8(112); ROUND8(128); ROUND8(144); LAST8

// Byte 0 of X0..X7 into bytes 0..7 of X0.
#define GATHER8 \
	PUNPCKLBW X1, X0; PUNPCKLBW X3, X2; PUNPCKLBW X5, X4; PUNPCKLBW X7, X6; \
	PUNPCKLWL X2, X0; PUNPCKLWL X6, X4; PUNPCKLLQ X4, X0

// func cfb8Decrypt(rk *[176]byte, iv *[16]byte, dst, src *byte, n int)
//
// Per byte: ks = E(iv); out = in ^ ks[0]; iv = iv[1:] || in. The inputs of
// sixteen blocks are the register W and the next sixteen ciphertext bytes N,
// so they run as two groups of eight independent chains; N is read before
// the plaintext is written, which makes in-place use safe.
TEXT ·cfb8Decrypt(SB), NOSPLIT, $0-40
	MOVQ rk+0(FP), AX
	MOVQ iv+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ src+24(FP), SI
	MOVQ n+32(FP), CX
	MOVOU (BX), X8        // X8 = W, the last sixteen ciphertext bytes
	MOVOU (AX), X10       // X10 = k0
	CMPQ CX, $16
	JB dectail
decloop:
	MOVOU (SI), X9        // X9 = N
	BLOCK(0, X0); BLOCK(1, X1); BLOCK(2, X2); BLOCK(3, X3)
	BLOCK(4, X4); BLOCK(5, X5); BLOCK(6, X6); BLOCK(7, X7)
	RUN8
	GATHER8
	MOVO X0, X12          // keystream bytes 0..7
	BLOCK(8, X0); BLOCK(9, X1); BLOCK(10, X2); BLOCK(11, X3)
	BLOCK(12, X4); BLOCK(13, X5); BLOCK(14, X6); BLOCK(15, X7)
	RUN8
	GATHER8
	PUNPCKLQDQ X0, X12    // keystream bytes 0..15
	PXOR X9, X12
	MOVOU X12, (DI)
	MOVO X9, X8           // W = N
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JAE decloop
dectail:
	MOVO X8, X0           // W moves to X0: LOADKEYS takes X8
	TESTQ CX, CX
	JZ decdone
	LOADKEYS(AX)
dectailloop:
	MOVO X0, X12
	PXOR X1, X12
	ROUNDS(X12)           // X12 = E(W)
	MOVBLZX (SI), DX
	MOVQ DX, X13
	PXOR X13, X12         // byte 0: in ^ ks[0]
	PEXTRB $0, X12, DX
	MOVB DX, (DI)
	PSRLDQ $1, X0
	PSLLDQ $15, X13
	POR X13, X0           // W = W[1:] || in
	INCQ SI
	INCQ DI
	DECQ CX
	JNZ dectailloop
decdone:
	MOVOU X0, (BX)
	RET

// func aesLatency(rk *[176]byte, n int)
TEXT ·aesLatency(SB), NOSPLIT, $0-16
	MOVQ rk+0(FP), AX
	MOVQ n+8(FP), CX
	LOADKEYS(AX)
	PXOR X0, X0
	TESTQ CX, CX
	JZ latdone
latloop:
	PXOR X1, X0
	ROUNDS(X0)
	DECQ CX
	JNZ latloop
latdone:
	RET

// Round key off(AX) on X0..X15.
#define ROUND16(op, off) \
	op off(AX), X0; op off(AX), X1; op off(AX), X2; op off(AX), X3; \
	op off(AX), X4; op off(AX), X5; op off(AX), X6; op off(AX), X7; \
	op off(AX), X8; op off(AX), X9; op off(AX), X10; op off(AX), X11; \
	op off(AX), X12; op off(AX), X13; op off(AX), X14; op off(AX), X15

// func aesThroughput(rk *[176]byte, n int)
//
// Sixteen independent chains, keys read from memory, so that the unit is
// kept full whatever its latency and issue width.
TEXT ·aesThroughput(SB), NOSPLIT, $0-16
	MOVQ rk+0(FP), AX
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	JZ thrdone
thrloop:
	ROUND16(PXOR, 0)
	ROUND16(AESENC, 16); ROUND16(AESENC, 32); ROUND16(AESENC, 48)
	ROUND16(AESENC, 64); ROUND16(AESENC, 80); ROUND16(AESENC, 96)
	ROUND16(AESENC, 112); ROUND16(AESENC, 128); ROUND16(AESENC, 144)
	ROUND16(AESENCLAST, 160)
	DECQ CX
	JNZ thrloop
thrdone:
	RET
