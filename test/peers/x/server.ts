/**
 * An X stand-in, written from X's documentation and held to its OpenAPI description
 * (test/peers/platform-specs/x-api-v2.openapi.json, API v2), never from Seedcast's client:
 *  - OAuth 2.0 Authorization Code with PKCE: https://docs.x.com/fundamentals/authentication/oauth-2-0/authorization-code
 *    and https://docs.x.com/fundamentals/authentication/oauth-2-0/user-access-token (authorize at
 *    `https://x.com/i/oauth2/authorize`, tokens at `POST https://api.x.com/2/oauth2/token`; a confidential client
 *    authenticates with HTTP Basic; access tokens last 2 hours; `offline.access` gives a refresh token, and every
 *    refresh answers a new one: the old one is spent). X answers `invalid_request` ("Value passed for the token was
 *    invalid.") for a spent or revoked refresh token, and for a wrong authorization code.
 *  - Media: `POST /2/media/upload` (https://docs.x.com/x-api/media/upload-media, `media` base64 in a JSON body with
 *    `media_category`), alt text with `POST /2/media/metadata` (https://docs.x.com/x-api/media/create-media-metadata).
 *  - Posts: `POST /2/tweets` (https://docs.x.com/x-api/posts/create-post: `text`, `media.media_ids` up to 4,
 *    `reply.in_reply_to_tweet_id`), 201 `{data: {id, text}}`; a duplicate of a recent post's text answers 403
 *    "You are not allowed to create a Tweet with duplicate content.".
 *  - `GET /2/users/me`, `GET /2/users/{id}/tweets` (https://docs.x.com/x-api/users/get-posts: newest first,
 *    `start_time`, `max_results` 5–100, `post.fields`).
 *  - Errors: RFC 7807 problems (`type`, `title`, `detail`, `status`), 401 "Unauthorized" for a bad token.
 * Every request to the API (/2/…) is validated with Ajv against its operation in the description (query parameters and
 * JSON body); a request that does not conform answers 400 invalid-request and is recorded in `violations`. Every
 * success answer is validated against the operation's response schema before it is sent (recorded likewise).
 */
import Ajv from "ajv";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import { createHash, randomBytes } from "node:crypto";
import twitter from "twitter-text";
import { cutOffAnswer, escapeHtml } from "../stand-in-kit";

const SPEC_PATH = new URL("../platform-specs/x-api-v2.openapi.json", import.meta.url).pathname;
const SPEC_ID = "x-api-v2";
/** What X documents for an access token's life (2 hours). */
export const X_ACCESS_TOKEN_SECONDS = 7200;

/** A post as the stand-in keeps it. */
export interface XPost {
  id: string;
  text: string;
  authorId: string;
  createdAt: string;
  mediaIds: string[];
  inReplyTo: string | null;
  conversationId: string;
}

/** An uploaded image. */
export interface XMedia {
  id: string;
  size: number;
  category: string;
  altText: string | null;
}

/** What the stand-in does with the next requests. */
export interface XMode {
  /** Token endpoint: answer 503 this many times. */
  tokenUnavailable: number;
  /** Token endpoint: answer refresh grants without a `refresh_token` (the stored one must be kept). */
  refreshWithoutNewToken: boolean;
  /** POST /2/tweets: store the post, then cut the answer off this many times (the client cannot know it was stored). */
  storeThenCut: number;
  /** Latency of each POST /2/tweets, half before the post is stored and half after (a kill lands on either side). */
  postLatencyMs: number;
}

type Validators = Map<string, ValidateFunction>;
let compiled: Validators | null = null;

function validators(): Validators {
  if (compiled) return compiled;
  const spec = JSON.parse(require("node:fs").readFileSync(SPEC_PATH, "utf8")) as Record<string, unknown>;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  for (const name of ["int32", "int64", "binary", "byte"]) ajv.addFormat(name, true);
  ajv.addSchema({ ...spec, $id: SPEC_ID });
  const ref = (pointer: string): ValidateFunction => {
    const fn = ajv.getSchema(`${SPEC_ID}#${pointer}`);
    if (!fn) throw new Error(`no schema at ${pointer}`);
    return fn;
  };
  const json = "content/application~1json/schema";
  compiled = new Map([
    ["upload.body", ref(`/paths/~12~1media~1upload/post/requestBody/${json}`)],
    ["upload.200", ref(`/paths/~12~1media~1upload/post/responses/200/${json}`)],
    ["metadata.body", ref(`/paths/~12~1media~1metadata/post/requestBody/${json}`)],
    ["metadata.200", ref(`/paths/~12~1media~1metadata/post/responses/200/${json}`)],
    ["tweets.body", ref(`/paths/~12~1tweets/post/requestBody/${json}`)],
    ["tweets.201", ref(`/paths/~12~1tweets/post/responses/201/${json}`)],
    ["me.200", ref(`/paths/~12~1users~1me/get/responses/200/${json}`)],
    ["userPosts.200", ref(`/paths/~12~1users~1{id}~1tweets/get/responses/200/${json}`)],
    ["userId", ref("/components/schemas/UserId")],
    ["q.max_results", ref("/paths/~12~1users~1{id}~1tweets/get/parameters/1/schema")],
    ["q.pagination_token", ref("/paths/~12~1users~1{id}~1tweets/get/parameters/2/schema")],
    ["q.start_time", ref("/paths/~12~1users~1{id}~1tweets/get/parameters/3/schema")],
    ["q.end_time", ref("/paths/~12~1users~1{id}~1tweets/get/parameters/4/schema")],
    ["q.post.fields", ref("/components/parameters/PostFieldsParameter/schema")],
  ]);
  return compiled;
}

function errorsText(fn: ValidateFunction): string {
  return (fn.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`).join("; ");
}

/** A running stand-in. */
export interface XStandIn {
  origin: string;
  clientId: string;
  clientSecret: string;
  user: { id: string; username: string; name: string };
  posts: XPost[];
  media: Map<string, XMedia>;
  violations: string[];
  /** Requests seen, as "METHOD path". */
  requests: string[];
  /** Token endpoint calls, by grant type. */
  tokenCalls: { grant: string; status: number }[];
  mode: XMode;
  /** Refresh tokens issued and not yet spent. */
  liveRefreshTokens(): number;
  /** The person revokes the app in X's settings: every token stops working. */
  revokeAll(): void;
  /** Registers the app's callback URI (as the admin does in X's developer console). */
  registerRedirectUri(uri: string): void;
  stop(): Promise<void>;
}

let idSeq = 0n;
/** X ids are snowflakes: a decimal string of up to 19 digits. */
function snowflake(): string {
  idSeq += 1n;
  return String(((BigInt(Date.now()) - 1288834974657n) << 22n) + (idSeq % 4096n));
}

function token(prefix: string): string {
  return `${prefix}${randomBytes(24).toString("base64url")}`;
}

function problem(status: number, title: string, detail: string, type = "about:blank"): Response {
  return Response.json({ title, detail, type, status }, { status, headers: { "content-type": "application/problem+json" } });
}

function invalidRequest(detail: string, message: string): Response {
  return Response.json(
    { errors: [{ message }], title: "Invalid Request", detail, type: "https://api.x.com/2/problems/invalid-request" },
    { status: 400 },
  );
}

function oauthError(status: number, error: string, description: string): Response {
  return Response.json({ error, error_description: description }, { status });
}

/** Starts the stand-in on 127.0.0.1. The app's redirect URI must be registered (`redirectUri`). */
export function startXStandIn(opts: { redirectUri: string; username?: string; port?: number }): XStandIn {
  const v = validators();
  let registeredRedirect = opts.redirectUri;
  const clientId = `X${randomBytes(12).toString("base64url")}`;
  const clientSecret = randomBytes(30).toString("base64url");
  const user = { id: "1460000000000000001", username: opts.username ?? "cornerbakery", name: "Corner Bakery" };
  const codes = new Map<string, { challenge: string; redirectUri: string; scope: string }>();
  const access = new Map<string, { userId: string; scope: string }>();
  const refresh = new Map<string, { userId: string; scope: string }>();
  const spent = new Set<string>();
  const state: XStandIn = {
    origin: "",
    clientId,
    clientSecret,
    user,
    posts: [],
    media: new Map(),
    violations: [],
    requests: [],
    tokenCalls: [],
    mode: { tokenUnavailable: 0, refreshWithoutNewToken: false, storeThenCut: 0, postLatencyMs: 0 },
    liveRefreshTokens: () => refresh.size,
    revokeAll() {
      access.clear();
      for (const t of refresh.keys()) spent.add(t);
      refresh.clear();
    },
    registerRedirectUri(uri) {
      registeredRedirect = uri;
    },
    stop: async () => {
      await server.stop(true);
    },
  };

  const answer = (key: string, body: unknown, status: number): Response => {
    const fn = v.get(key)!;
    if (!fn(body)) state.violations.push(`answer ${key}: ${errorsText(fn)}`);
    return Response.json(body, { status });
  };

  const issue = (userId: string, scope: string, withRefresh: boolean) => {
    const accessToken = token("xat-");
    access.set(accessToken, { userId, scope });
    const body: Record<string, unknown> = { token_type: "bearer", expires_in: X_ACCESS_TOKEN_SECONDS, access_token: accessToken, scope };
    if (withRefresh && scope.split(" ").includes("offline.access")) {
      const refreshToken = token("xrt-");
      refresh.set(refreshToken, { userId, scope });
      body.refresh_token = refreshToken;
    }
    return Response.json(body);
  };

  async function tokenEndpoint(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    const grant = form.get("grant_type") ?? "";
    const done = (res: Response) => {
      state.tokenCalls.push({ grant, status: res.status });
      return res;
    };
    if (state.mode.tokenUnavailable > 0) {
      state.mode.tokenUnavailable -= 1;
      return done(problem(503, "Service Unavailable", "Service Unavailable"));
    }
    const basic = /^Basic (.+)$/.exec(req.headers.get("authorization") ?? "");
    const [id, secret] = basic ? Buffer.from(basic[1]!, "base64").toString().split(":").map((p) => decodeURIComponent(p.replace(/\+/g, " "))) : [];
    if (id !== clientId || secret !== clientSecret) return done(oauthError(401, "unauthorized_client", "Missing valid authorization header"));
    if (grant === "authorization_code") {
      const code = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      if (!code) return done(oauthError(400, "invalid_request", "Value passed for the authorization code was invalid."));
      const verifier = form.get("code_verifier") ?? "";
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      if (challenge !== code.challenge || form.get("redirect_uri") !== code.redirectUri) {
        return done(oauthError(400, "invalid_request", "Value passed for the authorization code was invalid."));
      }
      return done(issue(user.id, code.scope, true));
    }
    if (grant === "refresh_token") {
      const presented = form.get("refresh_token") ?? "";
      const grantOf = refresh.get(presented);
      if (!grantOf) return done(oauthError(400, "invalid_request", "Value passed for the token was invalid."));
      refresh.delete(presented);
      spent.add(presented);
      return done(issue(grantOf.userId, grantOf.scope, !state.mode.refreshWithoutNewToken));
    }
    return done(oauthError(400, "unsupported_grant_type", "Grant type is not supported."));
  }

  function authorizePage(url: URL): Response {
    const p = url.searchParams;
    const scopes = (p.get("scope") ?? "").split(" ");
    const wrong =
      p.get("response_type") !== "code"
        ? "response_type must be code"
        : p.get("client_id") !== clientId
          ? "unknown client_id"
          : p.get("redirect_uri") !== registeredRedirect
            ? "redirect_uri is not the one registered"
            : p.get("code_challenge_method") !== "S256" || !p.get("code_challenge")
              ? "PKCE S256 is required"
              : !p.get("state")
                ? "state is required"
                : null;
    if (wrong) {
      state.violations.push(`authorize: ${wrong}`);
      return new Response(`<!doctype html><title>X</title><p>Something went wrong: ${escapeHtml(wrong)}</p>`, { status: 400, headers: { "content-type": "text/html" } });
    }
    const hidden = ["redirect_uri", "state", "code_challenge", "scope"].map((n) => `<input type="hidden" name="${n}" value="${escapeHtml(p.get(n) ?? "")}">`).join("");
    const html = `<!doctype html><html><head><title>Authorize app / X</title></head><body>
<h1>Seedcast wants to access your X account</h1>
<p>Signed in as @${escapeHtml(user.username)}. It will be able to: ${scopes.map(escapeHtml).join(", ")}</p>
<form method="post" action="/i/oauth2/authorize/decision">${hidden}<button name="decision" value="allow">Authorize app</button> <button name="decision" value="deny">Cancel</button></form>
</body></html>`;
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  }

  async function decision(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    const back = new URL(form.get("redirect_uri") ?? "");
    back.searchParams.set("state", form.get("state") ?? "");
    if (form.get("decision") === "allow") {
      const code = token("xac-");
      codes.set(code, { challenge: form.get("code_challenge") ?? "", redirectUri: form.get("redirect_uri") ?? "", scope: form.get("scope") ?? "" });
      back.searchParams.set("code", code);
    } else {
      back.searchParams.set("error", "access_denied");
    }
    return new Response(null, { status: 302, headers: { location: back.toString() } });
  }

  function caller(req: Request): { userId: string; scope: string } | null {
    const bearer = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "");
    return bearer ? (access.get(bearer[1]!) ?? null) : null;
  }

  async function jsonBody(req: Request, key: string): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; res: Response }> {
    let body: unknown;
    try {
      body = await req.json();
    } catch {
      state.violations.push(`${key}: body is not JSON`);
      return { ok: false, res: invalidRequest("One or more parameters to your request was invalid.", "Request body is not valid JSON") };
    }
    const fn = v.get(key)!;
    if (!fn(body)) {
      state.violations.push(`${key}: ${errorsText(fn)}`);
      return { ok: false, res: invalidRequest("One or more parameters to your request was invalid.", errorsText(fn)) };
    }
    return { ok: true, body: body as Record<string, unknown> };
  }

  async function createPost(req: Request, who: { userId: string }): Promise<Response> {
    const parsed = await jsonBody(req, "tweets.body");
    if (!parsed.ok) return parsed.res;
    const body = parsed.body as { text?: string; media?: { media_ids: string[] }; reply?: { in_reply_to_tweet_id: string } };
    const text = body.text ?? "";
    const mediaIds = body.media?.media_ids ?? [];
    if (text === "" && mediaIds.length === 0) return invalidRequest("One or more parameters to your request was invalid.", "text or media is required");
    if (!twitter.parseTweet(text).valid && text !== "") return problem(403, "Forbidden", "Your Tweet text is too long.");
    for (const id of mediaIds) if (!state.media.has(id)) return invalidRequest("One or more parameters to your request was invalid.", `Your media IDs are invalid.`);
    const parentId = body.reply?.in_reply_to_tweet_id ?? null;
    const parent = parentId ? state.posts.find((p) => p.id === parentId) : null;
    if (parentId && !parent) return problem(403, "Forbidden", "You attempted to reply to a Tweet that is deleted or not visible to you.");
    if (state.posts.some((p) => p.authorId === who.userId && p.text === text && text !== "")) {
      return problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.");
    }
    const half = state.mode.postLatencyMs / 2;
    if (half > 0) await Bun.sleep(half);
    const id = snowflake();
    state.posts.push({ id, text, authorId: who.userId, createdAt: new Date().toISOString(), mediaIds, inReplyTo: parentId, conversationId: parent ? parent.conversationId : id });
    if (half > 0) await Bun.sleep(half);
    if (state.mode.storeThenCut > 0) {
      state.mode.storeThenCut -= 1;
      return cutOffAnswer(201, '{"data":');
    }
    return answer("tweets.201", { data: { id, text, edit_history_post_ids: [id] } }, 201);
  }

  function userPosts(url: URL, userId: string): Response {
    const fn = v.get("userId")!;
    if (!fn(userId)) {
      state.violations.push(`users/{id}/tweets: id ${errorsText(fn)}`);
      return invalidRequest("One or more parameters to your request was invalid.", "id is not a user id");
    }
    for (const [name, raw] of url.searchParams) {
      const check = v.get(`q.${name}`);
      if (!check) {
        state.violations.push(`users/{id}/tweets: unknown query parameter ${name}`);
        return invalidRequest("One or more parameters to your request was invalid.", `The query parameter [${name}] is not one of [id,max_results,pagination_token,start_time,end_time,post.fields,…]`);
      }
      const value = name === "post.fields" ? raw.split(",") : name === "max_results" ? Number(raw) : raw;
      if (!check(value)) {
        state.violations.push(`users/{id}/tweets: ${name} ${errorsText(check)}`);
        return invalidRequest("One or more parameters to your request was invalid.", `${name}: ${errorsText(check)}`);
      }
    }
    const since = url.searchParams.get("start_time");
    const max = Number(url.searchParams.get("max_results") ?? "10");
    const fields = new Set((url.searchParams.get("post.fields") ?? "").split(","));
    const mine = state.posts
      .filter((p) => p.authorId === userId && (!since || p.createdAt >= since))
      .reverse()
      .slice(0, max);
    const data = mine.map((p) => {
      // X's text of a post with media ends with the media's t.co link.
      const text = p.mediaIds.length > 0 ? `${p.text} https://t.co/${p.id.slice(-10)}` : p.text;
      const out: Record<string, unknown> = { id: p.id, text: text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"), edit_history_post_ids: [p.id] };
      if (fields.has("created_at")) out.created_at = p.createdAt;
      if (fields.has("conversation_id")) out.conversation_id = p.conversationId;
      return out;
    });
    const body: Record<string, unknown> = { meta: { result_count: data.length } };
    if (data.length > 0) {
      body.data = data;
      (body.meta as Record<string, unknown>).newest_id = data[0]!.id;
      (body.meta as Record<string, unknown>).oldest_id = data.at(-1)!.id;
    }
    return answer("userPosts.200", body, 200);
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      state.requests.push(`${req.method} ${url.pathname}`);
      if (req.method === "GET" && url.pathname === "/i/oauth2/authorize") return authorizePage(url);
      if (req.method === "POST" && url.pathname === "/i/oauth2/authorize/decision") return decision(req);
      if (req.method === "POST" && url.pathname === "/2/oauth2/token") return tokenEndpoint(req);
      if (!url.pathname.startsWith("/2/")) return new Response("Not found", { status: 404 });
      const who = caller(req);
      if (!who) return problem(401, "Unauthorized", "Unauthorized");
      if (req.method === "GET" && url.pathname === "/2/users/me") {
        return answer("me.200", { data: { id: user.id, name: user.name, username: user.username } }, 200);
      }
      const postsOf = /^\/2\/users\/([^/]+)\/tweets$/.exec(url.pathname);
      if (req.method === "GET" && postsOf) return userPosts(url, decodeURIComponent(postsOf[1]!));
      if (req.method === "POST" && url.pathname === "/2/media/upload") {
        const parsed = await jsonBody(req, "upload.body");
        if (!parsed.ok) return parsed.res;
        const bytes = Buffer.from(String(parsed.body.media), "base64");
        if (bytes.length === 0) return invalidRequest("One or more parameters to your request was invalid.", "media is empty");
        if (bytes.length > 5 * 1024 * 1024) return invalidRequest("One or more parameters to your request was invalid.", "File size exceeds 5242880 bytes.");
        const id = snowflake();
        state.media.set(id, { id, size: bytes.length, category: String(parsed.body.media_category), altText: null });
        return answer("upload.200", { data: { id, media_key: `3_${id}`, size: bytes.length, expires_after_secs: 86400, image: { image_type: "image/jpeg", w: 1, h: 1 } } }, 200);
      }
      if (req.method === "POST" && url.pathname === "/2/media/metadata") {
        const parsed = await jsonBody(req, "metadata.body");
        if (!parsed.ok) return parsed.res;
        const id = String(parsed.body.id);
        const media = state.media.get(id);
        if (!media) return problem(404, "Not Found Error", "Could not find media.", "https://api.x.com/2/problems/resource-not-found");
        const alt = (parsed.body.metadata as { alt_text?: { text?: string } } | undefined)?.alt_text?.text;
        if (typeof alt === "string") media.altText = alt;
        return answer("metadata.200", { data: { id, associated_metadata: parsed.body.metadata ?? {} } }, 200);
      }
      if (req.method === "POST" && url.pathname === "/2/tweets") return createPost(req, who);
      return problem(404, "Not Found", "Not found");
    },
  });
  state.origin = `http://127.0.0.1:${server.port}`;
  return state;
}
