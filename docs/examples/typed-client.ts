/**
 * A typed Seedcast client in a few lines: types generated from the instance's own /openapi.json by
 * openapi-typescript, calls made with openapi-fetch. Every body, parameter, answer and refusal is typed from the
 * document; a typo in a field or a path does not compile.
 *
 *   cd docs/examples && npm install
 *   SEEDCAST_URL=http://localhost:3000 npm run types     # writes seedcast-api.d.ts from the served document
 *   npm run typecheck
 *   SEEDCAST_URL=http://localhost:3000 SEEDCAST_KEY=svc_… node --experimental-strip-types typed-client.ts
 *
 * CI generates the types from a served document and compiles this file (test/typed-client.test.ts), then runs it
 * against that server.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./seedcast-api";

type Seed = components["schemas"]["Seed"];
type Post = components["schemas"]["Post"];

export interface Outcome {
  seed: Seed;
  caption: string;
  post: Post | null;
  /** What a refusal said, typed: e.g. `insufficient_credits` with `required` and `available`. */
  refusal: string | null;
}

/**
 * What a refusal says: its `error` code, or the bare status for the one answer without a body (431, when the request's
 * header fields are too large for the server: openapi-fetch then gives `error` undefined, so test `data`, not `error`).
 */
function refused(error: { error: string } | undefined, response: Response): string {
  return error?.error ?? `HTTP ${response.status}`;
}

/** Saves a seed, generates a post from it and schedules it to every ready target, an hour from now. */
export async function launchPost(baseUrl: string, apiKey: string, title: string, content: string): Promise<Outcome> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });

  const saved = await client.POST("/api/v1/seeds", {
    body: { title, content, category: "launch" },
    params: { header: { "Idempotency-Key": `seed-${title}` } },
  });
  if (!saved.data) throw new Error(`seed refused: ${saved.error && "message" in saved.error ? saved.error.message : refused(saved.error, saved.response)}`);
  const seed: Seed = saved.data;

  const generated = await client.POST("/api/v1/creations/generate", { body: { seed_id: seed.id, aspect_ratio: "portrait" } });
  if (!generated.data) {
    const refusal = generated.error;
    // The refusals are a union of the documented bodies: narrowing on `error` gives each one's own fields.
    if (refusal?.error === "insufficient_credits") {
      return { seed, caption: "", post: null, refusal: `needs ${refusal.required} credits, has ${refusal.available}` };
    }
    return { seed, caption: "", post: null, refusal: refused(refusal, generated.response) };
  }
  const creation = generated.data.creation;

  const targets = await client.GET("/api/v1/schedule/targets");
  const ready = (targets.data?.targets ?? []).filter((t) => t.readyToPost).map((t) => t.accountId);
  if (ready.length === 0) return { seed, caption: creation.body.caption, post: null, refusal: "no target is ready" };

  const scheduled = await client.POST("/api/v1/schedule", {
    body: {
      type: "social_post",
      creation_id: creation.id,
      scheduled_time: new Date(Date.now() + 60 * 60 * 1000).toISOString(),
      targets: ready,
    },
  });
  if (!scheduled.data) return { seed, caption: creation.body.caption, post: null, refusal: refused(scheduled.error, scheduled.response) };
  return { seed, caption: creation.body.caption, post: scheduled.data.post, refusal: null };
}

/** Lists the newest seeds, page by page, with the typed cursor. */
export async function allSeedTitles(baseUrl: string, apiKey: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });
  const titles: string[] = [];
  let cursor: string | null = null;
  do {
    const query: { limit: number; cursor?: string } = cursor ? { limit: 50, cursor } : { limit: 50 };
    const page = await client.GET("/api/v1/seeds", { params: { query } });
    if (!page.data) throw new Error(refused(page.error, page.response));
    titles.push(...page.data.seeds.map((s) => s.title));
    cursor = page.data.nextCursor;
  } while (cursor !== null);
  return titles;
}

declare const process: { env: Record<string, string | undefined>; argv: string[] } | undefined;
const env = typeof process === "undefined" ? {} : process.env;
if (env.SEEDCAST_URL && env.SEEDCAST_KEY && import.meta.url.endsWith(process?.argv[1]?.split("/").pop() ?? "\0")) {
  const outcome = await launchPost(env.SEEDCAST_URL, env.SEEDCAST_KEY, "Launch day", "We launch on Monday.");
  console.log(JSON.stringify(outcome, null, 2));
}
