/**
 * Idempotency-Key on every POST under /api/v1 (decisions.md §1), as one plugin mounted right after the pipeline:
 *
 * - onRequest (runs after the pipeline's credential, group, size and rate checks, which return early on refusal):
 *   claims (account, route, key) in one immediate transaction. New → the request runs under a lease. Same body and
 *   answered → the stored answer is replayed (status, content type, body; header `Idempotent-Replayed: true`).
 *   Different body → 422 idempotency_key_reused. Still running → 409 idempotency_in_flight.
 * - mapResponse (sees handler results and error responses alike): stores the answer when it is < 500. A 5xx answer
 *   (500 internal_error, 502 generation_failed / distribution_failed) is NOT stored: the claim is dropped so a retry
 *   with the same key runs again. Nothing was charged on a 5xx, so re-running is safe.
 * - onAfterResponse: a safety net that drops a claim nothing completed (e.g. a response that bypassed mapResponse).
 *
 * A claim whose process died keeps the key busy only until its lease ends (LEASE_MS); answers are kept 24 hours.
 * Keys are scoped per account and per route (`POST /api/v1/seeds`); the route is the concrete path.
 */
import { and, eq, lt } from "drizzle-orm";
import { Elysia } from "elysia";
import { idempotencyKeys } from "../db/schema";
import type { Deps } from "../deps";
import type { JobDefinition } from "../jobs/registry";
import { AppError } from "../lib/errors";
import { newId } from "../lib/ids";
import { appErrorResponse, JSON_HEADERS } from "./error-response";
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
const API_PREFIX = "/api/v1/";

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

/** Status code of a finished request, from Elysia's `set.status` (a number or a status name). */
function numericStatus(status: unknown, fallback: number): number {
  const n = typeof status === "number" ? status : Number(status);
  return Number.isInteger(n) && n >= 100 ? n : fallback;
}

/** `{ code, response }` of Elysia's `status(code, body)` helper, recognised structurally (its class is not exported). */
function customStatus(value: unknown): { code: number; response: unknown } | null {
  if (value && typeof value === "object" && value.constructor?.name === "ElysiaCustomStatusResponse") {
    const v = value as { code: unknown; response: unknown };
    return { code: numericStatus(v.code, 200), response: v.response };
  }
  return null;
}

/** Receives every answer the plugin gives before a handler runs, so the pipeline logs and counts it like any other. */
export type EarlyAnswer = (request: Request, response: Response) => Response;

/** The plugin. Mount it right after the pipeline so its onRequest runs after the pipeline's checks. */
export function idempotencyPlugin(deps: IdempotencyDeps, answer: EarlyAnswer = (_request, response) => response) {
  const pending = new WeakMap<Request, { scope: IdempotencyScope; lease: string }>();

  return new Elysia({ name: "seedcast.idempotency" })
    .onRequest(async ({ request }) => {
      if (request.method !== "POST") return;
      const key = request.headers.get(IDEMPOTENCY_HEADER);
      if (key === null) return;
      const url = new URL(request.url);
      if (!url.pathname.startsWith(API_PREFIX)) return;
      const state = requestState(request);
      // NB: the pipeline refused unauthenticated API requests before this hook; no auth means not ours to handle.
      if (!state?.auth) return;
      const headers = { "x-request-id": state.id };
      if (key.trim() === "") return answer(request, appErrorResponse(keyRefusal("must not be empty"), headers));
      if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
        return answer(request, appErrorResponse(keyRefusal(`must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`), headers));
      }
      const body = await readCapped(request, MAX_FINGERPRINT_BYTES);
      if (body === null) return;
      const scope = { accountId: state.auth.accountId, route: `POST ${url.pathname.replace(/\/+$/, "")}`, key };
      try {
        const claim = claimIdempotencyKey(deps, scope, requestFingerprint(url.search, body));
        if (claim.kind === "replay") {
          return answer(
            request,
            new Response(claim.body, {
              status: claim.status,
              headers: { "content-type": claim.contentType, [REPLAYED_HEADER]: "true", ...headers },
            }),
          );
        }
        pending.set(request, { scope, lease: claim.lease });
      } catch (error) {
        if (error instanceof AppError) return answer(request, appErrorResponse(error, headers));
        throw error;
      }
    })
    .mapResponse({ as: "global" }, async ({ request, responseValue, set }) => {
      const claim = pending.get(request);
      if (!claim) return;
      pending.delete(request);
      let answer: StoredAnswer;
      let reply: Response | undefined;
      if (responseValue instanceof Response) {
        answer = {
          status: responseValue.status,
          contentType: responseValue.headers.get("content-type") ?? "",
          body: await responseValue.clone().text(),
        };
      } else {
        const custom = customStatus(responseValue);
        const value = custom ? custom.response : responseValue;
        const status = custom ? custom.code : numericStatus(set.status, 200);
        const isText = typeof value === "string";
        answer = {
          status,
          contentType: isText ? "text/plain; charset=utf-8" : JSON_HEADERS["content-type"],
          body: isText ? value : value === undefined ? "" : JSON.stringify(value),
        };
        // What is sent is built from exactly what is stored, so a replay is byte-identical.
        const extra: Record<string, string> = {};
        for (const [name, v] of Object.entries(set.headers)) if (typeof v === "string") extra[name] = v;
        reply = new Response(answer.body, { status, headers: { ...extra, "content-type": answer.contentType } });
      }
      if (answer.status >= 500) releaseIdempotencyKey(deps, claim.scope, claim.lease);
      else completeIdempotencyKey(deps, claim.scope, claim.lease, answer);
      return reply;
    })
    .onAfterResponse({ as: "global" }, ({ request }) => {
      const claim = pending.get(request);
      if (!claim) return;
      pending.delete(request);
      releaseIdempotencyKey(deps, claim.scope, claim.lease);
    });
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
