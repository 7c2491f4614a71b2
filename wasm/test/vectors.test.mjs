// Known answers, and Node's own OpenSSL as a second reference for SM3 and the SM4 modes it
// has. Run by scripts/test-npm.sh on the package as installed from its tarball.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import s from 'shangmi';

const hex = s.toHex;
const bytes = (n, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 0xff);

test('the module picked is the one asked for', () => {
  const want = process.env.SHANGMI_WASM === 'scalar' ? 'wasm scalar' : 'wasm simd128';
  assert.ok(s.version().includes(want), s.version());
});

test('SM3 and HMAC-SM3 known answers', () => {
  assert.equal(hex(s.sm3(s.utf8('abc'))), '66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0');
  assert.equal(
    hex(s.sm3(s.utf8('abcd'.repeat(16)))),
    'debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732',
  );
  const h = new s.Sm3();
  for (const part of ['a', 'b', 'c']) h.update(s.utf8(part));
  assert.equal(hex(h.digest()), '66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0');
  assert.equal(hex(h.digest()), hex(s.sm3(new Uint8Array(0))));
});

test('SM3 and HMAC-SM3 agree with Node (OpenSSL) at every length to 300', () => {
  for (let n = 0; n <= 300; n += 7) {
    const m = bytes(n);
    assert.equal(hex(s.sm3(m)), crypto.createHash('sm3').update(m).digest('hex'), `${n}`);
    const k = bytes(n % 90, 3);
    assert.equal(hex(s.hmacSm3(k, m)), crypto.createHmac('sm3', k).update(m).digest('hex'), `${n}`);
  }
});

test('PBKDF2-HMAC-SM3 agrees with Node', () => {
  const got = s.pbkdf2Sm3(s.utf8('password'), s.utf8('salt'), 1000, 48);
  assert.equal(hex(got), crypto.pbkdf2Sync('password', 'salt', 1000, 48, 'sm3').toString('hex'));
});

test('SM4 known answer (GB/T 32907)', () => {
  const k = s.fromHex('0123456789abcdeffedcba9876543210');
  const c = s.sm4Encrypt(k, k, { mode: 'ecb', padding: false });
  assert.equal(hex(c), '681edf34d206965e86b3e94f536e4246');
  assert.equal(hex(s.sm4Decrypt(k, c, { mode: 'ecb', padding: false })), hex(k));
});

test('SM4 modes agree with Node (OpenSSL) both ways', () => {
  const key = bytes(16, 5);
  const iv = bytes(16, 9);
  for (const n of [0, 1, 15, 16, 17, 64, 1000, 2048, 2049, 5000, 70000]) {
    const m = bytes(n, n);
    const cases = [
      ['ecb', 'sm4-ecb', null, true],
      ['cbc', 'sm4-cbc', iv, true],
      ['ctr', 'sm4-ctr', iv, false],
      ['cfb', 'sm4-cfb', iv, false],
      ['ofb', 'sm4-ofb', iv, false],
    ];
    for (const [mode, name, civ, padded] of cases) {
      const c = crypto.createCipheriv(name, key, civ);
      c.setAutoPadding(padded);
      const theirs = Buffer.concat([c.update(m), c.final()]);
      const ours = s.sm4Encrypt(key, m, { mode, iv: civ ?? undefined });
      assert.equal(hex(ours), theirs.toString('hex'), `${mode} ${n}`);
      const d = crypto.createDecipheriv(name, key, civ);
      d.setAutoPadding(padded);
      assert.equal(Buffer.concat([d.update(ours), d.final()]).toString('hex'), hex(m), `${mode} ${n}`);
      assert.equal(hex(s.sm4Decrypt(key, theirs, { mode, iv: civ ?? undefined })), hex(m), `${mode} ${n}`);
    }
  }
});

test('SM4-GCM, CCM and XTS round trip and refuse tampering', () => {
  const key = bytes(16, 2);
  const nonce = bytes(12, 4);
  const aad = s.utf8('header');
  const m = bytes(100, 6);
  for (const [mode, extra] of [['gcm', {}], ['gcm', { tagLength: 12 }], ['ccm', {}], ['ccm', { tagLength: 8 }]]) {
    const o = { mode, nonce, aad, ...extra };
    const c = s.sm4Encrypt(key, m, o);
    assert.equal(hex(s.sm4Decrypt(key, c, o)), hex(m));
    for (const at of [0, 50, c.length - 1]) {
      const bad = c.slice();
      bad[at] ^= 1;
      assert.throws(() => s.sm4Decrypt(key, bad, o), s.ShangmiError, `${mode} ${at}`);
    }
    assert.throws(() => s.sm4Decrypt(key, c, { ...o, aad: s.utf8('other') }), s.ShangmiError);
  }
  const xk = bytes(32, 8);
  const tweak = bytes(16, 1);
  for (const variant of ['ieee', 'gb']) {
    const c = s.sm4Encrypt(xk, m, { mode: 'xts', tweak, variant });
    assert.equal(hex(s.sm4Decrypt(xk, c, { mode: 'xts', tweak, variant })), hex(m));
  }
});

test('SM2 keys: every form round trips; signatures and ciphertexts in every layout', () => {
  const k = s.PrivateKey.generate();
  const p = k.publicKey();
  assert.equal(s.PrivateKey.fromHex(k.toHex()).toHex(), k.toHex());
  assert.equal(s.PrivateKey.fromPem(k.toPem()).toHex(), k.toHex());
  assert.equal(s.PrivateKey.fromDer(k.toDer()).toHex(), k.toHex());
  const pw = s.utf8('correct horse');
  assert.equal(s.PrivateKey.fromPem(k.toPem(pw), pw).toHex(), k.toHex());
  assert.throws(() => s.PrivateKey.fromPem(k.toPem(pw), s.utf8('wrong')), s.ShangmiError);
  for (const form of [p.toHex(), p.toHex(true), p.toHex().slice(2)]) {
    assert.equal(s.PublicKey.fromHex(form).toHex(), p.toHex());
  }
  assert.equal(s.PublicKey.fromPem(p.toPem()).toHex(), p.toHex());
  assert.equal(s.PublicKey.fromDer(p.toDer()).toHex(), p.toHex());
  const m = s.utf8('message to sign');
  for (const der of [true, false]) {
    for (const id of [undefined, s.utf8('alice@example.com')]) {
      const sig = k.sign(m, { id, der });
      assert.equal(p.verify(m, sig, { id, der }), true);
      assert.equal(p.verify(s.utf8('other'), sig, { id, der }), false);
    }
  }
  assert.equal(p.verify(m, k.sign(m), { id: s.utf8('another id') }), false);
  for (const format of ['c1c3c2', 'c1c2c3', 'asn1']) {
    for (const prefix of [true, false]) {
      const ct = p.encrypt(m, { format, prefix });
      assert.equal(hex(k.decrypt(ct, { format })), hex(m), `${format} ${prefix}`);
      const bad = ct.slice();
      bad[bad.length - 1] ^= 1;
      assert.throws(() => k.decrypt(bad, { format }), s.ShangmiError);
    }
  }
  // Node's OpenSSL reads the PEM keys written here, and writes back the same public key.
  const spki = crypto.createPublicKey(crypto.createPrivateKey(k.toPem())).export({ type: 'spki', format: 'der' });
  assert.equal(spki.toString('hex'), hex(p.toDer()));
});

test('SM2 key exchange: both sides agree and confirm; a used ephemeral key is refused', () => {
  const a = s.PrivateKey.generate();
  const b = s.PrivateKey.generate();
  const ea = s.EphemeralKey.generate();
  const eb = s.EphemeralKey.generate();
  const idA = s.utf8('ALICE123@YAHOO.COM');
  const ka = a.exchange(ea, b.publicKey(), eb.publicKey(), { initiator: true, length: 16, id: idA });
  const kb = b.exchange(eb, a.publicKey(), ea.publicKey(), { initiator: false, length: 16, peerId: idA });
  assert.equal(hex(ka.key), hex(kb.key));
  assert.equal(ka.key.length, 16);
  assert.equal(kb.verifyConfirmation(ka.confirmation), true);
  assert.equal(ka.verifyConfirmation(kb.confirmation), true);
  assert.equal(ka.verifyConfirmation(new Uint8Array(32)), false);
  assert.throws(() => a.exchange(ea, b.publicKey(), eb.publicKey(), { initiator: true }), /already used/);
});
