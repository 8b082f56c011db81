/**
 * The `idempotency_key` argument of the tools that create: the REST Idempotency-Key (decisions.md §1) with the same
 * store and the same rules, scoped per account and tool (`MCP create_seed`). The same key with the same arguments
 * within 24 hours replays the first answer (nothing run, nothing charged again); other arguments → 422
 * idempotency_key_reused; a repeat while the first still runs → 409 idempotency_in_flight. Answers of 5xx (and
 * calls that threw) are not kept, so a retry runs again, exactly as over REST.
 */
import type { Deps } from "../../deps";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  type IdempotencyScope,
  releaseIdempotencyKey,
  replayedAnswerText,
  requestFingerprint,
  sealedReplayRefusal,
  storableBody,
  storedAnswerText,
} from "../../http/idempotency";
import { JSON_HEADERS } from "../../http/error-response";

/** A tool's answer as REST would send it: the status and the JSON body (the answer, or the error envelope). */
export interface ToolAnswer {
  status: number;
  body: unknown;
  /** True when this is the stored answer of an earlier call with the same key. */
  replayed: boolean;
}

const encoder = new TextEncoder();

/** The route part of a tool's idempotency scope. */
export function toolRoute(name: string): string {
  return `MCP ${name}`;
}

/**
 * Runs `call` under `key` for `accountId` and tool `name`; `args` (without the key) is what is fingerprinted. Claim
 * refusals (422, 409) throw AppError like the REST pipeline answers them. `bearer` is the caller's access token: an
 * answer that holds a credential (create_upload_link's upload URL) is stored sealed under it, never in clear, so only
 * a call with the same token can replay it (after the token is renewed, a replay is refused: use a new key). The
 * `withheld` top-level fields (a secret shown once) are stored as null, as the REST route withholds them.
 */
export async function runIdempotent(
  deps: Pick<Deps, "store" | "clock">,
  scope: { accountId: string; tool: string; key: string; bearer: string; withheld?: readonly string[] },
  args: unknown,
  call: () => Promise<ToolAnswer>,
): Promise<ToolAnswer> {
  const where: IdempotencyScope = { accountId: scope.accountId, route: toolRoute(scope.tool), key: scope.key };
  const claim = await claimIdempotencyKey(deps, where, requestFingerprint("", encoder.encode(JSON.stringify(args ?? {}))));
  if (claim.kind === "replay") {
    const text = replayedAnswerText(scope.bearer, where, claim.body);
    if (text === null) throw sealedReplayRefusal();
    return { status: claim.status, body: JSON.parse(text) as unknown, replayed: true };
  }
  let answer: ToolAnswer;
  try {
    answer = await call();
  } catch (error) {
    await releaseIdempotencyKey(deps, where, claim.lease);
    throw error;
  }
  if (answer.status >= 500) {
    await releaseIdempotencyKey(deps, where, claim.lease);
  } else {
    await completeIdempotencyKey(deps, where, claim.lease, {
      status: answer.status,
      contentType: JSON_HEADERS["content-type"],
      body: storedAnswerText(scope.bearer, where, storableBody(JSON.stringify(answer.body), scope.withheld)),
    });
  }
  return answer;
}
