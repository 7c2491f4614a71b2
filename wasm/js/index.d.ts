// TypeScript declarations of the npm package `shangmi` (ES module and CommonJS alike).

/** Any failure of a check or of malformed input (a wrong type is a TypeError). */
export class ShangmiError extends Error {}

export type Bytes = Uint8Array;

export function fromHex(hex: string): Uint8Array;
export function toHex(data: Bytes): string;
export function utf8(text: string): Uint8Array;
export function fromUtf8(data: Bytes): string;
/** The library version and what each algorithm runs on. */
export function version(): string;

/** SM3 of `data` (32 bytes). */
export function sm3(data: Bytes): Uint8Array;
/** A streaming SM3 hash; `digest()` resets it. */
export class Sm3 {
  update(data: Bytes): this;
  digest(): Uint8Array;
}
export function hmacSm3(key: Bytes, data: Bytes): Uint8Array;
/** The SM2 key-derivation function (GB/T 32918.4). */
export function sm3Kdf(z: Bytes, length: number): Uint8Array;
export function pbkdf2Sm3(password: Bytes, salt: Bytes, iterations: number, length: number): Uint8Array;

export interface Sm4Options {
  /** Default 'cbc'. */
  mode?: 'ecb' | 'cbc' | 'ctr' | 'cfb' | 'ofb' | 'gcm' | 'ccm' | 'xts';
  /** ECB and CBC: PKCS#7 padding (default true). */
  padding?: boolean;
  /** CBC, CTR, CFB, OFB: 16 bytes. */
  iv?: Bytes;
  /** GCM (12 bytes usual) and CCM (7 to 13 bytes). */
  nonce?: Bytes;
  /** GCM and CCM associated data. */
  aad?: Bytes;
  /** GCM (12 to 16) and CCM (4 to 16, even); default 16. The tag follows the ciphertext. */
  tagLength?: number;
  /** XTS: 16 bytes. */
  tweak?: Bytes;
  /** XTS: 'ieee' (IEEE 1619, default) or 'gb' (GB/T 17964-2021). */
  variant?: 'ieee' | 'gb';
}
/** SM4 with a 16-byte key (32 for XTS). */
export function sm4Encrypt(key: Bytes, data: Bytes, options?: Sm4Options): Uint8Array;
/** Inverse of sm4Encrypt; a bad padding or tag throws and returns nothing. */
export function sm4Decrypt(key: Bytes, data: Bytes, options?: Sm4Options): Uint8Array;

export interface SignOptions {
  /** The signer's ID (default 1234567812345678). */
  id?: Bytes;
  /** DER (default) or the 64-byte r || s. */
  der?: boolean;
}
export type CiphertextFormat = 'c1c3c2' | 'c1c2c3' | 'asn1';

export class PublicKey {
  private constructor();
  /** 04 || x || y, 02/03 || x, or x || y. */
  static fromBytes(point: Bytes): PublicKey;
  static fromHex(hex: string): PublicKey;
  static fromPem(pem: string): PublicKey;
  static fromDer(der: Bytes): PublicKey;
  toBytes(compressed?: boolean): Uint8Array;
  toHex(compressed?: boolean): string;
  toPem(): string;
  toDer(): Uint8Array;
  verify(message: Bytes, signature: Bytes, options?: SignOptions): boolean;
  verifyDigest(digest: Bytes, signature: Bytes, options?: { der?: boolean }): boolean;
  /** C1 with its 04 unless `prefix` is false (raw formats). */
  encrypt(message: Bytes, options?: { format?: CiphertextFormat; prefix?: boolean }): Uint8Array;
}

export class PrivateKey {
  private constructor();
  /** A fresh key from crypto.getRandomValues. */
  static generate(): PrivateKey;
  static fromBytes(d: Bytes): PrivateKey;
  static fromHex(hex: string): PrivateKey;
  /** PKCS#8, SEC1, or encrypted PKCS#8 with `password`. */
  static fromPem(pem: string, password?: Bytes): PrivateKey;
  static fromDer(der: Bytes, password?: Bytes): PrivateKey;
  toBytes(): Uint8Array;
  toHex(): string;
  /** PKCS#8, encrypted (PBES2, HMAC-SM3, SM4-CBC) with `password`. */
  toPem(password?: Bytes): string;
  toDer(password?: Bytes): Uint8Array;
  publicKey(): PublicKey;
  sign(message: Bytes, options?: SignOptions): Uint8Array;
  signDigest(digest: Bytes, options?: { der?: boolean }): Uint8Array;
  /** A raw C1 without its 04 is read too; any failure throws and returns nothing. */
  decrypt(ciphertext: Bytes, options?: { format?: CiphertextFormat }): Uint8Array;
  /** One side of an SM2 key exchange (GB/T 32918.3); the ephemeral key is used up. */
  exchange(
    ephemeral: EphemeralKey,
    peer: PublicKey,
    peerEphemeral: PublicKey,
    options?: { initiator?: boolean; length?: number; id?: Bytes; peerId?: Bytes },
  ): { key: Uint8Array; confirmation: Uint8Array; verifyConfirmation(theirs: Bytes): boolean };
  /** Wipes the key now. */
  free(): void;
}

/** A single-use ephemeral key for one key exchange. */
export class EphemeralKey {
  static generate(): EphemeralKey;
  publicKey(): PublicKey;
}

declare const shangmi: {
  ShangmiError: typeof ShangmiError;
  fromHex: typeof fromHex;
  toHex: typeof toHex;
  utf8: typeof utf8;
  fromUtf8: typeof fromUtf8;
  version: typeof version;
  sm3: typeof sm3;
  Sm3: typeof Sm3;
  hmacSm3: typeof hmacSm3;
  sm3Kdf: typeof sm3Kdf;
  pbkdf2Sm3: typeof pbkdf2Sm3;
  sm4Encrypt: typeof sm4Encrypt;
  sm4Decrypt: typeof sm4Decrypt;
  PrivateKey: typeof PrivateKey;
  PublicKey: typeof PublicKey;
  EphemeralKey: typeof EphemeralKey;
};
export default shangmi;
