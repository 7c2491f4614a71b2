// Command gmsmpeer is the gmsm (github.com/emmansun/gmsm) side of shangmi's PKI interop
// tests: it verifies certificates, requests and CRLs that shangmi made, and issues a chain
// and a request for shangmi to verify. shangmi-pki's tests run it on loopback files.
//
//	gmsmpeer verify ROOT.pem LEAF.pem [INTERMEDIATE.pem...]   exit 0 if the chain verifies
//	gmsmpeer verify-csr CSR.pem                               exit 0 if its signature holds
//	gmsmpeer verify-crl CRL.pem ISSUER.pem SERIAL-HEX          exit 0 if signed and listing it
//	gmsmpeer issue DIR                                         writes root.pem, leaf.pem, leaf.key, leaf.csr
//	gmsmpeer cms-verify P7 ROOT.pem [CONTENT]                  exit 0 if SignedData verifies
//	gmsmpeer cms-sign CERT KEY DATA OUT [gm] [detached]        writes SignedData (DER)
//	gmsmpeer cms-encrypt CERT DATA OUT [gm|cfca|ski] [gcm]     writes EnvelopedData (DER): GM/T 0010 OIDs,
//	                                                           cfca: and the key as raw C1C2C3 with no 04,
//	                                                           ski: recipients by key identifier; SM4-GCM
//	gmsmpeer cms-decrypt P7 CERT KEY OUT [cfca]                writes the decrypted content
//	gmsmpeer envkey-seal RECIPIENT-CERT ENV KEY                 a fresh key pair enveloped (GB/T 35276) to the
//	                                                           recipient, and the pair itself (PKCS#8 PEM)
//	gmsmpeer envkey-open ENV RECIPIENT-KEY KEY                  the enveloped pair, opened (PKCS#8 PEM)
//	gmsmpeer sed-make CERT KEY RECIPIENT DATA OUT [gm]           SignedAndEnvelopedData (DER)
//	gmsmpeer sed-open P7 KEY ROOT OUT                           opened and verified: the content
//	gmsmpeer cfca-sm2-make CERT KEY PASSWORD OUT                a CFCA .sm2 file of the pair (DER)
//	gmsmpeer cfca-sm2-open FILE PASSWORD KEY CERT               a CFCA .sm2 file opened (PKCS#8 PEM, PEM)
package main

import (
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/emmansun/gmsm/cfca"
	"github.com/emmansun/gmsm/pkcs"
	"github.com/emmansun/gmsm/pkcs7"
	"github.com/emmansun/gmsm/sm2"
	"github.com/emmansun/gmsm/smx509"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gmsmpeer: "+format+"\n", args...)
	os.Exit(1)
}

// block returns the DER of the first PEM block in the file, or the file itself.
func block(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	if b, _ := pem.Decode(data); b != nil {
		return b.Bytes
	}
	return data
}

func cert(path string) *smx509.Certificate {
	c, err := smx509.ParseCertificate(block(path))
	if err != nil {
		fail("%s: %v", path, err)
	}
	return c
}

func verify(args []string) {
	if len(args) < 2 {
		fail("verify ROOT LEAF [INTERMEDIATE...]")
	}
	roots, inter := smx509.NewCertPool(), smx509.NewCertPool()
	roots.AddCert(cert(args[0]))
	for _, p := range args[2:] {
		inter.AddCert(cert(p))
	}
	opts := smx509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []smx509.ExtKeyUsage{smx509.ExtKeyUsageAny}}
	if _, err := cert(args[1]).Verify(opts); err != nil {
		fail("%s: %v", args[1], err)
	}
}

func verifyCSR(args []string) {
	csr, err := smx509.ParseCertificateRequest(block(args[0]))
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	if err := csr.CheckSignature(); err != nil {
		fail("%s: %v", args[0], err)
	}
}

func verifyCRL(args []string) {
	crl, err := smx509.ParseRevocationList(block(args[0]))
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	if err := crl.CheckSignatureFrom(cert(args[1])); err != nil {
		fail("%s: %v", args[0], err)
	}
	want, _ := hex.DecodeString(args[2])
	for _, e := range crl.RevokedCertificateEntries {
		if e.SerialNumber.Cmp(new(big.Int).SetBytes(want)) == 0 {
			return
		}
	}
	fail("%s does not list serial %s", args[0], args[2])
}

func write(dir, name, kind string, der []byte) {
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		fail("%v", err)
	}
}

func issue(dir string) {
	rootKey, err := sm2.GenerateKey(rand.Reader)
	if err != nil {
		fail("%v", err)
	}
	now := time.Now().Add(-time.Hour)
	rootTmpl := &smx509.Certificate{
		SerialNumber:          big.NewInt(1),
		NotBefore:             now,
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              smx509.KeyUsageCertSign | smx509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	rootTmpl.Subject.CommonName = "gmsm Root"
	rootTmpl.Subject.Organization = []string{"gmsm"}
	rootDER, err := smx509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, rootKey.Public(), rootKey)
	if err != nil {
		fail("%v", err)
	}
	root, _ := smx509.ParseCertificate(rootDER)
	leafKey, err := sm2.GenerateKey(rand.Reader)
	if err != nil {
		fail("%v", err)
	}
	leafTmpl := &smx509.Certificate{
		SerialNumber: big.NewInt(2),
		NotBefore:    now,
		NotAfter:     now.Add(10 * 24 * time.Hour),
		KeyUsage:     smx509.KeyUsageDigitalSignature,
		DNSNames:     []string{"gmsm.example"},
	}
	leafTmpl.Subject.CommonName = "gmsm leaf"
	leafDER, err := smx509.CreateCertificate(rand.Reader, leafTmpl, root, leafKey.Public(), rootKey)
	if err != nil {
		fail("%v", err)
	}
	csrTmpl := &smx509.CertificateRequest{DNSNames: []string{"gmsm.example"}}
	csrTmpl.Subject.CommonName = "gmsm request"
	csrDER, err := smx509.CreateCertificateRequest(rand.Reader, csrTmpl, leafKey)
	if err != nil {
		fail("%v", err)
	}
	keyDER, err := smx509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		fail("%v", err)
	}
	write(dir, "leaf.key", "PRIVATE KEY", keyDER)
	write(dir, "root.pem", "CERTIFICATE", rootDER)
	write(dir, "leaf.pem", "CERTIFICATE", leafDER)
	write(dir, "leaf.csr", "CERTIFICATE REQUEST", csrDER)
}

func cmsVerify(args []string) {
	p7, err := pkcs7.Parse(block(args[0]))
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	if len(args) > 2 {
		content, err := os.ReadFile(args[2])
		if err != nil {
			fail("%v", err)
		}
		p7.Content = content
	}
	roots := smx509.NewCertPool()
	roots.AddCert(cert(args[1]))
	if err := p7.VerifyWithChain(roots); err != nil {
		fail("%s: %v", args[0], err)
	}
}

func cmsSign(args []string) {
	c := cert(args[0])
	key, err := smx509.ParsePKCS8PrivateKey(block(args[1]))
	if err != nil {
		fail("%s: %v", args[1], err)
	}
	data, err := os.ReadFile(args[2])
	if err != nil {
		fail("%v", err)
	}
	gm, detached := false, false
	for _, a := range args[4:] {
		gm = gm || a == "gm"
		detached = detached || a == "detached"
	}
	var sd *pkcs7.SignedData
	if gm {
		sd, err = pkcs7.NewSMSignedData(data)
	} else {
		sd, err = pkcs7.NewSignedData(data)
		if err == nil {
			sd.SetDigestAlgorithm(pkcs7.OIDDigestAlgorithmSM3)
		}
	}
	if err != nil {
		fail("%v", err)
	}
	if err := sd.AddSigner(c, key, pkcs7.SignerInfoConfig{}); err != nil {
		fail("%v", err)
	}
	if detached {
		sd.Detach()
	}
	out, err := sd.Finish()
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(args[3], out, 0o600); err != nil {
		fail("%v", err)
	}
}

func cmsEncrypt(args []string) {
	data, err := os.ReadFile(args[1])
	if err != nil {
		fail("%v", err)
	}
	recipients := []*smx509.Certificate{cert(args[0])}
	opts := map[string]bool{}
	for _, o := range args[3:] {
		opts[o] = true
	}
	var cipher pkcs.Cipher = pkcs.SM4CBC
	if opts["gcm"] {
		cipher = pkcs.SM4GCM
	}
	var out []byte
	switch {
	case opts["gm"]:
		out, err = pkcs7.EncryptSM(cipher, data, recipients)
	case opts["cfca"]:
		out, err = pkcs7.EncryptCFCA(cipher, data, recipients)
	case opts["ski"]:
		out, err = pkcs7.EnvelopeMessageCFCA(cipher, data, recipients)
	default:
		out, err = pkcs7.Encrypt(cipher, data, recipients)
	}
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(args[2], out, 0o600); err != nil {
		fail("%v", err)
	}
}

func cmsDecrypt(args []string) {
	p7, err := pkcs7.Parse(block(args[0]))
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	key, err := smx509.ParsePKCS8PrivateKey(block(args[2]))
	if err != nil {
		fail("%s: %v", args[2], err)
	}
	var content []byte
	if len(args) > 4 && args[4] == "cfca" {
		content, err = p7.DecryptCFCA(cert(args[1]), key)
	} else {
		content, err = p7.Decrypt(cert(args[1]), key)
	}
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	if err := os.WriteFile(args[3], content, 0o600); err != nil {
		fail("%v", err)
	}
}

func writeKey(path string, key any) {
	der, err := smx509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		fail("%v", err)
	}
}

func sedMake(args []string) {
	key, err := smx509.ParsePKCS8PrivateKey(block(args[1]))
	if err != nil {
		fail("%s: %v", args[1], err)
	}
	data, err := os.ReadFile(args[3])
	if err != nil {
		fail("%v", err)
	}
	var sed *pkcs7.SignedAndEnvelopedData
	if len(args) > 5 && args[5] == "gm" {
		sed, err = pkcs7.NewSMSignedAndEnvelopedData(data, pkcs.SM4CBC)
	} else {
		sed, err = pkcs7.NewSignedAndEnvelopedData(data, pkcs.SM4CBC)
		if err == nil {
			sed.SetDigestAlgorithm(pkcs7.OIDDigestAlgorithmSM3)
		}
	}
	if err != nil {
		fail("%v", err)
	}
	if err := sed.AddSigner(cert(args[0]), key); err != nil {
		fail("%v", err)
	}
	if err := sed.AddRecipient(cert(args[2])); err != nil {
		fail("%v", err)
	}
	out, err := sed.Finish()
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(args[4], out, 0o600); err != nil {
		fail("%v", err)
	}
}

func sedOpen(args []string) {
	p7, err := pkcs7.Parse(block(args[0]))
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	key, err := smx509.ParsePKCS8PrivateKey(block(args[1]))
	if err != nil {
		fail("%s: %v", args[1], err)
	}
	roots := smx509.NewCertPool()
	roots.AddCert(cert(args[2]))
	content, err := p7.DecryptAndVerifyOnlyOne(key, func() error { return p7.VerifyWithChain(roots) })
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	if err := os.WriteFile(args[3], content, 0o600); err != nil {
		fail("%v", err)
	}
}

func cfcaMake(args []string) {
	key, err := smx509.ParsePKCS8PrivateKey(block(args[1]))
	if err != nil {
		fail("%s: %v", args[1], err)
	}
	sm2Key, ok := key.(*sm2.PrivateKey)
	if !ok {
		fail("%s: not an SM2 key", args[1])
	}
	out, err := cfca.MarshalSM2([]byte(args[2]), sm2Key, cert(args[0]))
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(args[3], out, 0o600); err != nil {
		fail("%v", err)
	}
}

func cfcaOpen(args []string) {
	key, c, err := cfca.ParseSM2([]byte(args[1]), block(args[0]))
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	writeKey(args[2], key)
	write(".", args[3], "CERTIFICATE", c.Raw)
}

func envkeySeal(args []string) {
	pub, ok := cert(args[0]).PublicKey.(*ecdsa.PublicKey)
	if !ok {
		fail("%s: not an SM2 key", args[0])
	}
	pair, err := sm2.GenerateKey(rand.Reader)
	if err != nil {
		fail("%v", err)
	}
	env, err := sm2.MarshalEnvelopedPrivateKey(rand.Reader, pub, pair)
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(args[1], env, 0o600); err != nil {
		fail("%v", err)
	}
	writeKey(args[2], pair)
}

func envkeyOpen(args []string) {
	key, err := smx509.ParsePKCS8PrivateKey(block(args[1]))
	if err != nil {
		fail("%s: %v", args[1], err)
	}
	priv, ok := key.(*sm2.PrivateKey)
	if !ok {
		fail("%s: not an SM2 key", args[1])
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fail("%v", err)
	}
	pair, err := sm2.ParseEnvelopedPrivateKey(priv, data)
	if err != nil {
		fail("%s: %v", args[0], err)
	}
	writeKey(args[2], pair)
}

func main() {
	if len(os.Args) < 3 {
		fail("usage: verify|verify-csr|verify-crl|issue ...")
	}
	switch args := os.Args[2:]; os.Args[1] {
	case "verify":
		verify(args)
	case "verify-csr":
		verifyCSR(args)
	case "verify-crl":
		if len(args) != 3 {
			fail("verify-crl CRL ISSUER SERIAL-HEX")
		}
		verifyCRL(args)
	case "issue":
		issue(args[0])
	case "envkey-seal":
		if len(args) != 3 {
			fail("envkey-seal RECIPIENT-CERT ENV KEY")
		}
		envkeySeal(args)
	case "sed-make":
		if len(args) < 5 {
			fail("sed-make CERT KEY RECIPIENT DATA OUT [gm]")
		}
		sedMake(args)
	case "sed-open":
		if len(args) != 4 {
			fail("sed-open P7 KEY ROOT OUT")
		}
		sedOpen(args)
	case "cfca-sm2-make":
		if len(args) != 4 {
			fail("cfca-sm2-make CERT KEY PASSWORD OUT")
		}
		cfcaMake(args)
	case "cfca-sm2-open":
		if len(args) != 4 {
			fail("cfca-sm2-open FILE PASSWORD KEY CERT")
		}
		cfcaOpen(args)
	case "envkey-open":
		if len(args) != 3 {
			fail("envkey-open ENV RECIPIENT-KEY KEY")
		}
		envkeyOpen(args)
	case "cms-verify":
		if len(args) < 2 {
			fail("cms-verify P7 ROOT [CONTENT]")
		}
		cmsVerify(args)
	case "cms-encrypt":
		if len(args) < 3 {
			fail("cms-encrypt CERT DATA OUT [gm|cfca|ski] [gcm]")
		}
		cmsEncrypt(args)
	case "cms-decrypt":
		if len(args) < 4 {
			fail("cms-decrypt P7 CERT KEY OUT [cfca]")
		}
		cmsDecrypt(args)
	case "cms-sign":
		if len(args) < 4 {
			fail("cms-sign CERT KEY DATA OUT [gm] [detached]")
		}
		cmsSign(args)
	default:
		fail("unknown command %q", os.Args[1])
	}
}
