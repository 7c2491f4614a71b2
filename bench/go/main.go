// Command gmpeers measures the Go SM libraries (github.com/emmansun/gmsm and
// github.com/tjfoc/gmsm) for shangmi-bench, which runs it as a child process in the same
// benchmark run.
//
// The conversation, one line each way per step, so that the Go peers take their turns inside
// shangmi-bench's rounds rather than after them:
//
//	> case <op> <size>     (size 0 for per-operation ops)
//	< {"impl":"gmsm","version":"v0.44.1","unit":"MB/s","check":"<hex>"}   one per implementation
//	< {}                   (alone for an op no Go library has)
//	> round                (as many as shangmi-bench has rounds)
//	< {"rates":[312.5,140.2]}   one timed slice per implementation, in the order above
//
// A new "case" line ends the previous case.
//
// "check" is the SM3 digest (hex) of what the operation produced on the shared
// deterministic input (a xorshift stream and fixed keys, the same as shangmi-bench's), so
// the caller can confirm the peer computed the right thing before trusting its speed. For
// randomized operations the output is a round trip: the verified flag, or the decrypted
// plaintext.
package main

import (
	"bufio"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	gmcipher "github.com/emmansun/gmsm/cipher"
	gmsm2 "github.com/emmansun/gmsm/sm2"
	gmsm3 "github.com/emmansun/gmsm/sm3"
	gmsm4 "github.com/emmansun/gmsm/sm4"
	tjsm2 "github.com/tjfoc/gmsm/sm2"
	tjsm3 "github.com/tjfoc/gmsm/sm3"
	tjsm4 "github.com/tjfoc/gmsm/sm4"
)

// Versions, as pinned in go.mod.
const (
	gmsmVersion  = "v0.44.1"
	tjfocVersion = "v1.4.1"
)

// The shared fixed inputs (see shangmi-bench's sm4_ops.rs and sm2_ops.rs).
var (
	sm4Key = []byte{0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c}
	sm4IV  = []byte{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}
	nonce  = []byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	aad    = []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	msg32  = []byte{0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
		0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a}
	defaultID = []byte("1234567812345678")
)

// input is shangmi-bench's deterministic input: a xorshift stream.
func input(n int) []byte {
	x := uint64(1)*0x9e3779b97f4a7c15 | 1
	out := make([]byte, n)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = byte(x >> 24)
	}
	return out
}

// A job computes the op once into its output.
type job func() []byte

type candidate struct {
	impl, version string
	check, run    job
}

type header struct {
	Impl    string `json:"impl"`
	Version string `json:"version"`
	Unit    string `json:"unit"`
	Check   string `json:"check"`
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gmpeers:", err)
		os.Exit(2)
	}
}

func gm4() cipher.Block {
	b, err := gmsm4.NewCipher(sm4Key)
	must(err)
	return b
}

func tj4() cipher.Block {
	b, err := tjsm4.NewCipher(sm4Key)
	must(err)
	return b
}

func ecb(b cipher.Block, data []byte, decrypt bool) []byte {
	out := make([]byte, len(data))
	var m cipher.BlockMode
	if decrypt {
		m = gmcipher.NewECBDecrypter(b)
	} else {
		m = gmcipher.NewECBEncrypter(b)
	}
	m.CryptBlocks(out, data)
	return out
}

func cbcEnc(b cipher.Block, data []byte) []byte {
	out := make([]byte, len(data))
	cipher.NewCBCEncrypter(b, sm4IV).CryptBlocks(out, data)
	return out
}

func cbcDec(b cipher.Block, data []byte) []byte {
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(b, sm4IV).CryptBlocks(out, data)
	return out
}

func ctr(b cipher.Block, data []byte) []byte {
	out := make([]byte, len(data))
	cipher.NewCTR(b, sm4IV).XORKeyStream(out, data)
	return out
}

func gcmSeal(b cipher.Block, data []byte) []byte {
	g, err := cipher.NewGCM(b)
	must(err)
	sealed := g.Seal(nil, nonce, data, aad)
	return sealed[:len(data)]
}

// timed returns the job that times a block-cipher op the way gmsm's own benchmarks do: the
// mode object and the output buffer are made once, outside the timed calls (a CBC object
// carries its chaining value on from call to call, as in `go test -bench`). CTR is the
// exception: a reused stream runs on through keystream it made ahead for earlier calls, which
// on 16-byte messages is not the cost of a message; a message needs a stream from its IV, and
// Go's streams cannot be reset, so each call makes one (negligible at 8 KiB).
// check computes the op afresh, for the output check.
func timed(check job, setup func() job) candidate {
	return candidate{check: check, run: setup()}
}

// cases returns the candidates for an op at a size; nil when no Go library has it.
func cases(op string, n int) []candidate {
	data := input(n)
	named := func(impl, version string, c candidate) candidate {
		c.impl, c.version = impl, version
		return c
	}
	gm := func(c candidate) candidate { return named("gmsm", gmsmVersion, c) }
	tj := func(c candidate) candidate { return named("tjfoc", tjfocVersion, c) }
	same := func(run job) candidate { return candidate{check: run, run: run} }
	out := make([]byte, n)
	mode := func(m func() cipher.BlockMode, src []byte) func() job {
		return func() job {
			bm, buf := m(), make([]byte, len(src))
			return func() []byte { bm.CryptBlocks(buf, src); return buf }
		}
	}
	switch op {
	case "sm3":
		return []candidate{
			gm(same(func() []byte { d := gmsm3.Sum(data); return d[:] })),
			tj(same(func() []byte { return tjsm3.Sm3Sum(data) })),
		}
	case "sm4-ecb":
		g, t := gm4(), tj4()
		return []candidate{
			gm(timed(func() []byte { return ecb(g, data, false) },
				mode(func() cipher.BlockMode { return gmcipher.NewECBEncrypter(g) }, data))),
			tj(timed(func() []byte { return ecb(t, data, false) },
				mode(func() cipher.BlockMode { return gmcipher.NewECBEncrypter(t) }, data))),
		}
	case "sm4-cbc-enc":
		g, t := gm4(), tj4()
		return []candidate{
			gm(timed(func() []byte { return cbcEnc(g, data) },
				mode(func() cipher.BlockMode { return cipher.NewCBCEncrypter(g, sm4IV) }, data))),
			tj(timed(func() []byte { return cbcEnc(t, data) },
				mode(func() cipher.BlockMode { return cipher.NewCBCEncrypter(t, sm4IV) }, data))),
		}
	case "sm4-cbc-dec":
		g, t := gm4(), tj4()
		ct := cbcEnc(g, data)
		return []candidate{
			gm(timed(func() []byte { return cbcDec(g, ct) },
				mode(func() cipher.BlockMode { return cipher.NewCBCDecrypter(g, sm4IV) }, ct))),
			tj(timed(func() []byte { return cbcDec(t, ct) },
				mode(func() cipher.BlockMode { return cipher.NewCBCDecrypter(t, sm4IV) }, ct))),
		}
	case "sm4-ctr":
		g, t := gm4(), tj4()
		stream := func(b cipher.Block) func() job {
			return func() job {
				return func() []byte { cipher.NewCTR(b, sm4IV).XORKeyStream(out, data); return out }
			}
		}
		return []candidate{
			gm(timed(func() []byte { return ctr(g, data) }, stream(g))),
			tj(timed(func() []byte { return ctr(t, data) }, stream(t))),
		}
	case "sm4-gcm-seal":
		g, t := gm4(), tj4()
		seal := func(b cipher.Block) func() job {
			return func() job {
				a, err := cipher.NewGCM(b)
				must(err)
				var sealed []byte
				return func() []byte { sealed = a.Seal(sealed[:0], nonce, data, aad); return sealed }
			}
		}
		return []candidate{
			gm(timed(func() []byte { return gcmSeal(g, data) }, seal(g))),
			tj(timed(func() []byte { return gcmSeal(t, data) }, seal(t))),
		}
	case "sm4-gcm-open":
		g := gm4()
		ag, err := cipher.NewGCM(g)
		must(err)
		sealed := ag.Seal(nil, nonce, data, aad)
		return []candidate{gm(same(func() []byte {
			pt, err := ag.Open(out[:0], nonce, sealed, aad)
			must(err)
			return pt
		}))}
	case "sm4-xts":
		key, tweak := sm4Key, sm4IV
		if n < 16 {
			return nil
		}
		x, err := gmcipher.NewGBXTSEncrypter(gmsm4.NewCipher, key, tweak, tweak)
		must(err)
		return []candidate{gm(same(func() []byte { x.CryptBlocks(out, data); return out }))}
	}
	if strings.HasPrefix(op, "x509-") || strings.HasPrefix(op, "cms-") {
		return pkiCases(op)
	}
	return sm2Cases(op, n, data, func(run job) candidate { return gm(same(run)) },
		func(run job) candidate { return tj(same(run)) })
}

func sm2Cases(op string, n int, data []byte, gm, tj func(job) candidate) []candidate {
	gk, err := gmsm2.GenerateKey(rand.Reader)
	must(err)
	tk, err := tjsm2.GenerateKey(rand.Reader)
	must(err)
	one := []byte{1}
	flag := func(ok bool) []byte {
		if ok {
			return one
		}
		return []byte{0}
	}
	switch op {
	case "sm2-sign":
		return []candidate{
			{"gmsm", gmsmVersion, func() []byte {
				sig, err := gk.SignWithSM2(rand.Reader, defaultID, msg32)
				must(err)
				return flag(gmsm2.VerifyASN1WithSM2(&gk.PublicKey, defaultID, msg32, sig))
			}, func() []byte {
				sig, err := gk.SignWithSM2(rand.Reader, defaultID, msg32)
				must(err)
				return sig[:1]
			}},
			{"tjfoc", tjfocVersion, func() []byte {
				r, s, err := tjsm2.Sm2Sign(tk, msg32, defaultID, rand.Reader)
				must(err)
				return flag(tjsm2.Sm2Verify(&tk.PublicKey, msg32, defaultID, r, s))
			}, func() []byte {
				r, _, err := tjsm2.Sm2Sign(tk, msg32, defaultID, rand.Reader)
				must(err)
				return r.Bytes()[:1]
			}},
		}
	case "sm2-verify":
		gsig, err := gk.SignWithSM2(rand.Reader, defaultID, msg32)
		must(err)
		r, s, err := tjsm2.Sm2Sign(tk, msg32, defaultID, rand.Reader)
		must(err)
		return []candidate{
			gm(func() []byte { return flag(gmsm2.VerifyASN1WithSM2(&gk.PublicKey, defaultID, msg32, gsig)) }),
			tj(func() []byte { return flag(tjsm2.Sm2Verify(&tk.PublicKey, msg32, defaultID, r, s)) }),
		}
	case "sm2-keygen":
		return []candidate{
			gm(func() []byte {
				k, err := gmsm2.GenerateKey(rand.Reader)
				must(err)
				return flag(k.Curve.IsOnCurve(k.X, k.Y))
			}),
			tj(func() []byte {
				k, err := tjsm2.GenerateKey(rand.Reader)
				must(err)
				return flag(k.Curve.IsOnCurve(k.X, k.Y))
			}),
		}
	case "sm2-encrypt":
		opts := gmsm2.NewPlainEncrypterOpts(gmsm2.MarshalUncompressed, gmsm2.C1C3C2)
		return []candidate{
			{"gmsm", gmsmVersion, func() []byte {
				ct, err := gmsm2.Encrypt(rand.Reader, &gk.PublicKey, data, opts)
				must(err)
				pt, err := gmsm2.Decrypt(gk, ct)
				must(err)
				return pt
			}, func() []byte {
				ct, err := gmsm2.Encrypt(rand.Reader, &gk.PublicKey, data, opts)
				must(err)
				return ct[:1]
			}},
			{"tjfoc", tjfocVersion, func() []byte {
				ct, err := tjsm2.Encrypt(&tk.PublicKey, data, rand.Reader, tjsm2.C1C3C2)
				must(err)
				pt, err := tjsm2.Decrypt(tk, ct, tjsm2.C1C3C2)
				must(err)
				return pt
			}, func() []byte {
				ct, err := tjsm2.Encrypt(&tk.PublicKey, data, rand.Reader, tjsm2.C1C3C2)
				must(err)
				return ct[:1]
			}},
		}
	case "sm2-decrypt":
		gct, err := gmsm2.EncryptASN1(rand.Reader, &gk.PublicKey, data)
		must(err)
		tct, err := tjsm2.Encrypt(&tk.PublicKey, data, rand.Reader, tjsm2.C1C3C2)
		must(err)
		return []candidate{
			gm(func() []byte {
				pt, err := gmsm2.Decrypt(gk, gct)
				must(err)
				return pt
			}),
			tj(func() []byte {
				pt, err := tjsm2.Decrypt(tk, tct, tjsm2.C1C3C2)
				must(err)
				return pt
			}),
		}
	}
	return nil
}

// session is the case being measured: its candidates and how many calls fill a slice.
type session struct {
	cands []candidate
	calls []int
	work  float64
	round int
}

// calibrate finds, for each candidate, how many calls fill a slice.
func calibrate(cands []candidate, slice time.Duration) []int {
	calls := make([]int, len(cands))
	for i, c := range cands {
		start := time.Now()
		n := 0
		for time.Since(start) < slice/4 || n == 0 {
			c.run()
			n++
		}
		per := time.Since(start).Seconds() / float64(n)
		calls[i] = max(1, int(slice.Seconds()/per))
	}
	return calls
}

// runRound times one slice of each candidate (who goes first rotates) and returns the rates
// in candidate order.
func (s *session) runRound() []float64 {
	rates := make([]float64, len(s.cands))
	for j := range s.cands {
		i := (s.round + j) % len(s.cands)
		start := time.Now()
		for k := 0; k < s.calls[i]; k++ {
			s.cands[i].run()
		}
		rates[i] = s.work * float64(s.calls[i]) / time.Since(start).Seconds()
	}
	s.round++
	return rates
}

func main() {
	sliceMs := flag.Int("slice-ms", 40, "milliseconds per implementation per round")
	flag.Parse()
	slice := time.Duration(*sliceMs) * time.Millisecond
	enc := json.NewEncoder(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	var cur *session
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 1 && fields[0] == "round":
			rates := []float64{}
			if cur != nil {
				rates = cur.runRound()
			}
			must(enc.Encode(struct {
				Rates []float64 `json:"rates"`
			}{rates}))
		case len(fields) == 3 && fields[0] == "case":
			op := fields[1]
			n, err := strconv.Atoi(fields[2])
			must(err)
			cur = nil
			cands := cases(op, n)
			if len(cands) > 0 {
				unit, work := "MB/s", float64(n)/1e6
				if n == 0 || (strings.HasPrefix(op, "sm2-") && n <= 1024) {
					unit, work = "ops/s", 1
				}
				// The check comes first: a peer is timed only after its output is known.
				for _, c := range cands {
					sum := gmsm3.Sum(c.check())
					must(enc.Encode(header{c.impl, c.version, unit, hex.EncodeToString(sum[:])}))
				}
				cur = &session{cands: cands, calls: calibrate(cands, slice), work: work}
			}
			// An empty object ends the headers.
			must(enc.Encode(struct{}{}))
		}
	}
	must(sc.Err())
}
