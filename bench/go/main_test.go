package main

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"
)

// The values below are shangmi's (see shangmi-bench's input.rs and sm4_ops.rs): the Go side
// must build the same inputs and compute the same outputs, or its figures would be compared
// against different work.

func TestInputMatchesTheRustGenerator(t *testing.T) {
	want, _ := hex.DecodeString("0b02e536a14ed61ab049b856add63ffc")
	if got := input(16); !bytes.Equal(got, want) {
		t.Fatalf("input(16) = %x, want %x", got, want)
	}
}

func TestEveryLibraryAgreesWithShangmi(t *testing.T) {
	sm3, _ := hex.DecodeString("4670af0e7d9c100c431e7a6688a97c092374216c2ddd9675d12e489e31037af1")
	for _, c := range cases("sm3", 1000) {
		if got := c.check(); !bytes.Equal(got, sm3) {
			t.Errorf("%s sm3 = %x", c.impl, got)
		}
	}
	cbc, _ := hex.DecodeString("0e451b22661a95f7e5156b76672d41beed75794f299843920bf6366a6fe21a5f" +
		"65c099811609a9ddb99ec6cc922c378fef3a7fa6542bfa2c899a7edbb881f993")
	for _, c := range cases("sm4-cbc-enc", 64) {
		if got := c.check(); !bytes.Equal(got, cbc) {
			t.Errorf("%s sm4-cbc-enc = %x", c.impl, got)
		}
	}
	// Round trips of the randomized operations report success.
	for _, op := range []string{"sm2-sign", "sm2-verify", "sm2-keygen"} {
		for _, c := range cases(op, 0) {
			if got := c.check(); !bytes.Equal(got, []byte{1}) {
				t.Errorf("%s %s = %x", c.impl, op, got)
			}
		}
	}
	for _, c := range cases("sm2-encrypt", 100) {
		if got := c.check(); !bytes.Equal(got, input(100)) {
			t.Errorf("%s sm2-encrypt round trip", c.impl)
		}
	}
	if cases("md5", 16) != nil {
		t.Error("unknown ops have no candidates")
	}
}

func TestARoundTimesEveryCandidate(t *testing.T) {
	cands := cases("sm3", 64)
	s := &session{cands: cands, calls: calibrate(cands, time.Millisecond), work: 64 / 1e6}
	for round := 0; round < 3; round++ {
		rates := s.runRound()
		if len(rates) != len(cands) {
			t.Fatalf("%d rates for %d candidates", len(rates), len(cands))
		}
		for i, r := range rates {
			if !(r > 0) {
				t.Errorf("round %d: %s rate %v", round, cands[i].impl, r)
			}
		}
	}
}
