/**
 * Idempotency-Key on every POST under /api/v1 (decisions.md §1). The pipeline calls it around the handler:
 *
 * - beginIdempotent (after the credential, group, size and rate checks): claims (account, route, key) in one
 *   write transaction. New → the request runs under a lease. Same body and answered → the stored answer is
 *   replayed (status, content type, body; header `Idempotent-Replayed: true`). Different body → 422
 *   idempotency_key_reused. Still running → 409 idempotency_in_flight.
 * - settleIdempotent (with the response that is about to be sent): stores the answer when it is < 500, exactly the
 *   bytes sent, so a replay is byte-identical. A 5xx answer (500 internal_error, 502 generation_failed /
 *   distribution_failed) is NOT stored: the claim is dropped so a retry with the same key runs again. Nothing was
 *   charged on a 5xx, so re-running is safe. The pipeline drops the claim the same way if the handler throws.
 *
 * A claim whose process died keeps the key busy only until its lease ends (LEASE_MS); answers are kept 24 hours.
 *
 * Answers that hold a credential (the upload link's `uploadUrl`, whose token is stored only as an HMAC) are never
 * stored in clear: they are sealed (AES-256-GCM) under a key derived from the request's own Authorization header and
 * Idempotency-Key, neither of which the server keeps (API keys are stored as HMACs). A retry with the same API key
 * opens and replays it byte for byte; the database, a backup, or the instance secret alone cannot.
 * Keys are scoped per account and per route (`POST /api/v1/seeds`); the route is the concrete path.
 */
import { and, eq, lt } from "drizzle-orm";
import { idempotencyKeys } from "../db/tables";
import type { Deps } from "../deps";
import type { JobDefinition } from "../jobs/registry";
import { AppError } from "../lib/errors";
import { newId } from "../lib/ids";
import { appErrorResponse, JSON_HEADERS } from "./error-response";
import { requestSearch } from "./paths";
import { requestState } from "./request-context";
import { readStreamCapped } from "../lib/read-capped";
import { CSV_BODY_ROUTES, MAX_CSV_BYTES } from "./csv-body";
import { isSealed, openText, sealText } from "../lib/aead";

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

type IdempotencyDeps = Pick<Deps, "store" | "clock">;

/**
 * Routes (as `POST <path>`) whose answers carry a credential, so their stored answers are sealed to the caller (see
 * above). A route whose answer starts carrying a secret belongs here.
 */
export const CREDENTIAL_ANSWER_ROUTES: ReadonlySet<string> = new Set(["POST /api/v1/assets/upload-link", "MCP create_upload_link"]);

/** The key sealing a stored answer: HMAC-SHA256 keyed by the request's Authorization header, over the scope. */
function replayKey(authorization: string, scope: IdempotencyScope): Uint8Array {
  return new Uint8Array(
    new Bun.CryptoHasher("sha256", authorization).update(`seedcast:idempotency-replay:v1\u0000${scope.route}\u0000${scope.key}`).digest(),
  );
}

/** What a sealed answer is bound to: the exact row it is stored in. */
function replayAad(scope: IdempotencyScope): string {
  return `${scope.accountId}\u0000${scope.route}\u0000${scope.key}`;
}

/**
 * A stored answer for `scope`: sealed under the caller's `authorization` (the header, or an MCP bearer token) when the
 * scope's route is a CREDENTIAL_ANSWER_ROUTES one, else the text itself.
 */
export function storedAnswerText(authorization: string, scope: IdempotencyScope, text: string): string {
  return CREDENTIAL_ANSWER_ROUTES.has(scope.route) ? sealText(replayKey(authorization, scope), replayAad(scope), text) : text;
}

/** The text of a stored answer for `scope`, opened with the caller's `authorization` when sealed; null when it cannot be. */
export function replayedAnswerText(authorization: string, scope: IdempotencyScope, stored: string): string | null {
  return isSealed(stored) ? openText(replayKey(authorization, scope), replayAad(scope), stored) : stored;
}

/** The refusal of a replay whose sealed answer the caller cannot open (another key, or a renewed token). */
export function sealedReplayRefusal(): AppError {
  return new AppError(
    "idempotency_key_reused",
    "This Idempotency-Key's answer holds a credential and is replayed only to the API key that made the request; use a new key.",
  );
}

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
export async function claimIdempotencyKey(deps: IdempotencyDeps, scope: IdempotencyScope, fingerprint: string): Promise<Claim> {
  return deps.store.write(async (tx): Promise<Claim> => {
    const now = deps.clock.now();
    const row = await tx.select().from(idempotencyKeys).where(scopeWhere(scope)).get();
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
    // Both writes are conditional and counted, so of two concurrent claims (possible on PostgreSQL, where writes are
    // not serialised) one proceeds and the other is told the key is in flight, never a second run or a 500.
    const taken = row
      ? await tx
          .update(idempotencyKeys)
          .set(fresh)
          .where(and(scopeWhere(scope), eq(idempotencyKeys.lease, row.lease)))
          .returning({ lease: idempotencyKeys.lease })
          .all()
      : await tx
          .insert(idempotencyKeys)
          .values({ ...scope, ...fresh })
          .onConflictDoNothing()
          .returning({ lease: idempotencyKeys.lease })
          .all();
    if (taken.length !== 1) {
      throw new AppError("idempotency_in_flight", "A request with this Idempotency-Key is still running; retry once it has answered.");
    }
    return { kind: "proceed", lease };
  });
}

/** Stores the answer of the claim holding `lease` (a no-op if the claim was taken over meanwhile). */
export async function completeIdempotencyKey(
  deps: IdempotencyDeps,
  scope: IdempotencyScope,
  lease: string,
  answer: StoredAnswer,
): Promise<void> {
  await deps.store.write(async (tx) => {
    await tx
      .update(idempotencyKeys)
      .set({ state: "done", status: answer.status, contentType: answer.contentType, body: answer.body })
      .where(and(scopeWhere(scope), eq(idempotencyKeys.lease, lease), eq(idempotencyKeys.state, "in_flight")))
      .run();
  });
}

/** Drops the claim holding `lease`, so the same key may run again (after a 5xx, or when nothing completed it). */
export async function releaseIdempotencyKey(deps: IdempotencyDeps, scope: IdempotencyScope, lease: string): Promise<void> {
  await deps.store.write(async (tx) => {
    await tx
      .delete(idempotencyKeys)
      .where(and(scopeWhere(scope), eq(idempotencyKeys.lease, lease), eq(idempotencyKeys.state, "in_flight")))
      .run();
  });
}

/** Deletes answers older than the retention window and claims older than it; returns how many. For a tidy job. */
export async function tidyIdempotencyKeys(deps: IdempotencyDeps): Promise<number> {
  const cutoff = deps.clock.now() - IDEMPOTENCY_RETENTION_MS;
  const removed = await deps.store.write((tx) =>
    tx.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, cutoff)).returning({ key: idempotencyKeys.key }).all(),
  );
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
  // NB: only the clone's body is looked at. Touching `request.body` before cloning (once the handler has awaited
  // anything, e.g. the credential's database lookup) leaves the original's stream locked by the tee in Bun, and the
  // route's parser then fails on it (a 400 on every keyed POST over a real socket on PostgreSQL).
  const clone = request.clone();
  if (!clone.body) return new Uint8Array();
  return readStreamCapped(clone.body, limit);
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
  /** Set for CREDENTIAL_ANSWER_ROUTES: the answer is stored sealed under this key (held in memory only). */
  sealKey?: Uint8Array;
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
  const scope = { accountId, route: `POST ${path.replace(/\/+$/, "")}`, key };
  // A CSV body (the import) is fingerprinted under its own, larger cap, so its key is honoured like any other.
  const body = await readCapped(request, CSV_BODY_ROUTES.has(scope.route) ? MAX_CSV_BYTES : MAX_FINGERPRINT_BYTES);
  if (body === null) return null;
  try {
    const claim = await claimIdempotencyKey(deps, scope, requestFingerprint(requestSearch(request.url), body));
    const sealKey = CREDENTIAL_ANSWER_ROUTES.has(scope.route) ? replayKey(request.headers.get("authorization") ?? "", scope) : undefined;
    if (claim.kind === "replay") {
      let replayed = claim.body;
      if (isSealed(claim.body)) {
        const opened = sealKey ? openText(sealKey, replayAad(scope), claim.body) : null;
        if (opened === null) return appErrorResponse(sealedReplayRefusal(), headers);
        replayed = opened;
      }
      // The stored content type is "" when the first answer had none; the replay has none then either.
      const type: Record<string, string> = claim.contentType === "" ? {} : { "content-type": claim.contentType };
      return new Response(replayed, { status: claim.status, headers: { ...type, [REPLAYED_HEADER]: "true", ...headers } });
    }
    return sealKey ? { scope, lease: claim.lease, sealKey } : { scope, lease: claim.lease };
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
export function storableBody(body: string, withheld: readonly string[] | null | undefined): string {
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
    await releaseIdempotencyKey(deps, claim.scope, claim.lease);
    return;
  }
  const text = await response.clone().text();
  const answer: StoredAnswer = {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    body: claim.sealKey ? sealText(claim.sealKey, replayAad(claim.scope), storableBody(text, withheld)) : storableBody(text, withheld),
  };
  await completeIdempotencyKey(deps, claim.scope, claim.lease, answer);
}

/** Reserved id of the hourly job that deletes answers past the 24-hour window (correctness never waits for it). */
export const IDEMPOTENCY_TIDY_JOB_ID = "__idempotency_tidy__";

/** The idempotency tidy job, for src/system-jobs.ts. */
export const idempotencyJobs: readonly JobDefinition[] = [
  {
    id: IDEMPOTENCY_TIDY_JOB_ID,
    schedule: "0 23 * * * *",
    run: async (deps) => {
      const removed = await tidyIdempotencyKeys(deps);
      if (removed > 0) deps.log.info("tidied idempotency keys", { removed });
    },
  },
];
