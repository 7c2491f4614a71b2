package main

// The PKI cases: the chain shangmi-bench writes into -pki-dir (root, intermediate, leaf and
// the leaf's key), verified by gmsm's smx509 as its own tests call it, and SignedData over
// 1 KiB made and checked by gmsm's pkcs7 (GM/T 0010 OIDs, signed attributes, the
// intermediate included, the chain verified).

import (
	"crypto"
	"encoding/pem"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/emmansun/gmsm/pkcs7"
	"github.com/emmansun/gmsm/smx509"
)

var pkiDir = flag.String("pki-dir", "", "where shangmi-bench wrote the PKI bench chain")

func pkiFile(name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(*pkiDir, name))
	if err != nil {
		return nil, err
	}
	if b, _ := pem.Decode(data); b != nil {
		return b.Bytes, nil
	}
	return nil, fmt.Errorf("%s: no PEM", name)
}

type pkiChain struct {
	root, mid, leaf *smx509.Certificate
	key             crypto.PrivateKey
}

func loadChain() (*pkiChain, error) {
	var c pkiChain
	for _, f := range []struct {
		name string
		to   **smx509.Certificate
	}{{"root.pem", &c.root}, {"mid.pem", &c.mid}, {"leaf.pem", &c.leaf}} {
		der, err := pkiFile(f.name)
		if err != nil {
			return nil, err
		}
		if *f.to, err = smx509.ParseCertificate(der); err != nil {
			return nil, err
		}
	}
	der, err := pkiFile("leaf.key")
	if err != nil {
		return nil, err
	}
	if c.key, err = smx509.ParsePKCS8PrivateKey(der); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *pkiChain) options() smx509.VerifyOptions {
	roots, inter := smx509.NewCertPool(), smx509.NewCertPool()
	roots.AddCert(c.root)
	inter.AddCert(c.mid)
	return smx509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []smx509.ExtKeyUsage{smx509.ExtKeyUsageAny}}
}

func pkiCases(op string) []candidate {
	if *pkiDir == "" {
		return nil
	}
	c, err := loadChain()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gmpeers: the PKI chain: %v\n", err)
		return nil
	}
	one, zero := []byte{1}, []byte{0}
	flag := func(err error) []byte {
		if err == nil {
			return one
		}
		return zero
	}
	gm := func(check, run job) []candidate {
		return []candidate{{"gmsm", gmsmVersion, check, run}}
	}
	data := input(1024)
	sign := func() []byte {
		sd, err := pkcs7.NewSMSignedData(data)
		must(err)
		must(sd.AddSignerChain(c.leaf, c.key, []*smx509.Certificate{c.mid}, pkcs7.SignerInfoConfig{}))
		out, err := sd.Finish()
		must(err)
		return out
	}
	roots := smx509.NewCertPool()
	roots.AddCert(c.root)
	verify := func(msg []byte) []byte {
		p7, err := pkcs7.Parse(msg)
		if err != nil {
			return zero
		}
		return flag(p7.VerifyWithChain(roots))
	}
	switch op {
	case "x509-verify-chain":
		opts := c.options()
		run := func() []byte { _, err := c.leaf.Verify(opts); return flag(err) }
		return gm(run, run)
	case "x509-verify-chain-fresh":
		run := func() []byte { _, err := c.leaf.Verify(c.options()); return flag(err) }
		return gm(run, run)
	case "cms-sign":
		return gm(func() []byte { return verify(sign()) }, func() []byte { return sign()[:1] })
	case "cms-verify":
		msg := sign()
		run := func() []byte { return verify(msg) }
		return gm(run, run)
	}
	return nil
}
