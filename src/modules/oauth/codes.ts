/**
 * Authorization codes (OAuth 2.1 §4.1, RFC 7636, RFC 8707): issued at consent, exchanged once at the token endpoint
 * within 60 seconds. A second exchange revokes the grant the first one created (OAuth 2.1 §4.1.3). The code is bound
 * to its client, redirect URI, PKCE challenge and resource.
 */
import { and, eq, isNull } from "drizzle-orm";
import { oauthCodes } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import type { Scope } from "../../auth/scopes";
import { OAuthError } from "./errors";
import { type TokenPair, insertGrant, mcpResource, revokeGrant } from "./service";
import { CODE_PREFIX, hashSecret, isSecret, newSecret } from "./token-format";

export const CODE_TTL_MS = 60_000;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;

type CodeDeps = Pick<Deps, "store" | "clock" | "instanceSecret" | "config">;

/** What consent decided, bound into the code. */
export interface CodeInput {
  clientId: string;
  accountId: string;
  userId: string;
  scopes: readonly Scope[];
  redirectUri: string;
  codeChallenge: string;
  resource: string | null;
}

/** Stores a new code and answers it (shown once, in the redirect). */
export async function issueCode(deps: CodeDeps, input: CodeInput): Promise<string> {
  const code = newSecret(CODE_PREFIX);
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    await tx
      .insert(oauthCodes)
      .values({
        id: newId(),
        codeHash: hashSecret(deps, code),
        clientId: input.clientId,
        accountId: input.accountId,
        userId: input.userId,
        scopes: input.scopes.join(","),
        redirectUri: input.redirectUri,
        codeChallenge: input.codeChallenge,
        resource: input.resource,
        expiresAt: now + CODE_TTL_MS,
        createdAt: now,
      })
      .run();
  });
  return code;
}

/** base64url(SHA-256(verifier)): the S256 challenge of a verifier (RFC 7636 §4.2). */
export function s256(verifier: string): string {
  return new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");
}

/**
 * Exchanges a code for a grant and its first token pair. Every refusal is invalid_grant (invalid_target for a
 * resource mismatch), with nothing issued. The code is spent at its first presentation, whatever the outcome.
 */
export async function exchangeCode(
  deps: CodeDeps,
  input: { code: string; clientId: string; redirectUri: string | null; codeVerifier: string | null; resource: string | null },
): Promise<TokenPair> {
  if (!isSecret(CODE_PREFIX, input.code)) throw new OAuthError("invalid_grant", "The authorization code is not valid.");
  const hash = hashSecret(deps, input.code);
  // NB: returns its outcome rather than throwing, so spending the code and a reuse revocation persist on refusal.
  const outcome = await deps.store.write(
    async (tx): Promise<TokenPair | OAuthError> => {
      const now = deps.clock.now();
      const row = await tx.select().from(oauthCodes).where(eq(oauthCodes.codeHash, hash)).get();
      const refused = new OAuthError("invalid_grant", "The authorization code is not valid.");
      if (!row || row.clientId !== input.clientId) return refused;
      if (row.usedAt !== null) {
        if (row.grantId !== null) await revokeGrant(deps, row.grantId);
        return new OAuthError("invalid_grant", "This authorization code was already used; what it issued is revoked.");
      }
      // Conditional, so two exchanges racing with one code (PostgreSQL: no writer lock) spend it once; the loser is a reuse.
      const spent = await tx
        .update(oauthCodes)
        .set({ usedAt: now })
        .where(and(eq(oauthCodes.id, row.id), isNull(oauthCodes.usedAt)))
        .returning({ id: oauthCodes.id })
        .get();
      if (!spent) {
        const winner = await tx.select({ grantId: oauthCodes.grantId }).from(oauthCodes).where(eq(oauthCodes.id, row.id)).get();
        if (winner?.grantId) await revokeGrant(deps, winner.grantId);
        return new OAuthError("invalid_grant", "This authorization code was already used; what it issued is revoked.");
      }
      if (now >= row.expiresAt) return new OAuthError("invalid_grant", "The authorization code has expired.");
      if (input.redirectUri !== row.redirectUri) {
        return new OAuthError("invalid_grant", "redirect_uri does not match the one of the authorization request.");
      }
      if (input.codeVerifier === null || !VERIFIER_RE.test(input.codeVerifier)) {
        return new OAuthError("invalid_grant", "code_verifier is missing or malformed (43 to 128 unreserved characters).");
      }
      if (s256(input.codeVerifier) !== row.codeChallenge) return new OAuthError("invalid_grant", "code_verifier does not match the code_challenge.");
      const canonical = mcpResource(deps);
      if (input.resource !== null && (input.resource !== canonical || (row.resource !== null && row.resource !== input.resource))) {
        return new OAuthError("invalid_target", `resource must be ${canonical}, as in the authorization request.`);
      }
      let pair: TokenPair;
      try {
        pair = await insertGrant(deps, {
          clientId: row.clientId,
          accountId: row.accountId,
          userId: row.userId,
          scopes: row.scopes.split(","),
          resource: canonical,
        });
      } catch (error) {
        if (error instanceof AppError) return new OAuthError("invalid_grant", "The person who approved this no longer has access to the account.");
        throw error;
      }
      await tx.update(oauthCodes).set({ grantId: pair.grantId }).where(eq(oauthCodes.id, row.id)).run();
      return pair;
    },
  );
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}
