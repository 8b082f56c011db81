/**
 * Idempotency-Key on every POST under /api/v1 (decisions.md §1). The pipeline calls it around the handler:
 *
 * - beginIdempotent (after the credential, group, size and rate checks): claims (account, route, key) in one
 *   immediate transaction. New → the request runs under a lease. Same body and answered → the stored answer is
 *   replayed (status, content type, body; header `Idempotent-Replayed: true`). Different body → 422
 *   idempotency_key_reused. Still running → 409 idempotency_in_flight.
 * - settleIdempotent (with the response that is about to be sent): stores the answer when it is < 500, exactly the
 *   bytes sent, so a replay is byte-identical. A 5xx answer (500 internal_error, 502 generation_failed /
 *   distribution_failed) is NOT stored: the claim is dropped so a retry with the same key runs again. Nothing was
 *   charged on a 5xx, so re-running is safe. The pipeline drops the claim the same way if the handler throws.
 *
 * A claim whose process died keeps the key busy only until its lease ends (LEASE_MS); answers are kept 24 hours.
 * Keys are scoped per account and per route (`POST /api/v1/seeds`); the route is the concrete path.
 */
import { and, eq, lt } from "drizzle-orm";
import { idempotencyKeys } from "../db/schema";
import type { Deps } from "../deps";
import type { JobDefinition } from "../jobs/registry";
import { AppError } from "../lib/errors";
import { newId } from "../lib/ids";
import { appErrorResponse, JSON_HEADERS } from "./error-response";
import { requestSearch } from "./paths";
import { requestState } from "./request-context";
import { readStreamCapped } from "../lib/read-capped";

export const IDEMPOTENCY_HEADER = "idempotency-key";
/** Set on a replayed answer so clients and logs can tell it from a fresh one. */
export const REPLAYED_HEADER = "idempotent-replayed";
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** How long an answer is replayed. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** How long a claim blocks its key when nothing completes it (a crash mid-request). Longer than any request. */
export const IDEMPOTENCY_LEASE_MS = 10 * 60 * 1000;
/** Bodies larger than this are not fingerprinted here; the pipeline's parser answers 413 for them. */
const MAX_FINGERPRINT_BYTES = 1024 * 1024;

type IdempotencyDeps = Pick<Deps, "db" | "clock">;

export interface IdempotencyScope {
  accountId: string;
  /** `POST /api/v1/seeds` */
  route: string;
  key: string;
}

export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

export type Claim = { kind: "proceed"; lease: string } | ({ kind: "replay" } & StoredAnswer);

function scopeWhere(scope: IdempotencyScope) {
  return and(
    eq(idempotencyKeys.accountId, scope.accountId),
    eq(idempotencyKeys.route, scope.route),
    eq(idempotencyKeys.key, scope.key),
  );
}

/**
 * Claims `scope` for a request with `fingerprint`: proceed under a new lease, replay the stored answer, or throw
 * 422 idempotency_key_reused (different request) / 409 idempotency_in_flight (the first is still running).
 * Expired answers (over 24 h) and abandoned claims (lease over) are replaced as if absent.
 */
export function claimIdempotencyKey(deps: IdempotencyDeps, scope: IdempotencyScope, fingerprint: string): Claim {
  return deps.db.transaction(
    (tx) => {
      const now = deps.clock.now();
      const row = tx.select().from(idempotencyKeys).where(scopeWhere(scope)).get();
      const expired = row && row.createdAt <= now - IDEMPOTENCY_RETENTION_MS;
      const abandoned = row && row.state === "in_flight" && row.leaseUntil <= now;
      if (row && !expired && !abandoned) {
        if (row.fingerprint !== fingerprint) {
          throw new AppError(
            "idempotency_key_reused",
            "This Idempotency-Key was already used with a different request; use a new key.",
          );
        }
        if (row.state === "in_flight") {
          throw new AppError(
            "idempotency_in_flight",
            "A request with this Idempotency-Key is still running; retry once it has answered.",
          );
        }
        return {
          kind: "replay",
          status: row.status ?? 200,
          contentType: row.contentType ?? JSON_HEADERS["content-type"],
          body: row.body ?? "",
        };
      }
      const lease = newId();
      const fresh = {
        fingerprint,
        state: "in_flight" as const,
        lease,
        leaseUntil: now + IDEMPOTENCY_LEASE_MS,
        status: null,
        contentType: null,
        body: null,
        createdAt: now,
      };
      if (row) tx.update(idempotencyKeys).set(fresh).where(scopeWhere(scope)).run();
      else tx.insert(idempotencyKeys).values({ ...scope, ...fresh }).run();
      return { kind: "proceed", lease };
    },
    { behavior: "immediate" },
  );
}

/** Stores the answer of the claim holding `lease` (a no-op if the claim was taken over meanwhile). */
export function completeIdempotencyKey(
  deps: IdempotencyDeps,
  scope: IdempotencyScope,
  lease: string,
  answer: StoredAnswer,
): void {
  deps.db
    .update(idempotencyKeys)
    .set({ state: "done", status: answer.status, contentType: answer.contentType, body: answer.body })
    .where(and(scopeWhere(scope), eq(idempotencyKeys.lease, lease), eq(idempotencyKeys.state, "in_flight")))
    .run();
}

/** Drops the claim holding `lease`, so the same key may run again (after a 5xx, or when nothing completed it). */
export function releaseIdempotencyKey(deps: IdempotencyDeps, scope: IdempotencyScope, lease: string): void {
  deps.db
    .delete(idempotencyKeys)
    .where(and(scopeWhere(scope), eq(idempotencyKeys.lease, lease), eq(idempotencyKeys.state, "in_flight")))
    .run();
}

/** Deletes answers older than the retention window and claims older than it; returns how many. For a tidy job. */
export function tidyIdempotencyKeys(deps: IdempotencyDeps): number {
  const removed = deps.db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.createdAt, deps.clock.now() - IDEMPOTENCY_RETENTION_MS))
    .returning({ key: idempotencyKeys.key })
    .all();
  return removed.length;
}

/** Sorted-key JSON, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Reads at most `limit` bytes of a clone of the body; null when it is longer (the parser will refuse it). */
async function readCapped(request: Request, limit: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array();
  return readStreamCapped(request.clone().body, limit);
}

/** SHA-256 of the query string and the body (canonical JSON when it parses, the raw bytes otherwise). */
export function requestFingerprint(search: string, body: Uint8Array): string {
  let canonical: string | Uint8Array = body;
  if (body.byteLength > 0) {
    try {
      canonical = canonicalJson(JSON.parse(new TextDecoder().decode(body)));
    } catch {
      canonical = body;
    }
  }
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(search);
  hasher.update("\n");
  hasher.update(canonical);
  return hasher.digest("hex");
}

function keyRefusal(problem: string): AppError {
  return new AppError("invalid_request", `Idempotency-Key ${problem}.`, {
    details: [{ field: "Idempotency-Key", problem }],
  });
}

/** A claim held while its request runs; settled (or released) once the response is known. */
export interface HeldClaim {
  scope: IdempotencyScope;
  lease: string;
}

/** True for the requests beginIdempotent is for: a POST carrying Idempotency-Key. */
export function carriesIdempotencyKey(request: Request): boolean {
  return request.method === "POST" && request.headers.has(IDEMPOTENCY_HEADER);
}

/**
 * Claims the request's key for `accountId` on `path`. Answers the response to send instead of running the handler
 * (a replay or a refusal), the claim to settle once the handler has answered, or null when the body is too large to
 * fingerprint (the parser refuses it with 413 before any handler runs).
 */
export async function beginIdempotent(
  deps: IdempotencyDeps,
  request: Request,
  accountId: string,
  path: string,
  requestId: string,
): Promise<Response | HeldClaim | null> {
  const key = request.headers.get(IDEMPOTENCY_HEADER) ?? "";
  const headers = { "x-request-id": requestId };
  if (key.trim() === "") return appErrorResponse(keyRefusal("must not be empty"), headers);
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return appErrorResponse(keyRefusal(`must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`), headers);
  }
  const body = await readCapped(request, MAX_FINGERPRINT_BYTES);
  if (body === null) return null;
  const scope = { accountId, route: `POST ${path.replace(/\/+$/, "")}`, key };
  try {
    const claim = claimIdempotencyKey(deps, scope, requestFingerprint(requestSearch(request.url), body));
    if (claim.kind === "replay") {
      // The stored content type is "" when the first answer had none; the replay has none then either.
      const type: Record<string, string> = claim.contentType === "" ? {} : { "content-type": claim.contentType };
      return new Response(claim.body, { status: claim.status, headers: { ...type, [REPLAYED_HEADER]: "true", ...headers } });
    }
    return { scope, lease: claim.lease };
  } catch (error) {
    if (error instanceof AppError) return appErrorResponse(error, headers);
    throw error;
  }
}

/**
 * Marks top-level fields of this request's JSON answer that must never be stored for a replay (a secret shown once):
 * the stored answer, and so every replay, carries null there instead.
 */
export function withholdFromReplay(request: Request, fields: readonly string[]): void {
  const state = requestState(request);
  if (state) state.withheld = fields;
}

/** The answer body to store: `body` with the `withheld` top-level JSON fields set to null. */
function storableBody(body: string, withheld: readonly string[] | null | undefined): string {
  if (!withheld || withheld.length === 0) return body;
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return body;
    const copy = { ...(parsed as Record<string, unknown>) };
    for (const field of withheld) if (field in copy) copy[field] = null;
    return JSON.stringify(copy);
  } catch {
    return body;
  }
}

/**
 * Stores what `response` sends (when < 500) under the claim, or drops the claim (5xx) so a retry runs again. Fields
 * the handler withheld (withholdFromReplay) are stored as null.
 */
export async function settleIdempotent(deps: IdempotencyDeps, claim: HeldClaim, response: Response, withheld?: readonly string[] | null): Promise<void> {
  if (response.status >= 500) {
    releaseIdempotencyKey(deps, claim.scope, claim.lease);
    return;
  }
  const answer: StoredAnswer = {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    body: storableBody(await response.clone().text(), withheld),
  };
  completeIdempotencyKey(deps, claim.scope, claim.lease, answer);
}

/** Reserved id of the hourly job that deletes answers past the 24-hour window (correctness never waits for it). */
export const IDEMPOTENCY_TIDY_JOB_ID = "__idempotency_tidy__";

/** The idempotency tidy job, for src/jobs/index.ts. */
export const idempotencyJobs: readonly JobDefinition[] = [
  {
    id: IDEMPOTENCY_TIDY_JOB_ID,
    schedule: "0 23 * * * *",
    run: (deps) => {
      const removed = tidyIdempotencyKeys(deps);
      if (removed > 0) deps.log.info("tidied idempotency keys", { removed });
    },
  },
];
