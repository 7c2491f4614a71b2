// sm-crypto's calls and conventions (hex strings; sm2.doEncrypt/doDecrypt/doSignature/
// doVerifySignature, sm3(), sm4.encrypt/decrypt) over shangmi, so that switching is one import.
// Where sm-crypto is unsafe or lax shangmi is not: randomness always comes from
// crypto.getRandomValues, C3 is always checked, malformed keys raise.
function smCryptoApi(s) {
  'use strict';

  const N = BigInt('0xfffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54123');
  const msgBytes = (m) => (typeof m === 'string' ? s.utf8(m) : Uint8Array.from(m));
  const keyBytes = (k) => (typeof k === 'string' ? s.fromHex(k) : Uint8Array.from(k));
  // sm-crypto's e without `hash`: the message itself as an integer, used modulo n.
  const bareDigest = (m) => {
    const hex = s.toHex(m);
    const e = hex.length ? BigInt('0x' + hex) % N : 0n;
    return s.fromHex(e.toString(16).padStart(64, '0'));
  };

  // Private keys come in as hex (sm-crypto's convention) but live here only as module keys,
  // freed (wiped) before each call returns, whatever happens; key and plaintext bytes made
  // on the way are zeroed after use.
  const withKey = (hex, use) => {
    const k = s.PrivateKey.fromHex(hex);
    try {
      return use(k);
    } finally {
      k.free();
    }
  };
  const wiped = (bytes, use) => {
    try {
      return use(bytes);
    } finally {
      bytes.fill(0);
    }
  };

  const sm2 = {
    generateKeyPairHex() {
      const k = s.PrivateKey.generate();
      try {
        return { privateKey: k.toHex(), publicKey: k.publicKey().toHex(false) };
      } finally {
        k.free();
      }
    },
    getPublicKeyFromPrivateKey(privateKey) {
      return withKey(privateKey, (k) => k.publicKey().toHex(false));
    },
    compressPublicKeyHex(publicKey) {
      return s.PublicKey.fromHex(publicKey).toHex(true);
    },
    comparePublicKeyHex(a, b) {
      return s.PublicKey.fromHex(a).toHex(false) === s.PublicKey.fromHex(b).toHex(false);
    },
    verifyPublicKey(publicKey) {
      try {
        s.PublicKey.fromHex(publicKey);
        return true;
      } catch (e) {
        return false;
      }
    },
    // cipherMode 1 is C1C3C2 (the default), 0 C1C2C3; the result has no 04, as sm-crypto's;
    // { asn1: true } writes GM/T 0009's DER (sm-crypto-v2's option).
    doEncrypt(msg, publicKey, cipherMode = 1, options = {}) {
      const ct = s.PublicKey.fromHex(publicKey).encrypt(msgBytes(msg), {
        format: options.asn1 ? 'asn1' : cipherMode === 0 ? 'c1c2c3' : 'c1c3c2',
        prefix: false,
      });
      return options.output === 'array' ? Array.from(ct) : s.toHex(ct);
    },
    // '' (or [] with output 'array') when the ciphertext does not open, as sm-crypto answers.
    doDecrypt(encryptData, privateKey, cipherMode = 1, { output = 'string', asn1 = false } = {}) {
      let plain;
      try {
        const ct = typeof encryptData === 'string' ? s.fromHex(encryptData) : Uint8Array.from(encryptData);
        const format = asn1 ? 'asn1' : cipherMode === 0 ? 'c1c2c3' : 'c1c3c2';
        plain = withKey(privateKey, (k) => k.decrypt(ct, { format }));
      } catch (e) {
        return output === 'array' ? [] : '';
      }
      return wiped(plain, (p) => (output === 'array' ? Array.from(p) : new TextDecoder().decode(p)));
    },
    // hash defaults to true (Z and SM3, as sm-crypto 0.4 and later); without it the message
    // itself is the digest, as sm-crypto signs then.
    doSignature(msg, privateKey, { der = false, hash = true, userId = '1234567812345678' } = {}) {
      const m = msgBytes(msg);
      return withKey(privateKey, (k) =>
        s.toHex(hash ? k.sign(m, { id: s.utf8(userId), der }) : k.signDigest(bareDigest(m), { der })));
    },
    doVerifySignature(msg, signHex, publicKey, { der = false, hash = true, userId = '1234567812345678' } = {}) {
      try {
        const p = s.PublicKey.fromHex(publicKey);
        const m = msgBytes(msg);
        const sig = s.fromHex(signHex);
        return hash ? p.verify(m, sig, { id: s.utf8(userId), der }) : p.verifyDigest(bareDigest(m), sig, { der });
      } catch (e) {
        return false;
      }
    },
  };

  // sm3(msg) is the hex digest; sm3(msg, { key }) HMAC-SM3, as sm-crypto 0.3.13 and later.
  function sm3(msg, options = {}) {
    const m = msgBytes(msg);
    if (options.key === undefined) return s.toHex(s.sm3(m));
    return wiped(keyBytes(options.key), (k) => s.toHex(s.hmacSm3(k, m)));
  }

  const sm4Options = (key, o) => {
    const mode = o.mode === undefined ? 'ecb' : o.mode;
    if (mode !== 'ecb' && mode !== 'cbc') throw new s.ShangmiError(`sm4 mode ${JSON.stringify(mode)}: 'ecb' or 'cbc'`);
    const padding = o.padding === undefined ? 'pkcs#7' : o.padding;
    const opts = { mode, padding: padding === 'pkcs#7' || padding === 'pkcs#5' };
    if (padding !== 'pkcs#7' && padding !== 'pkcs#5' && padding !== 'none') {
      throw new s.ShangmiError(`sm4 padding ${JSON.stringify(padding)}: 'pkcs#7' or 'none'`);
    }
    if (mode === 'cbc') opts.iv = keyBytes(o.iv === undefined ? '' : o.iv);
    return [keyBytes(key), opts];
  };
  const sm4 = {
    // Hex out (or an array with output 'array'); strings in are UTF-8, as sm-crypto reads them.
    encrypt(inArray, key, options = {}) {
      const [k, o] = sm4Options(key, options);
      const out = wiped(k, (kb) => wiped(msgBytes(inArray), (m) => s.sm4Encrypt(kb, m, o)));
      return options.output === 'array' ? Array.from(out) : s.toHex(out);
    },
    // A UTF-8 string out (or an array with output 'array'); hex strings in.
    decrypt(inArray, key, options = {}) {
      const [k, o] = sm4Options(key, options);
      const data = typeof inArray === 'string' ? s.fromHex(inArray) : Uint8Array.from(inArray);
      const out = wiped(k, (kb) => s.sm4Decrypt(kb, data, o));
      return wiped(out, (p) => (options.output === 'array' ? Array.from(p) : new TextDecoder().decode(p)));
    },
  };

  return { sm2, sm3, sm4 };
}
