/** PKCE (RFC 7636): a random verifier and its S256 challenge, and the random `state`. */
import { createHash, randomBytes } from "node:crypto";

/** 32 random bytes in base64url: 43 characters, within RFC 7636 §4.1's 43–128 unreserved characters. */
export function randomVerifier(): string {
  return randomBytes(32).toString("base64url");
}

/** BASE64URL(SHA256(verifier)), RFC 7636 §4.2. */
export function s256Challenge(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}
