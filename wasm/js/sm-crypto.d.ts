// TypeScript declarations of `shangmi/sm-crypto`, sm-crypto's calls over shangmi.

type Data = string | ArrayLike<number>;

export declare const sm2: {
  generateKeyPairHex(): { privateKey: string; publicKey: string };
  getPublicKeyFromPrivateKey(privateKey: string): string;
  compressPublicKeyHex(publicKey: string): string;
  comparePublicKeyHex(a: string, b: string): boolean;
  verifyPublicKey(publicKey: string): boolean;
  /** cipherMode 1: C1C3C2 (default), 0: C1C2C3; hex without the 04, or DER with asn1. */
  doEncrypt(msg: Data, publicKey: string, cipherMode?: 0 | 1, options?: { asn1?: boolean; output?: 'string' | 'array' }): string;
  /** '' (or []) when it does not open. */
  doDecrypt(encryptData: Data, privateKey: string, cipherMode?: 0 | 1, options?: { output?: 'string' | 'array'; asn1?: boolean }): any;
  doSignature(msg: Data, privateKey: string, options?: { der?: boolean; hash?: boolean; userId?: string }): string;
  doVerifySignature(msg: Data, signHex: string, publicKey: string, options?: { der?: boolean; hash?: boolean; userId?: string }): boolean;
};
/** Hex SM3, or HMAC-SM3 with a key. */
export declare function sm3(msg: Data, options?: { key: Data }): string;
export declare const sm4: {
  encrypt(inArray: Data, key: Data, options?: { mode?: 'ecb' | 'cbc'; iv?: Data; padding?: 'pkcs#7' | 'pkcs#5' | 'none'; output?: 'string' | 'array' }): any;
  decrypt(inArray: Data, key: Data, options?: { mode?: 'ecb' | 'cbc'; iv?: Data; padding?: 'pkcs#7' | 'pkcs#5' | 'none'; output?: 'string' | 'array' }): any;
};
declare const compat: { sm2: typeof sm2; sm3: typeof sm3; sm4: typeof sm4 };
export default compat;
