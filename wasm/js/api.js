// The public API over the wasm core, shared by the ES module and CommonJS entries (the build
// wraps this file in each one's header and footer). Every byte argument must be a Uint8Array:
// a string where bytes belong is a TypeError here, never silently encoded.
function shangmiApi(core) {
  'use strict';

  class ShangmiError extends Error {
    constructor(message) {
      super(message);
      this.name = 'ShangmiError';
    }
  }

  // Calls into the core with its errors as ShangmiError (wasm-bindgen throws plain Errors).
  const call = (f) => {
    try {
      return f();
    } catch (e) {
      if (e instanceof ShangmiError || e instanceof TypeError) throw e;
      throw new ShangmiError(e && e.message ? e.message : String(e));
    }
  };

  const bytes = (x, what) => {
    if (x instanceof Uint8Array) return x;
    if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
    if (x instanceof ArrayBuffer) return new Uint8Array(x);
    throw new TypeError(`${what}: a Uint8Array is needed, not ${x === null ? 'null' : typeof x}`);
  };
  // Arguments the core takes by value (it wipes its copy); wasm-bindgen copies them into the
  // module, so the caller's array is left as it was.
  const owned = bytes;
  const optBytes = (x, what) => (x === undefined || x === null ? undefined : owned(x, what));
  const text = (x, what) => {
    if (typeof x !== 'string') throw new TypeError(`${what}: a string is needed`);
    return x;
  };

  const HEX = /^(?:[0-9a-fA-F]{2})*$/;
  function fromHex(hex) {
    text(hex, 'hex');
    if (!HEX.test(hex)) throw new ShangmiError('hex: an even number of 0-9, a-f digits is needed');
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
    return out;
  }
  function toHex(data) {
    const b = bytes(data, 'data');
    let s = '';
    for (let i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
    return s;
  }
  const utf8 = (s) => new TextEncoder().encode(text(s, 'text'));
  const fromUtf8 = (b) => new TextDecoder('utf-8', { fatal: true }).decode(bytes(b, 'data'));

  // SM3.
  const sm3 = (data) => call(() => core.sm3(bytes(data, 'data')));
  const hmacSm3 = (key, data) => call(() => core.hmacSm3(owned(key, 'key'), bytes(data, 'data')));
  const sm3Kdf = (z, length) => call(() => core.sm3Kdf(owned(z, 'z'), length >>> 0));
  const pbkdf2Sm3 = (password, salt, iterations, length) =>
    call(() => core.pbkdf2Sm3(owned(password, 'password'), bytes(salt, 'salt'), iterations >>> 0, length >>> 0));
  class Sm3 {
    #h = new core.Sm3();
    update(data) {
      call(() => this.#h.update(bytes(data, 'data')));
      return this;
    }
    digest() {
      return call(() => this.#h.digest());
    }
  }

  // SM4: one entry per direction, the mode and its parameters in options.
  const MODES = ['ecb', 'cbc', 'ctr', 'cfb', 'ofb', 'gcm', 'ccm', 'xts'];
  function sm4(direction, key, data, options = {}) {
    const mode = options.mode === undefined ? 'cbc' : options.mode;
    if (!MODES.includes(mode)) throw new ShangmiError(`SM4 mode ${JSON.stringify(mode)}: one of ${MODES.join(', ')}`);
    const k = owned(key, 'key');
    const d = bytes(data, 'data');
    const padding = options.padding === undefined ? true : Boolean(options.padding);
    const iv = () => bytes(options.iv, 'options.iv');
    const nonce = () => bytes(options.nonce, 'options.nonce');
    const aad = () => (options.aad === undefined ? new Uint8Array(0) : bytes(options.aad, 'options.aad'));
    const tag = options.tagLength === undefined ? 16 : options.tagLength >>> 0;
    const enc = direction === 'encrypt';
    return call(() => {
      switch (mode) {
        case 'ecb': return enc ? core.sm4EncryptEcb(k, d, padding) : core.sm4DecryptEcb(k, d, padding);
        case 'cbc': return enc ? core.sm4EncryptCbc(k, iv(), d, padding) : core.sm4DecryptCbc(k, iv(), d, padding);
        case 'ctr': return core.sm4Ctr(k, iv(), d);
        case 'ofb': return core.sm4Ofb(k, iv(), d);
        case 'cfb': return enc ? core.sm4EncryptCfb(k, iv(), d) : core.sm4DecryptCfb(k, iv(), d);
        case 'gcm': return enc ? core.sm4GcmEncrypt(k, nonce(), d, aad(), tag) : core.sm4GcmDecrypt(k, nonce(), d, aad(), tag);
        case 'ccm': return enc ? core.sm4CcmEncrypt(k, nonce(), d, aad(), tag) : core.sm4CcmDecrypt(k, nonce(), d, aad(), tag);
        case 'xts': {
          const variant = options.variant === undefined ? 'ieee' : options.variant;
          const t = bytes(options.tweak, 'options.tweak');
          return enc ? core.sm4XtsEncrypt(k, t, d, variant) : core.sm4XtsDecrypt(k, t, d, variant);
        }
      }
    });
  }
  const sm4Encrypt = (key, data, options) => sm4('encrypt', key, data, options);
  const sm4Decrypt = (key, data, options) => sm4('decrypt', key, data, options);

  // SM2.
  const FORMATS = ['c1c3c2', 'c1c2c3', 'asn1'];
  const format = (f) => {
    const v = f === undefined ? 'c1c3c2' : f;
    if (!FORMATS.includes(v)) throw new ShangmiError(`SM2 ciphertext format ${JSON.stringify(v)}: ${FORMATS.join(', ')}`);
    return v;
  };
  const signOpts = (o = {}) => ({ id: optBytes(o.id, 'options.id'), der: o.der === undefined ? true : Boolean(o.der) });

  // The core object behind each PublicKey, for the calls that take one.
  const cores = new WeakMap();
  const coreOf = (p, what) => {
    const c = cores.get(p);
    if (!c) throw new TypeError(`${what}: a PublicKey is needed`);
    return c;
  };

  class PublicKey {
    #k;
    constructor(inner) {
      if (!(inner instanceof core.PublicKey)) throw new TypeError('use PublicKey.fromHex, fromBytes, fromPem or fromDer');
      this.#k = inner;
      cores.set(this, inner);
    }
    static fromBytes(point) { return new PublicKey(call(() => core.PublicKey.fromBytes(bytes(point, 'point')))); }
    static fromHex(hex) { return new PublicKey(call(() => core.PublicKey.fromHex(text(hex, 'hex')))); }
    static fromPem(pem) { return new PublicKey(call(() => core.PublicKey.fromPem(text(pem, 'pem')))); }
    static fromDer(der) { return new PublicKey(call(() => core.PublicKey.fromDer(bytes(der, 'der')))); }
    toBytes(compressed = false) { return call(() => this.#k.toBytes(Boolean(compressed))); }
    toHex(compressed = false) { return call(() => this.#k.toHex(Boolean(compressed))); }
    toPem() { return call(() => this.#k.toPem()); }
    toDer() { return call(() => this.#k.toDer()); }
    verify(message, signature, options) {
      const o = signOpts(options);
      return call(() => this.#k.verify(bytes(message, 'message'), bytes(signature, 'signature'), o.id, o.der));
    }
    verifyDigest(digest, signature, options = {}) {
      const der = options.der === undefined ? true : Boolean(options.der);
      return call(() => this.#k.verifyDigest(bytes(digest, 'digest'), bytes(signature, 'signature'), der));
    }
    encrypt(message, options = {}) {
      const prefix = options.prefix === undefined ? true : Boolean(options.prefix);
      return call(() => this.#k.encrypt(owned(message, 'message'), format(options.format), prefix));
    }
  }

  class PrivateKey {
    #k;
    constructor(inner) {
      if (!(inner instanceof core.PrivateKey)) throw new TypeError('use PrivateKey.generate, fromHex, fromBytes, fromPem or fromDer');
      this.#k = inner;
    }
    static generate() { return new PrivateKey(call(() => core.PrivateKey.generate())); }
    static fromBytes(d) { return new PrivateKey(call(() => core.PrivateKey.fromBytes(owned(d, 'private key')))); }
    static fromHex(hex) { return new PrivateKey(call(() => core.PrivateKey.fromHex(text(hex, 'hex')))); }
    static fromPem(pem, password) {
      return new PrivateKey(call(() => core.PrivateKey.fromPem(text(pem, 'pem'), optBytes(password, 'password'))));
    }
    static fromDer(der, password) {
      return new PrivateKey(call(() => core.PrivateKey.fromDer(owned(der, 'der'), optBytes(password, 'password'))));
    }
    toBytes() { return call(() => this.#k.toBytes()); }
    toHex() { return call(() => this.#k.toHex()); }
    toPem(password) { return call(() => this.#k.toPem(optBytes(password, 'password'))); }
    toDer(password) { return call(() => this.#k.toDer(optBytes(password, 'password'))); }
    publicKey() { return new PublicKey(call(() => this.#k.publicKey())); }
    sign(message, options) {
      const o = signOpts(options);
      return call(() => this.#k.sign(bytes(message, 'message'), o.id, o.der));
    }
    signDigest(digest, options = {}) {
      const der = options.der === undefined ? true : Boolean(options.der);
      return call(() => this.#k.signDigest(bytes(digest, 'digest'), der));
    }
    decrypt(ciphertext, options = {}) {
      return call(() => this.#k.decrypt(bytes(ciphertext, 'ciphertext'), format(options.format)));
    }
    // One side of an SM2 key exchange (GB/T 32918.3): this key, this side's EphemeralKey
    // (used up), the peer's static and ephemeral PublicKeys. Returns the agreed key, this
    // side's confirmation value for the peer, and a check of the peer's.
    exchange(ephemeral, peer, peerEphemeral, options = {}) {
      if (!(ephemeral instanceof EphemeralKey)) throw new TypeError('ephemeral: an EphemeralKey is needed');
      const initiator = Boolean(options.initiator);
      const length = options.length === undefined ? 16 : options.length >>> 0;
      const a = call(() => this.#k.exchange(
        initiator, ephemeral._core(), coreOf(peer, 'peer'), coreOf(peerEphemeral, 'peerEphemeral'), length,
        optBytes(options.id, 'options.id'), optBytes(options.peerId, 'options.peerId')));
      const out = {
        key: a.key(),
        confirmation: a.confirmation(),
        verifyConfirmation: (theirs) => a.verifyConfirmation(bytes(theirs, 'confirmation')),
      };
      return out;
    }
    // Wipes the key now rather than when the garbage collector gets to it.
    free() { this.#k.free(); }
  }

  class EphemeralKey {
    #e;
    constructor() {
      this.#e = call(() => core.EphemeralKey.generate());
    }
    static generate() { return new EphemeralKey(); }
    publicKey() { return new PublicKey(this.#e.publicKey()); }
    _core() { return this.#e; }
  }

  return {
    ShangmiError, fromHex, toHex, utf8, fromUtf8, version: () => core.version(),
    sm3, Sm3, hmacSm3, sm3Kdf, pbkdf2Sm3,
    sm4Encrypt, sm4Decrypt,
    PrivateKey, PublicKey, EphemeralKey,
  };
}
