// Both directions against the pure-JavaScript SM libraries users switch from: sm-crypto 0.5
// and sm-crypto-v2 (from npm, installed beside the package by scripts/test-npm.sh), for every
// SM2 layout and SM4 mode they have, through the native API and the compat layer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import s from 'shangmi';
import compat from 'shangmi/sm-crypto';
import smCrypto from 'sm-crypto';
import * as smV2 from 'sm-crypto-v2';

const peers = [['sm-crypto', smCrypto], ['sm-crypto-v2', smV2]];
const text = 'SM2 across implementations: 国密 ' + 'x'.repeat(50);

test('SM2 encryption both ways, C1C3C2 and C1C2C3', () => {
  for (const [name, peer] of peers) {
    const kp = peer.sm2.generateKeyPairHex();
    const ours = s.PrivateKey.fromHex(kp.privateKey);
    assert.equal(ours.publicKey().toHex(), kp.publicKey.toLowerCase(), name);
    for (const [mode, format] of [[1, 'c1c3c2'], [0, 'c1c2c3']]) {
      // Theirs (no 04) opened here, natively and through the compat layer.
      const ct = peer.sm2.doEncrypt(text, kp.publicKey, mode);
      assert.equal(s.fromUtf8(ours.decrypt(s.fromHex(ct), { format })), text, `${name} ${mode}`);
      assert.equal(compat.sm2.doDecrypt(ct, kp.privateKey, mode), text);
      // Ours opened there, with and without the 04.
      const mine = ours.publicKey().encrypt(s.utf8(text), { format, prefix: false });
      assert.equal(peer.sm2.doDecrypt(s.toHex(mine), kp.privateKey, mode), text, `${name} ${mode}`);
      assert.equal(peer.sm2.doDecrypt(compat.sm2.doEncrypt(text, kp.publicKey, mode), kp.privateKey, mode), text);
    }
  }
  // sm-crypto-v2's ASN.1 form both ways.
  const kp = smV2.sm2.generateKeyPairHex();
  const ct = smV2.sm2.doEncrypt(text, kp.publicKey, 1, { asn1: true });
  assert.equal(compat.sm2.doDecrypt(ct, kp.privateKey, 1, { asn1: true }), text);
  const mine = compat.sm2.doEncrypt(text, kp.publicKey, 1, { asn1: true });
  assert.equal(smV2.sm2.doDecrypt(mine, kp.privateKey, 1, { asn1: true }), text);
});

test('SM2 signatures both ways: with Z and without, raw and DER, custom IDs', () => {
  for (const [name, peer] of peers) {
    const kp = peer.sm2.generateKeyPairHex();
    const ours = s.PrivateKey.fromHex(kp.privateKey);
    for (const der of [false, true]) {
      for (const userId of [undefined, 'alice@example.com']) {
        const o = { hash: true, der, ...(userId ? { userId } : {}) };
        const theirs = peer.sm2.doSignature(text, kp.privateKey, o);
        const id = userId ? s.utf8(userId) : undefined;
        assert.equal(ours.publicKey().verify(s.utf8(text), s.fromHex(theirs), { id, der }), true, `${name} ${der} ${userId}`);
        assert.equal(compat.sm2.doVerifySignature(text, theirs, kp.publicKey, o), true);
        const mine = s.toHex(ours.sign(s.utf8(text), { id, der }));
        assert.equal(peer.sm2.doVerifySignature(text, mine, kp.publicKey, o), true, `${name} ${der} ${userId}`);
        assert.equal(peer.sm2.doVerifySignature(text, compat.sm2.doSignature(text, kp.privateKey, o), kp.publicKey, o), true);
      }
      // Without hash: the message itself is e, as both sign then.
      const o = { hash: false, der };
      const theirs = peer.sm2.doSignature(text, kp.privateKey, o);
      assert.equal(compat.sm2.doVerifySignature(text, theirs, kp.publicKey, o), true, `${name} bare`);
      assert.equal(peer.sm2.doVerifySignature(text, compat.sm2.doSignature(text, kp.privateKey, o), kp.publicKey, o), true);
      assert.equal(compat.sm2.doVerifySignature(text + '!', theirs, kp.publicKey, o), false);
    }
    assert.equal(compat.sm2.getPublicKeyFromPrivateKey(kp.privateKey), kp.publicKey.toLowerCase());
    assert.equal(compat.sm2.compressPublicKeyHex(kp.publicKey), peer.sm2.compressPublicKeyHex(kp.publicKey).toLowerCase());
  }
});

test('SM3 and HMAC-SM3 agree', () => {
  for (const [name, peer] of peers) {
    for (const m of ['', 'abc', text, 'y'.repeat(1000)]) {
      assert.equal(compat.sm3(m), peer.sm3(m), name);
      assert.equal(compat.sm3(m, { key: '00112233445566778899aabbccddeeff' }), peer.sm3(m, { key: '00112233445566778899aabbccddeeff' }), name);
    }
  }
});

test('SM4 ECB and CBC both ways, padded and not', () => {
  const key = '0123456789abcdeffedcba9876543210';
  const iv = 'fedcba98765432100123456789abcdef';
  for (const [name, peer] of peers) {
    for (const mode of ['ecb', 'cbc']) {
      const o = mode === 'cbc' ? { mode, iv } : { mode };
      const c = peer.sm4.encrypt(text, key, o);
      assert.equal(compat.sm4.encrypt(text, key, o), c, `${name} ${mode}`);
      assert.equal(compat.sm4.decrypt(c, key, o), text);
      assert.equal(peer.sm4.decrypt(compat.sm4.encrypt(text, key, o), key, o), text);
      const block = '00112233445566778899aabbccddeeff';
      const np = { ...o, padding: 'none' };
      const raw = peer.sm4.encrypt(s.fromHex(block), key, np);
      const mine = s.sm4Encrypt(s.fromHex(key), s.fromHex(block), { ...o, iv: o.iv ? s.fromHex(o.iv) : undefined, padding: false });
      assert.equal(s.toHex(mine), raw, `${name} ${mode} none`);
    }
  }
});

test('SM4-GCM with sm-crypto-v2 both ways', () => {
  const key = '0123456789abcdeffedcba9876543210';
  const iv = '00112233445566778899aabb';
  // sm-crypto-v2 reads string associated data as hex: bytes are given.
  const aad = s.utf8('header');
  const { output, tag } = smV2.sm4.encrypt(text, key, { mode: 'gcm', iv, associatedData: aad, outputTag: true });
  const sealed = s.fromHex(output + tag);
  const o = { mode: 'gcm', nonce: s.fromHex(iv), aad };
  assert.equal(s.fromUtf8(s.sm4Decrypt(s.fromHex(key), sealed, o)), text);
  const mine = s.sm4Encrypt(s.fromHex(key), s.utf8(text), o);
  const ct = s.toHex(mine.subarray(0, mine.length - 16));
  const t = s.toHex(mine.subarray(mine.length - 16));
  assert.equal(smV2.sm4.decrypt(ct, key, { mode: 'gcm', iv, associatedData: aad, tag: t }), text);
});
