/**
 * A LinkedIn stand-in, written from LinkedIn's documentation pages (LinkedIn publishes no OpenAPI description), never
 * from Seedcast's client:
 * - Authorization code flow, https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow:
 *   `GET /oauth/v2/authorization` (`response_type=code`, `client_id`, `redirect_uri`, `state`, `scope` space-delimited)
 *   shows the member a page with Allow and Cancel; Allow redirects to `redirect_uri?code=…&state=…`, Cancel to
 *   `redirect_uri?error=user_cancelled_authorize&error_description=…&state=…`. `POST /oauth/v2/accessToken`
 *   (form: `grant_type=authorization_code`, `code`, `client_id`, `client_secret`, `redirect_uri`) answers
 *   `{access_token, expires_in: 5184000 (60 days), scope, token_type, id_token}`; no refresh token for ordinary apps.
 *   A code is single use and lives 30 minutes; a bad one answers 400 `invalid_request` ("Unable to retrieve access
 *   token: appid/redirect uri/code verifier does not match authorization code. Or authorization code expired.");
 *   a wrong client secret 401 `invalid_client`.
 * - userinfo, https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2:
 *   `GET /v2/userinfo` → `{sub, name, given_name, family_name, picture, locale}`; a bad token 401
 *   `{serviceErrorCode: 65600, code: "INVALID_ACCESS_TOKEN", message: "Invalid access token", status: 401}`.
 * - Versioning, https://learn.microsoft.com/en-us/linkedin/marketing/versioning: every `/rest/` call carries
 *   `LinkedIn-Version: YYYYMM` (missing → 400 `VERSION_MISSING`; a sunset version → 426 `NONEXISTENT_VERSION`) and
 *   `X-Restli-Protocol-Version: 2.0.0`.
 * - Images API, https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api:
 *   `POST /rest/images?action=initializeUpload` `{initializeUploadRequest: {owner}}` →
 *   `{value: {uploadUrlExpiresAt, uploadUrl, image: "urn:li:image:…"}}`; the bytes are PUT to `uploadUrl` (201).
 * - Posts API, https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api and
 *   MultiImage, https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/multiimage-post-api:
 *   `POST /rest/posts` (author, commentary, visibility, distribution, lifecycleState, `content.media {id, altText}` or
 *   `content.multiImage.images` 2–20) → 201 with the post's urn in `x-restli-id`; `GET /rest/posts?q=author&author=…`
 *   → `{elements, paging}`. altText at most 4,086 characters; images must be uploaded before they are used.
 * - Comments, https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api:
 *   `POST /rest/socialActions/{postUrn}/comments` `{actor, object, message: {text}}` → 201 with the Comment (and its
 *   urn in `x-restli-id`); `GET` the same path → `{elements, paging}`.
 * Errors are LinkedIn's shape: `{status, serviceErrorCode?, code?, message}`.
 */
import { randomBytes } from "node:crypto";
import { cutOffAnswer, escapeHtml } from "../stand-in-kit";

const SIXTY_DAYS_S = 60 * 24 * 60 * 60;
const CODE_TTL_MS = 30 * 60 * 1000;
const MAX_ALT_TEXT = 4086;

/** The one member who signs in here. */
export const LINKEDIN_MEMBER = { sub: "782bbtaQ", name: "Ada Harbour", given_name: "Ada", family_name: "Harbour" };

/** A post the stand-in stored. */
export interface StoredLinkedInPost {
  id: string;
  author: string;
  commentary: string;
  images: { id: string; altText: string | null; bytes: number; contentType: string }[];
  createdAt: number;
  linkedinVersion: string;
}

/** A comment the stand-in stored. */
export interface StoredLinkedInComment {
  id: string;
  actor: string;
  object: string;
  text: string;
}

/** What the stand-in does with the next calls. */
export interface LinkedInMode {
  /** Store the next N posts/comments, then cut the answer off (the client cannot know they were stored). */
  storeThenCut: number;
  /** Latency of every post/comment, half before it is stored and half after (a kill lands on either side). */
  latencyMs: number;
  /** Versions answered 426 (sunset). */
  sunsetVersions: Set<string>;
}

export interface LinkedInStandIn {
  origin: string;
  clientId: string;
  clientSecret: string;
  posts: StoredLinkedInPost[];
  comments: StoredLinkedInComment[];
  tokenRequests: { grantType: string; status: number; error: string | null }[];
  authorizeRequests: URLSearchParams[];
  /** Requests that broke the documented contract (missing headers, bad bodies): must stay empty. */
  violations: string[];
  mode: LinkedInMode;
  /** Issues a token directly (tests that skip the sign-in). */
  issueToken(): string;
  stop(): Promise<void>;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

function restError(status: number, message: string, code?: string): Response {
  return json(status, code ? { status, code, message } : { status, message });
}

/** Starts the stand-in on 127.0.0.1 (a free port). `now` is the test's clock. */
export function startLinkedInStandIn(opts: { now: () => number }): LinkedInStandIn {
  const clientId = "86seedcastlinkedin";
  const clientSecret = `WPL_AP1.${randomBytes(12).toString("hex")}`;
  const codes = new Map<string, { redirectUri: string; scope: string; expiresAt: number }>();
  const tokens = new Map<string, number>(); // token → expiresAt
  const images = new Map<string, { owner: string; uploadToken: string; bytes: number; contentType: string } | null>();
  const uploads = new Map<string, string>(); // upload token → image urn
  let seq = 7_100_000_000_000_000_000n;
  const nextId = () => (seq += 1n).toString();
  const member = `urn:li:person:${LINKEDIN_MEMBER.sub}`;

  const state: Omit<LinkedInStandIn, "origin" | "stop"> = {
    clientId,
    clientSecret,
    posts: [],
    comments: [],
    tokenRequests: [],
    authorizeRequests: [],
    violations: [],
    mode: { storeThenCut: 0, latencyMs: 0, sunsetVersions: new Set() },
    issueToken() {
      const token = `AQV${randomBytes(24).toString("base64url")}`;
      tokens.set(token, opts.now() + SIXTY_DAYS_S * 1000);
      return token;
    },
  };

  const bearer = (req: Request): boolean => {
    const token = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    const expiresAt = tokens.get(token);
    return expiresAt !== undefined && expiresAt > opts.now();
  };

  /** The versioned-API headers; a Response when they are wrong. */
  const versioned = (req: Request): Response | null => {
    const version = req.headers.get("linkedin-version");
    if (!version) {
      state.violations.push(`${req.method} ${new URL(req.url).pathname}: no LinkedIn-Version`);
      return restError(400, "A version must be present. Please specify a version by adding the LinkedIn-Version header.", "VERSION_MISSING");
    }
    if (!/^\d{6}$/.test(version)) {
      state.violations.push(`LinkedIn-Version ${version} is not YYYYMM`);
      return restError(400, `Requested version ${version} is not valid`, "INVALID_VERSION");
    }
    if (state.mode.sunsetVersions.has(version)) return restError(426, `Requested version ${version} is not active`, "NONEXISTENT_VERSION");
    if (req.headers.get("x-restli-protocol-version") !== "2.0.0") state.violations.push("X-Restli-Protocol-Version is not 2.0.0");
    if (!bearer(req)) return json(401, { serviceErrorCode: 65600, code: "INVALID_ACCESS_TOKEN", message: "Invalid access token", status: 401 });
    return null;
  };

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Stores via `store`, then answers, or cuts the answer off when the mode says so. */
  async function storeAndAnswer(store: () => Response): Promise<Response> {
    if (state.mode.latencyMs > 0) await sleep(state.mode.latencyMs / 2);
    const answer = store();
    if (state.mode.latencyMs > 0) await sleep(state.mode.latencyMs / 2);
    if (state.mode.storeThenCut > 0) {
      state.mode.storeThenCut--;
      // The answer is lost: its body ends long before the length it announced.
      return cutOffAnswer(201);
    }
    return answer;
  }

  function authorizePage(q: URLSearchParams): Response {
    state.authorizeRequests.push(q);
    if (q.get("client_id") !== clientId) return new Response("The passed in client_id is invalid", { status: 400 });
    if (q.get("response_type") !== "code") return new Response("Invalid response_type", { status: 400 });
    const scopes = (q.get("scope") ?? "").split(" ").filter(Boolean);
    for (const s of scopes) if (!["openid", "profile", "email", "w_member_social"].includes(s)) return new Response(`Scope "${s}" is not authorized for your application`, { status: 400 });
    const hidden = [...q].map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join("");
    return new Response(
      `<!doctype html><html lang="en"><head><title>LinkedIn</title></head><body><main><h1>Seedcast would like to:</h1>
<ul>${scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join("")}</ul><p>Signed in as ${escapeHtml(LINKEDIN_MEMBER.name)}</p>
<form method="post" action="/oauth/v2/authorization">${hidden}<input type="hidden" name="decision" value="allow"><button type="submit">Allow</button></form>
<form method="post" action="/oauth/v2/authorization">${hidden}<input type="hidden" name="decision" value="cancel"><button type="submit">Cancel</button></form>
</main></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  }

  function authorizeAnswer(form: URLSearchParams): Response {
    const redirect = new URL(form.get("redirect_uri") ?? "");
    const st = form.get("state");
    if (form.get("decision") === "allow") {
      const code = randomBytes(24).toString("base64url");
      codes.set(code, { redirectUri: form.get("redirect_uri") ?? "", scope: form.get("scope") ?? "", expiresAt: opts.now() + CODE_TTL_MS });
      redirect.searchParams.set("code", code);
    } else {
      redirect.searchParams.set("error", "user_cancelled_authorize");
      redirect.searchParams.set("error_description", "The user cancelled the authorization");
    }
    if (st !== null) redirect.searchParams.set("state", st);
    return new Response(null, { status: 302, headers: { location: redirect.toString() } });
  }

  function token(form: URLSearchParams): Response {
    const grantType = form.get("grant_type") ?? "";
    const done = (status: number, body: Record<string, unknown>) => {
      state.tokenRequests.push({ grantType, status, error: typeof body.error === "string" ? body.error : null });
      return json(status, body);
    };
    if (form.get("client_id") !== clientId || form.get("client_secret") !== clientSecret) {
      return done(401, { error: "invalid_client", error_description: "Client authentication failed" });
    }
    if (grantType !== "authorization_code") return done(400, { error: "unsupported_grant_type", error_description: "Refresh tokens are only issued to approved partners" });
    const code = codes.get(form.get("code") ?? "");
    codes.delete(form.get("code") ?? "");
    if (!code || code.expiresAt < opts.now() || code.redirectUri !== form.get("redirect_uri")) {
      return done(400, {
        error: "invalid_request",
        error_description: "Unable to retrieve access token: appid/redirect uri/code verifier does not match authorization code. Or authorization code expired. Or external member binding exists",
      });
    }
    const access = state.issueToken();
    return done(200, { access_token: access, expires_in: SIXTY_DAYS_S, scope: code.scope.split(" ").join(","), token_type: "Bearer", id_token: "eyJ.stand-in.jwt" });
  }

  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === "/oauth/v2/authorization" && req.method === "GET") return authorizePage(url.searchParams);
    if (path === "/oauth/v2/authorization" && req.method === "POST") return authorizeAnswer(new URLSearchParams(await req.text()));
    if (path === "/oauth/v2/accessToken" && req.method === "POST") {
      if (!(req.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) state.violations.push("accessToken body is not form-encoded");
      return token(new URLSearchParams(await req.text()));
    }
    if (path === "/v2/userinfo" && req.method === "GET") {
      if (!bearer(req)) return json(401, { serviceErrorCode: 65600, code: "INVALID_ACCESS_TOKEN", message: "Invalid access token", status: 401 });
      return json(200, { ...LINKEDIN_MEMBER, picture: "https://media.licdn.com/dms/image/stand-in", locale: { country: "US", language: "en" } });
    }
    if (path.startsWith("/dms-uploads/") && req.method === "PUT") {
      const urn = uploads.get(path.slice("/dms-uploads/".length));
      if (!urn || !bearer(req)) return restError(401, "Invalid upload");
      const bytes = new Uint8Array(await req.arrayBuffer());
      const contentType = req.headers.get("content-type") ?? "";
      if (!["image/jpeg", "image/png", "image/gif"].includes(contentType)) state.violations.push(`image upload of type ${contentType}`);
      images.set(urn, { owner: member, uploadToken: "", bytes: bytes.byteLength, contentType });
      return new Response(null, { status: 201 });
    }
    if (!path.startsWith("/rest/")) return restError(404, `No virtual resource found`, "RESOURCE_NOT_FOUND");
    const refused = versioned(req);
    if (refused) return refused;
    const version = req.headers.get("linkedin-version") ?? "";

    if (path === "/rest/images" && req.method === "POST" && url.searchParams.get("action") === "initializeUpload") {
      const body = (await req.json().catch(() => null)) as { initializeUploadRequest?: { owner?: unknown } } | null;
      if (body?.initializeUploadRequest?.owner !== member) {
        state.violations.push(`initializeUpload owner ${String(body?.initializeUploadRequest?.owner)}`);
        return restError(403, "Not enough permissions to access: images.CREATE", "ACCESS_DENIED");
      }
      const urn = `urn:li:image:D4E10AQ${randomBytes(8).toString("hex")}`;
      const uploadToken = randomBytes(12).toString("hex");
      uploads.set(uploadToken, urn);
      images.set(urn, null);
      return json(200, { value: { uploadUrlExpiresAt: opts.now() + 3_600_000, uploadUrl: `https://www.linkedin.com/dms-uploads/${uploadToken}`, image: urn } });
    }

    if (path === "/rest/posts" && req.method === "POST") {
      const body = (await req.json().catch(() => null)) as Record<string, unknown> | null;
      const problems: string[] = [];
      if (!body) return restError(400, "Invalid JSON");
      if (body.author !== member) problems.push("author is not the member");
      if (typeof body.commentary !== "string") problems.push("commentary missing");
      if (!["PUBLIC", "CONNECTIONS", "LOGGED_IN"].includes(String(body.visibility))) problems.push("visibility");
      if (body.lifecycleState !== "PUBLISHED") problems.push("lifecycleState");
      const dist = body.distribution as { feedDistribution?: unknown } | undefined;
      if (dist?.feedDistribution !== "MAIN_FEED") problems.push("distribution.feedDistribution");
      const content = body.content as { media?: { id?: unknown; altText?: unknown }; multiImage?: { images?: { id?: unknown; altText?: unknown }[] } } | undefined;
      const used = content?.media ? [content.media] : (content?.multiImage?.images ?? []);
      if (content?.multiImage && (used.length < 2 || used.length > 20)) problems.push("multiImage takes 2 to 20 images");
      const stored: StoredLinkedInPost["images"] = [];
      for (const image of used) {
        const kept = typeof image.id === "string" ? images.get(image.id) : undefined;
        if (!kept) problems.push(`image ${String(image.id)} was not uploaded`);
        if (image.altText !== undefined && (typeof image.altText !== "string" || image.altText.length > MAX_ALT_TEXT)) problems.push("altText");
        stored.push({ id: String(image.id), altText: typeof image.altText === "string" ? image.altText : null, bytes: kept?.bytes ?? 0, contentType: kept?.contentType ?? "" });
      }
      if (problems.length > 0) {
        state.violations.push(...problems.map((p) => `POST /rest/posts: ${p}`));
        return restError(422, problems.join("; "), "UNPROCESSABLE_ENTITY");
      }
      return storeAndAnswer(() => {
        const id = `urn:li:share:${nextId()}`;
        state.posts.push({ id, author: member, commentary: body.commentary as string, images: stored, createdAt: opts.now(), linkedinVersion: version });
        return new Response(null, { status: 201, headers: { "x-restli-id": id } });
      });
    }

    if (path === "/rest/posts" && req.method === "GET") {
      if (url.searchParams.get("q") !== "author" || url.searchParams.get("author") !== member) return restError(400, "q=author with the member's urn expected");
      const elements = [...state.posts].reverse().map((p) => ({ id: p.id, author: p.author, commentary: p.commentary, createdAt: p.createdAt, lastModifiedAt: p.createdAt, lifecycleState: "PUBLISHED", visibility: "PUBLIC" }));
      return json(200, { elements, paging: { start: 0, count: elements.length, links: [] } });
    }

    const comments = /^\/rest\/socialActions\/([^/]+)\/comments$/.exec(path);
    if (comments) {
      const postUrn = decodeURIComponent(comments[1]!);
      if (!state.posts.some((p) => p.id === postUrn)) return restError(404, `${postUrn} does not exist`, "NOT_FOUND");
      if (req.method === "GET") {
        const elements = state.comments.filter((c) => c.object === postUrn).map((c) => ({ actor: c.actor, object: c.object, message: { text: c.text }, commentUrn: c.id, $URN: c.id }));
        return json(200, { elements, paging: { start: 0, count: elements.length } });
      }
      if (req.method === "POST") {
        const body = (await req.json().catch(() => null)) as { actor?: unknown; object?: unknown; message?: { text?: unknown } } | null;
        if (body?.actor !== member || body.object !== postUrn || typeof body.message?.text !== "string") {
          state.violations.push("POST comments: actor/object/message.text");
          return restError(422, "actor, object and message.text are required", "UNPROCESSABLE_ENTITY");
        }
        const text = body.message.text;
        return storeAndAnswer(() => {
          const id = `urn:li:comment:(${postUrn},${nextId()})`;
          state.comments.push({ id, actor: member, object: postUrn, text });
          return json(201, { actor: member, object: postUrn, message: { text }, commentUrn: id, $URN: id, created: { actor: member, time: opts.now() } }, { "x-restli-id": id });
        });
      }
    }
    return restError(404, "No virtual resource found", "RESOURCE_NOT_FOUND");
  }

  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: route });
  return Object.assign(state, {
    origin: `http://127.0.0.1:${server.port}`,
    async stop() {
      await server.stop(true);
    },
  });
}
