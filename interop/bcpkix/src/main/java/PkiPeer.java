// BouncyCastle's PKIX and CMS (bcpkix 1.87) as a peer of shangmi-pki's interop tests: it
// verifies what shangmi makes and makes what shangmi verifies. SM2 signatures use BC's
// SM3withSM2, whose SM2 ID is GM/T 0009's 1234567812345678.
//
//   PkiPeer verify ROOT LEAF [MID]          chain signatures (each by the next, the root by
//                                           itself) and validity
//   PkiPeer verify-csr CSR                  the request's own signature
//   PkiPeer verify-crl CRL ISSUER SERIALHEX the CRL's signature, and that it revokes SERIALHEX
//   PkiPeer issue DIR                       root.pem, leaf.pem (signed by the root), leaf.key,
//                                           leaf.csr, root.crl (revoking the leaf)
//   PkiPeer cms-verify P7 ROOT [CONTENT]    SignedData (PKCS#7 OIDs): every signer, its
//                                           certificate signed by ROOT; prints the content
//   PkiPeer cms-sign CERT KEY DATA OUT [detached] [ber]   (ber: BC's default encoding)
//   PkiPeer p12-read FILE PASSWORD          a PKCS#12 keystore through BC's KeyStore: each
//                                           alias, and that its key signs what its
//                                           certificate verifies ("key matches")
//   PkiPeer p12-write KEY CERT PASSWORD OUT TYPE   a keystore of that KeyStore type
//                                           ("PKCS12": BC's default; "PKCS12-AES256-AES128")
//
// Exit 0 on success, 1 on a failed check (the reason on stderr), 2 on usage errors.

import java.io.FileOutputStream;
import java.io.FileReader;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Security;
import java.security.spec.ECGenParameterSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;

import org.bouncycastle.asn1.ASN1Encoding;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.CRLReason;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CRLHolder;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v2CRLBuilder;
import org.bouncycastle.cert.jcajce.JcaCertStore;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.cms.CMSProcessableByteArray;
import org.bouncycastle.cms.CMSSignedData;
import org.bouncycastle.cms.CMSSignedDataGenerator;
import org.bouncycastle.cms.DefaultCMSSignatureAlgorithmNameGenerator;
import org.bouncycastle.cms.SignerInformation;
import org.bouncycastle.cms.SignerInformationVerifier;
import org.bouncycastle.cms.jcajce.JcaSignerInfoGeneratorBuilder;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.ContentVerifierProvider;
import org.bouncycastle.operator.DefaultSignatureAlgorithmIdentifierFinder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.operator.jcajce.JcaContentVerifierProviderBuilder;
import org.bouncycastle.operator.jcajce.JcaDigestCalculatorProviderBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

public final class PkiPeer {
    private static final String BC = "BC";
    private static final String ALG = "SM3withSM2";

    public static void main(String[] args) throws Exception {
        Security.addProvider(new BouncyCastleProvider());
        if (args.length < 1) {
            usage();
        }
        try {
            switch (args[0]) {
                case "verify" -> verify(args);
                case "verify-csr" -> verifyCsr(args);
                case "verify-crl" -> verifyCrl(args);
                case "issue" -> issue(args);
                case "cms-verify" -> cmsVerify(args);
                case "cms-sign" -> cmsSign(args);
                case "p12-read" -> p12Read(args);
                case "p12-write" -> p12Write(args);
                default -> usage();
            }
        } catch (Failed e) {
            System.err.println("bcpkix: " + e.getMessage());
            System.exit(1);
        }
    }

    private static void usage() {
        System.err.println("usage: PkiPeer verify|verify-csr|verify-crl|issue|cms-verify|cms-sign ...");
        System.exit(2);
    }

    /** A check that failed (exit 1), as opposed to an error (an exception, exit 1 too). */
    private static final class Failed extends Exception {
        Failed(String why) {
            super(why);
        }
    }

    private static Object read(String path) throws IOException {
        try (PEMParser p = new PEMParser(new FileReader(path, StandardCharsets.UTF_8))) {
            Object o = p.readObject();
            if (o == null) {
                throw new IOException("nothing in " + path);
            }
            return o;
        }
    }

    private static X509CertificateHolder cert(String path) throws IOException {
        return (X509CertificateHolder) read(path);
    }

    private static PrivateKey key(String path) throws IOException {
        Object o = read(path);
        PrivateKeyInfo info = o instanceof PEMKeyPair kp ? kp.getPrivateKeyInfo() : (PrivateKeyInfo) o;
        return new JcaPEMKeyConverter().setProvider(BC).getPrivateKey(info);
    }

    private static void p12Read(String[] a) throws Exception {
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12", BC);
        try (var in = Files.newInputStream(Path.of(a[1]))) {
            ks.load(in, a[2].toCharArray());
        }
        int keys = 0;
        for (String alias : java.util.Collections.list(ks.aliases())) {
            if (!ks.isKeyEntry(alias)) {
                System.out.println("certificate " + alias);
                continue;
            }
            PrivateKey k = (PrivateKey) ks.getKey(alias, a[2].toCharArray());
            var chain = ks.getCertificateChain(alias);
            var sig = java.security.Signature.getInstance(ALG, BC);
            sig.initSign(k);
            byte[] probe = "probe".getBytes(StandardCharsets.UTF_8);
            sig.update(probe);
            byte[] s = sig.sign();
            sig.initVerify(chain[0].getPublicKey());
            sig.update(probe);
            if (!sig.verify(s)) {
                throw new Failed(alias + ": the key does not match its certificate");
            }
            keys++;
            System.out.println("key " + alias + " (" + k.getAlgorithm() + "), chain of " + chain.length
                    + ", key matches");
        }
        if (keys == 0) {
            throw new Failed("no key entry");
        }
    }

    private static void p12Write(String[] a) throws Exception {
        var c = new JcaX509CertificateConverter().setProvider(BC).getCertificate(cert(a[2]));
        java.security.KeyStore ks = java.security.KeyStore.getInstance(a[5], BC);
        ks.load(null, null);
        ks.setKeyEntry("bc", key(a[1]), a[3].toCharArray(), new java.security.cert.Certificate[] {c});
        try (var out = new FileOutputStream(a[4])) {
            ks.store(out, a[3].toCharArray());
        }
    }

    private static ContentVerifierProvider by(X509CertificateHolder issuer) throws Exception {
        return new JcaContentVerifierProviderBuilder().setProvider(BC).build(issuer);
    }

    private static void signedBy(X509CertificateHolder c, X509CertificateHolder issuer) throws Exception {
        if (!c.isValidOn(new Date())) {
            throw new Failed(c.getSubject() + ": not valid now");
        }
        if (!c.getIssuer().equals(issuer.getSubject()) || !c.isSignatureValid(by(issuer))) {
            throw new Failed(c.getSubject() + ": not signed by " + issuer.getSubject());
        }
    }

    private static void verify(String[] a) throws Exception {
        X509CertificateHolder root = cert(a[1]);
        X509CertificateHolder leaf = cert(a[2]);
        signedBy(root, root);
        if (a.length > 3) {
            X509CertificateHolder mid = cert(a[3]);
            signedBy(mid, root);
            signedBy(leaf, mid);
        } else {
            signedBy(leaf, root);
        }
    }

    private static void verifyCsr(String[] a) throws Exception {
        PKCS10CertificationRequest csr = (PKCS10CertificationRequest) read(a[1]);
        if (!csr.isSignatureValid(new JcaContentVerifierProviderBuilder().setProvider(BC)
                .build(csr.getSubjectPublicKeyInfo()))) {
            throw new Failed("request signature");
        }
    }

    private static void verifyCrl(String[] a) throws Exception {
        X509CRLHolder crl = (X509CRLHolder) read(a[1]);
        if (!crl.isSignatureValid(by(cert(a[2])))) {
            throw new Failed("CRL signature");
        }
        if (crl.getRevokedCertificate(new BigInteger(a[3], 16)) == null) {
            throw new Failed("serial " + a[3] + " is not revoked");
        }
    }

    private static void write(Path file, Object o) throws IOException {
        try (JcaPEMWriter w = new JcaPEMWriter(new OutputStreamWriter(
                new FileOutputStream(file.toFile()), StandardCharsets.UTF_8))) {
            w.writeObject(o);
        }
    }

    private static void issue(String[] a) throws Exception {
        Path dir = Path.of(a[1]);
        Files.createDirectories(dir);
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC", BC);
        g.initialize(new ECGenParameterSpec("sm2p256v1"));
        KeyPair rootKey = g.generateKeyPair();
        KeyPair leafKey = g.generateKeyPair();
        Date from = new Date(System.currentTimeMillis() - 3_600_000L);
        Date to = new Date(System.currentTimeMillis() + 30L * 86_400_000L);
        X500Name rootName = new X500Name("CN=bcpkix Root,O=BouncyCastle");
        ContentSigner rootSigner = new JcaContentSignerBuilder(ALG).setProvider(BC).build(rootKey.getPrivate());
        X509CertificateHolder root = new JcaX509v3CertificateBuilder(rootName, BigInteger.ONE, from, to, rootName,
                rootKey.getPublic())
            .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
            .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
            .build(rootSigner);
        X509CertificateHolder leaf = new JcaX509v3CertificateBuilder(rootName, BigInteger.TWO, from, to,
                new X500Name("CN=bcpkix leaf"), leafKey.getPublic())
            .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
            .addExtension(Extension.subjectAlternativeName, false,
                new GeneralNames(new GeneralName(GeneralName.dNSName, "bcpkix.example")))
            .build(new JcaContentSignerBuilder(ALG).setProvider(BC).build(rootKey.getPrivate()));
        PKCS10CertificationRequest csr = new JcaPKCS10CertificationRequestBuilder(
                new X500Name("CN=bcpkix request"), leafKey.getPublic())
            .build(new JcaContentSignerBuilder(ALG).setProvider(BC).build(leafKey.getPrivate()));
        X509v2CRLBuilder crl = new X509v2CRLBuilder(rootName, from);
        crl.setNextUpdate(to);
        crl.addCRLEntry(BigInteger.TWO, from, CRLReason.keyCompromise);
        X509CRLHolder list = crl.build(new JcaContentSignerBuilder(ALG).setProvider(BC).build(rootKey.getPrivate()));
        write(dir.resolve("root.pem"), root);
        write(dir.resolve("leaf.pem"), leaf);
        write(dir.resolve("leaf.key"), leafKey.getPrivate());
        write(dir.resolve("leaf.csr"), csr);
        write(dir.resolve("root.crl"), list);
    }

    private static void cmsVerify(String[] a) throws Exception {
        byte[] der = Files.readAllBytes(Path.of(a[1]));
        Object pem = null;
        try {
            pem = read(a[1]);
        } catch (IOException e) {
            // DER: read below.
        }
        CMSSignedData sd;
        if (pem instanceof org.bouncycastle.asn1.cms.ContentInfo ci) {
            sd = new CMSSignedData(ci);
        } else {
            sd = new CMSSignedData(der);
        }
        if (a.length > 3) {
            sd = new CMSSignedData(new CMSProcessableByteArray(Files.readAllBytes(Path.of(a[3]))),
                sd.toASN1Structure());
        }
        X509CertificateHolder root = cert(a[2]);
        Collection<SignerInformation> signers = sd.getSignerInfos().getSigners();
        if (signers.isEmpty()) {
            throw new Failed("no signer");
        }
        for (SignerInformation s : signers) {
            @SuppressWarnings("unchecked")
            Collection<X509CertificateHolder> found = sd.getCertificates().getMatches(s.getSID());
            if (found.isEmpty()) {
                throw new Failed("no certificate for a signer");
            }
            X509CertificateHolder c = found.iterator().next();
            signedBy(c, root);
            if (!s.verify(signerVerifier(c))) {
                throw new Failed("signer " + c.getSubject());
            }
        }
        if (sd.getSignedContent() != null && a.length <= 3) {
            System.out.write((byte[]) sd.getSignedContent().getContent());
            System.out.flush();
        }
    }

    /**
     * BC names a SignerInfo's signature by digest + "with" + the encryption algorithm's name
     * and knows SM2-with-SM3 (1.2.156.10197.1.501), which OpenSSL writes; GM/T 0010, gmsm and
     * GmSSL write the SM2 signing OID (1.2.156.10197.1.301.1) there instead, which BC does
     * not know. A BC user reading GM/T 0010 SignedData adds this one mapping.
     */
    private static SignerInformationVerifier signerVerifier(X509CertificateHolder c) throws Exception {
        DefaultCMSSignatureAlgorithmNameGenerator names = new DefaultCMSSignatureAlgorithmNameGenerator() {
            {
                setSigningEncryptionAlgorithmMapping(new ASN1ObjectIdentifier("1.2.156.10197.1.301.1"), "SM2");
            }
        };
        return new SignerInformationVerifier(names, new DefaultSignatureAlgorithmIdentifierFinder(),
            new JcaContentVerifierProviderBuilder().setProvider(BC).build(c),
            new JcaDigestCalculatorProviderBuilder().setProvider(BC).build());
    }

    private static void cmsSign(String[] a) throws Exception {
        X509CertificateHolder c = cert(a[1]);
        PrivateKey k = key(a[2]);
        byte[] data = Files.readAllBytes(Path.of(a[3]));
        List<String> opts = List.of(a).subList(5, a.length);
        boolean detached = opts.contains("detached");
        CMSSignedDataGenerator gen = new CMSSignedDataGenerator();
        gen.addSignerInfoGenerator(new JcaSignerInfoGeneratorBuilder(
                new JcaDigestCalculatorProviderBuilder().setProvider(BC).build())
            .build(new JcaContentSignerBuilder(ALG).setProvider(BC).build(k),
                new JcaX509CertificateConverter().setProvider(BC).getCertificate(c)));
        List<X509CertificateHolder> certs = new ArrayList<>();
        certs.add(c);
        gen.addCertificates(new JcaCertStore(certs));
        CMSSignedData sd = gen.generate(new CMSProcessableByteArray(data), !detached);
        // BC's default encoding is BER (indefinite lengths), as Java programs send it.
        Files.write(Path.of(a[4]), opts.contains("ber") ? sd.getEncoded() : sd.getEncoded(ASN1Encoding.DER));
    }
}
