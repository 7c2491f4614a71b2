// Bad input: wrong types and lengths, malformed hex, PEM and DER, tampered data. Each raises
// a TypeError or a ShangmiError with a message, and the module keeps working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import s from 'shangmi';

test('bytes are required where bytes belong', () => {
  assert.throws(() => s.sm3('abc'), TypeError);
  assert.throws(() => s.sm4Encrypt('0123456789abcdef', s.utf8('x'), { mode: 'ecb' }), TypeError);
  assert.throws(() => s.PrivateKey.generate().sign('message'), TypeError);
  assert.throws(() => s.PrivateKey.fromBytes([1, 2, 3]), TypeError);
});

test('wrong lengths and parameters say so', () => {
  const k = new Uint8Array(16);
  assert.throws(() => s.sm4Encrypt(new Uint8Array(15), k, { mode: 'ecb' }), /16 needed/);
  assert.throws(() => s.sm4Encrypt(k, k, { mode: 'cbc', iv: new Uint8Array(8) }), /16 needed/);
  assert.throws(() => s.sm4Encrypt(k, new Uint8Array(5), { mode: 'ecb', padding: false }), /whole/);
  assert.throws(() => s.sm4Encrypt(k, k, { mode: 'gcm', nonce: new Uint8Array(12), tagLength: 3 }), s.ShangmiError);
  assert.throws(() => s.sm4Encrypt(k, k, { mode: 'nope' }), /mode/);
  assert.throws(() => s.sm4Decrypt(k, new Uint8Array(32), { mode: 'cbc', iv: k }), /padding/);
  assert.throws(() => s.PrivateKey.fromBytes(new Uint8Array(31)), /32 needed/);
  assert.throws(() => s.PrivateKey.fromBytes(new Uint8Array(32)), s.ShangmiError);
});

test('malformed hex, PEM, DER and points are refused', () => {
  assert.throws(() => s.fromHex('abc'), s.ShangmiError);
  assert.throws(() => s.fromHex('zz'), s.ShangmiError);
  assert.throws(() => s.PrivateKey.fromHex('00'.repeat(31)), s.ShangmiError);
  assert.throws(() => s.PrivateKey.fromPem('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), s.ShangmiError);
  assert.throws(() => s.PrivateKey.fromDer(new Uint8Array([0x30, 0x03, 0x02, 0x01])), s.ShangmiError);
  assert.throws(() => s.PublicKey.fromHex('04' + '11'.repeat(64)), s.ShangmiError);
  assert.throws(() => s.PublicKey.fromBytes(new Uint8Array(0)), s.ShangmiError);
  const p = s.PrivateKey.generate().publicKey();
  assert.equal(p.verify(s.utf8('m'), new Uint8Array([0x30, 0x00])), false);
  assert.equal(p.verify(s.utf8('m'), new Uint8Array(64), { der: false }), false);
});

test('after every failure the module still works', () => {
  for (let i = 0; i < 50; i++) {
    try {
      s.PrivateKey.fromHex('ff'.repeat(32));
    } catch (e) {
      assert.ok(e instanceof s.ShangmiError);
    }
  }
  const k = s.PrivateKey.generate();
  assert.equal(k.publicKey().verify(s.utf8('x'), k.sign(s.utf8('x'))), true);
  assert.equal(s.toHex(s.sm3(s.utf8('abc'))).length, 64);
});

test('a length the module cannot hold is an error, and the module keeps working', () => {
  assert.throws(() => s.pbkdf2Sm3(s.utf8('pw'), s.utf8('salt'), 1, 0xffffffff), s.ShangmiError);
  assert.throws(() => s.sm3Kdf(new Uint8Array(64), 0xffffffff), s.ShangmiError);
  assert.equal(s.sm3Kdf(new Uint8Array(64), 48).length, 48);
  assert.equal(s.pbkdf2Sm3(s.utf8('pw'), s.utf8('salt'), 2, 32).length, 32);
});

test('the sm-crypto layer frees every private key it makes, even on failure', async () => {
  const { sm2 } = (await import('shangmi/sm-crypto')).default;
  const proto = s.PrivateKey.prototype;
  const [fromHex, generate, free] = [s.PrivateKey.fromHex, s.PrivateKey.generate, proto.free];
  let made = 0;
  let freed = 0;
  s.PrivateKey.fromHex = function (h) { const k = fromHex.call(this, h); made++; return k; };
  s.PrivateKey.generate = function () { const k = generate.call(this); made++; return k; };
  proto.free = function () { freed++; return free.call(this); };
  try {
    const { privateKey, publicKey } = sm2.generateKeyPairHex();
    assert.equal(sm2.getPublicKeyFromPrivateKey(privateKey), publicKey);
    const sig = sm2.doSignature('message', privateKey);
    assert.ok(sm2.doVerifySignature('message', sig, publicKey));
    assert.equal(sm2.doDecrypt(sm2.doEncrypt('secret', publicKey), privateKey), 'secret');
    assert.equal(sm2.doDecrypt('04' + '00'.repeat(100), privateKey), '');
    assert.equal(made, 5);
    assert.equal(freed, made);
  } finally {
    Object.assign(s.PrivateKey, { fromHex, generate });
    proto.free = free;
  }
});
