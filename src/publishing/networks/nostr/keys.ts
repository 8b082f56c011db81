/**
 * Nostr keys (NIP-01 secp256k1 Schnorr keys, NIP-19 bech32 forms) through nostr-tools: a pasted secret key is read as
 * `nsec1…` or 64 hex characters; a new one can be made. The secret key is only ever handled here and in the sealed
 * credentials; what a person is shown is the public `npub`.
 */
import { decode, npubEncode, nsecEncode } from "nostr-tools/nip19";
import { generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { bytesToHex, hexToBytes } from "nostr-tools/utils";

/** A usable key pair: the secret as hex (what is sealed), the public key as hex and as npub. */
export interface NostrKeys {
  secretHex: string;
  pubkey: string;
  npub: string;
}

const HEX_KEY = /^[0-9a-f]{64}$/i;
/** The order of secp256k1: a secret key must be in [1, n-1]. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** Why a pasted secret key cannot be used; never echoes the key itself. */
export class NostrKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NostrKeyError";
  }
}

function keysOf(secret: Uint8Array): NostrKeys {
  const pubkey = getPublicKey(secret);
  return { secretHex: bytesToHex(secret), pubkey, npub: npubEncode(pubkey) };
}

/**
 * Reads a pasted secret key (`nsec1…` or 64 hex characters, surrounding spaces ignored). Throws NostrKeyError with a
 * sentence that says what to paste instead: an `npub` (the public key) is the common mistake.
 */
export function parseSecretKey(input: string): NostrKeys {
  const typed = input.trim();
  if (typed === "") throw new NostrKeyError("Paste your secret key (it starts with nsec1), or make a new key.");
  if (/^npub1/i.test(typed)) {
    throw new NostrKeyError("That is a public key (npub). Paste the secret key instead: it starts with nsec1 and is kept private.");
  }
  let secret: Uint8Array;
  if (/^nsec1/i.test(typed)) {
    try {
      const decoded = decode(typed.toLowerCase());
      if (decoded.type !== "nsec") throw new Error("not an nsec");
      secret = decoded.data;
    } catch {
      throw new NostrKeyError("That nsec key is not valid (a character is missing or mistyped). Copy it again from your Nostr app.");
    }
  } else if (HEX_KEY.test(typed)) {
    secret = hexToBytes(typed.toLowerCase());
  } else {
    throw new NostrKeyError("A secret key is either nsec1… (63 characters) or 64 hexadecimal characters. Copy it again from your Nostr app.");
  }
  const n = BigInt(`0x${bytesToHex(secret)}`);
  if (n === 0n || n >= CURVE_ORDER) throw new NostrKeyError("That secret key is outside the range Nostr keys use. Make a new key instead.");
  return keysOf(secret);
}

/** Makes a new key pair; `nsec` is its secret in the form a person saves (shown once, at minting). */
export function generateKeys(): NostrKeys & { nsec: string } {
  const secret = generateSecretKey();
  return { ...keysOf(secret), nsec: nsecEncode(secret) };
}

/** The secret key bytes of a sealed hex secret. */
export function secretBytes(secretHex: string): Uint8Array {
  return hexToBytes(secretHex);
}
