/**
 * A Facebook stand-in (Facebook Login and the Pages API), written from Meta's documentation pages, never from
 * Seedcast's client. It serves www.facebook.com and graph.facebook.com (tests point both at it with
 * PLATFORM_ORIGIN_OVERRIDES):
 *  - Facebook Login, manual flow: https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 *    (`GET /<v>/dialog/oauth?client_id&redirect_uri&state&scope=a,b&response_type=code`; back with `code`, or with
 *    `error=access_denied&error_code=200&error_description=Permissions+error&error_reason=user_denied`;
 *    `GET /<v>/oauth/access_token?client_id&redirect_uri&client_secret&code` → `{access_token, token_type,
 *    expires_in}`; a code is good once, a bad one answers code 100 subcode 36007) and long-lived tokens
 *    (https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived:
 *    `grant_type=fb_exchange_token&fb_exchange_token=…`; the Page tokens got with a long-lived user token do not
 *    expire).
 *  - Pages: https://developers.facebook.com/docs/pages-api/getting-started (`GET /me/accounts` with `id, name,
 *    access_token, tasks`), https://developers.facebook.com/docs/pages-api/posts (`POST /<page>/feed` with `message`,
 *    `attached_media[i]`, `published=false` + `scheduled_publish_time` 10 minutes to 75 days ahead;
 *    `GET /<page>/feed`, `GET /<page>/scheduled_posts`, `DELETE /<post>`, `GET /<post>?fields=is_published,permalink_url`),
 *    https://developers.facebook.com/docs/graph-api/reference/page/photos (`POST /<page>/photos` multipart `source`,
 *    `published`, `temporary`, `alt_text_custom`), comments (`POST /<object>/comments` with `message`).
 *  - Errors: https://developers.facebook.com/docs/graph-api/guides/error-handling (`{error: {message, type, code,
 *    error_subcode, fbtrace_id}}`; 190 for a bad token; 100 for an object that does not exist).
 * Parameters a page does not describe are recorded in `violations`. A held post is published by `publishDue(now)`.
 */
import { randomBytes } from "node:crypto";
import { cutOffAnswer, escapeHtml, graphError, graphIds } from "../stand-in-kit";

/** A Page the person manages. */
export interface FbPage {
  id: string;
  name: string;
  token: string;
}

/** A photo as uploaded. */
export interface FbPhoto {
  id: string;
  pageId: string;
  type: string;
  size: number;
  published: boolean;
  temporary: boolean;
  altText: string | null;
}

/** A post of a Page. */
export interface FbPost {
  id: string;
  pageId: string;
  message: string;
  photoIds: string[];
  /** Unix seconds when Facebook holds it; null when it went out at once. */
  scheduledAt: number | null;
  published: boolean;
  deleted: boolean;
  comments: { id: string; message: string }[];
}

/** What the stand-in does with the next requests. */
export interface FbMode {
  tokenUnavailable: number;
  /** POST /<page>/feed: store, then cut the answer off this many times. */
  feedThenCut: number;
  /** Latency of each feed post, half before storing and half after. */
  feedLatencyMs: number;
}

/** A running stand-in. */
export interface FacebookStandIn {
  origin: string;
  overrides: string;
  clientId: string;
  clientSecret: string;
  user: { id: string; name: string };
  pages: FbPage[];
  photos: Map<string, FbPhoto>;
  posts: FbPost[];
  violations: string[];
  requests: string[];
  mode: FbMode;
  /** Publishes the held posts whose time has come (Facebook's side of scheduling). */
  publishDue(nowMs: number): void;
  /** The person removes the app: every token stops working. */
  revokeAll(): void;
  stop(): Promise<void>;
}

const fbId = graphIds(100_000_000_000_000n);

/** Starts the stand-in on 127.0.0.1 with the person's Pages. `now` is the test's clock (for scheduling bounds). */
export function startFacebookStandIn(opts: { redirectUri: string; pages: string[]; now: () => number }): FacebookStandIn {
  const clientId = String(2_000_000_000_000_000 + Math.floor(Math.random() * 1e9));
  const clientSecret = randomBytes(16).toString("hex");
  const user = { id: "10160000000000001", name: "Anna Baker" };
  const codes = new Map<string, { redirectUri: string; scope: string }>();
  const userTokens = new Map<string, { longLived: boolean }>();
  const pages: FbPage[] = opts.pages.map((name) => ({ id: fbId(), name, token: `EAAP${randomBytes(24).toString("base64url")}` }));
  const state: FacebookStandIn = {
    origin: "",
    overrides: "",
    clientId,
    clientSecret,
    user,
    pages,
    photos: new Map(),
    posts: [],
    violations: [],
    requests: [],
    mode: { tokenUnavailable: 0, feedThenCut: 0, feedLatencyMs: 0 },
    publishDue(nowMs) {
      for (const p of state.posts) if (!p.published && !p.deleted && p.scheduledAt !== null && p.scheduledAt * 1000 <= nowMs) p.published = true;
    },
    revokeAll() {
      userTokens.clear();
      for (const p of pages) p.token = `revoked-${p.token}`;
    },
    stop: async () => {
      await server.stop(true);
    },
  };

  const only = (where: string, params: URLSearchParams, allowed: readonly string[], required: readonly string[]) => {
    for (const name of params.keys()) if (!allowed.includes(name) && !/^attached_media\[\d+\]$/.test(name)) state.violations.push(`${where}: unknown parameter ${name}`);
    for (const name of required) if (!params.get(name)) state.violations.push(`${where}: missing ${name}`);
  };

  function dialog(url: URL): Response {
    const p = url.searchParams;
    only("dialog/oauth", p, ["client_id", "redirect_uri", "state", "scope", "response_type"], ["client_id", "redirect_uri", "state"]);
    if (p.get("client_id") !== clientId || p.get("redirect_uri") !== opts.redirectUri) {
      state.violations.push("dialog/oauth: unknown app or redirect_uri");
      return new Response("<!doctype html><p>URL blocked: This redirect failed because the redirect URI is not whitelisted.</p>", { status: 400, headers: { "content-type": "text/html" } });
    }
    const scopes = (p.get("scope") ?? "").split(",");
    for (const s of scopes) if (!["pages_show_list", "pages_manage_posts", "pages_read_engagement"].includes(s)) state.violations.push(`dialog/oauth: unexpected scope ${s}`);
    const hidden = ["redirect_uri", "state", "scope"].map((n) => `<input type="hidden" name="${n}" value="${escapeHtml(p.get(n) ?? "")}">`).join("");
    return new Response(
      `<!doctype html><html lang="en"><head><title>Facebook</title></head><body><h1>Seedcast is requesting access to your Pages</h1>
<p>Continue as ${escapeHtml(user.name)}? Seedcast will receive: ${scopes.map(escapeHtml).join(", ")}</p>
<form method="post" action="/dialog/oauth/decision">${hidden}<button name="decision" value="allow">Continue as ${escapeHtml(user.name.split(" ")[0] ?? "")}</button> <button name="decision" value="deny">Cancel</button></form></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  }

  async function decision(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    const back = new URL(form.get("redirect_uri") ?? "");
    if (form.get("decision") === "allow") {
      const code = `AQ${randomBytes(30).toString("base64url")}`;
      codes.set(code, { redirectUri: form.get("redirect_uri") ?? "", scope: form.get("scope") ?? "" });
      back.searchParams.set("code", code);
    } else {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_code", "200");
      back.searchParams.set("error_description", "Permissions error");
      back.searchParams.set("error_reason", "user_denied");
    }
    back.searchParams.set("state", form.get("state") ?? "");
    return new Response(null, { status: 302, headers: { location: `${back}#_=_` } });
  }

  function accessToken(url: URL): Response {
    const p = url.searchParams;
    if (state.mode.tokenUnavailable > 0) {
      state.mode.tokenUnavailable -= 1;
      return graphError("GraphMethodException", 503, "An unexpected error has occurred. Please retry your request later.", 2);
    }
    if (p.get("grant_type") === "fb_exchange_token") {
      only("oauth/access_token (exchange)", p, ["grant_type", "client_id", "client_secret", "fb_exchange_token"], ["client_id", "client_secret", "fb_exchange_token"]);
      if (p.get("client_secret") !== clientSecret) return graphError("GraphMethodException", 400, "Error validating client secret.", 1, 463);
      if (!userTokens.has(p.get("fb_exchange_token") ?? "")) return graphError("GraphMethodException", 400, "Invalid OAuth access token.", 190);
      const t = `EAAL${randomBytes(30).toString("base64url")}`;
      userTokens.set(t, { longLived: true });
      return Response.json({ access_token: t, token_type: "bearer", expires_in: 5_184_000 });
    }
    only("oauth/access_token", p, ["client_id", "client_secret", "redirect_uri", "code"], ["client_id", "client_secret", "redirect_uri", "code"]);
    const code = codes.get(p.get("code") ?? "");
    codes.delete(p.get("code") ?? "");
    if (p.get("client_id") !== clientId || p.get("client_secret") !== clientSecret) return graphError("GraphMethodException", 400, "Error validating client secret.", 1);
    if (!code || code.redirectUri !== p.get("redirect_uri")) return graphError("GraphMethodException", 400, "This authorization code has been used.", 100, 36009);
    const t = `EAAS${randomBytes(24).toString("base64url")}`;
    userTokens.set(t, { longLived: false });
    return Response.json({ access_token: t, token_type: "bearer", expires_in: 5_183_944 });
  }

  const pageOfToken = (t: string) => pages.find((p) => p.token === t) ?? null;

  async function photos(req: Request, page: FbPage): Promise<Response> {
    const form = await req.formData();
    const names = [...form.keys()];
    for (const n of names) if (!["access_token", "source", "published", "temporary", "alt_text_custom", "caption", "url"].includes(n)) state.violations.push(`photos: unknown parameter ${n}`);
    const source = form.get("source");
    if (!(source instanceof Blob)) return graphError("GraphMethodException", 400, "(#324) Requires upload file", 324);
    const type = source.type;
    if (!["image/jpeg", "image/png", "image/gif", "image/bmp", "image/tiff"].includes(type)) return graphError("GraphMethodException", 400, "(#324) Missing or invalid image file", 324);
    const id = fbId();
    state.photos.set(id, {
      id,
      pageId: page.id,
      type,
      size: source.size,
      published: form.get("published") !== "false",
      temporary: form.get("temporary") === "true",
      altText: typeof form.get("alt_text_custom") === "string" ? (form.get("alt_text_custom") as string) : null,
    });
    return Response.json({ id });
  }

  async function feed(req: Request, page: FbPage): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    form.delete("access_token");
    only("feed", form, ["message", "published", "scheduled_publish_time", "link"], []);
    const photoIds: string[] = [];
    for (const [k, v] of form) {
      if (!/^attached_media\[\d+\]$/.test(k)) continue;
      let fbid: unknown;
      try {
        fbid = (JSON.parse(v) as { media_fbid?: unknown }).media_fbid;
      } catch {
        return graphError("GraphMethodException", 400, "(#100) param attached_media must be an array of objects with media_fbid", 100);
      }
      const photo = typeof fbid === "string" ? state.photos.get(fbid) : undefined;
      if (!photo || photo.pageId !== page.id || photo.published) return graphError("GraphMethodException", 400, "(#100) param attached_media[0] has invalid media_fbid", 100);
      photoIds.push(fbid as string);
    }
    let scheduledAt: number | null = null;
    if (form.get("scheduled_publish_time")) {
      scheduledAt = Number(form.get("scheduled_publish_time"));
      const ahead = scheduledAt * 1000 - opts.now();
      if (form.get("published") !== "false") return graphError("GraphMethodException", 400, "(#100) You cannot specify a scheduled publish time on a published post", 100);
      if (ahead < 10 * 60 * 1000 || ahead > 75 * 24 * 60 * 60 * 1000) return graphError("GraphMethodException", 400, "(#100) The specified scheduled publish time is invalid.", 100);
      for (const id of photoIds) if (!state.photos.get(id)!.temporary) return graphError("GraphMethodException", 400, "(#100) Photos attached to a scheduled post must be uploaded with temporary=true", 100);
    }
    if (!form.get("message") && photoIds.length === 0) return graphError("GraphMethodException", 400, "(#100) Missing message or attachment", 100);
    const half = state.mode.feedLatencyMs / 2;
    if (half > 0) await Bun.sleep(half);
    const id = `${page.id}_${fbId()}`;
    state.posts.push({ id, pageId: page.id, message: form.get("message") ?? "", photoIds, scheduledAt, published: scheduledAt === null, deleted: false, comments: [] });
    if (half > 0) await Bun.sleep(half);
    if (state.mode.feedThenCut > 0) {
      state.mode.feedThenCut -= 1;
      return cutOffAnswer(200, '{"id":"');
    }
    return Response.json({ id });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      state.requests.push(`${req.method} ${url.pathname}`);
      const versioned = /^\/v\d+\.\d+(\/.*)$/.exec(url.pathname);
      const path = versioned ? versioned[1]! : url.pathname;
      if (req.method === "GET" && path === "/dialog/oauth") return dialog(url);
      if (req.method === "POST" && path === "/dialog/oauth/decision") return decision(req);
      if (req.method === "GET" && path === "/oauth/access_token") return accessToken(url);
      if (!versioned) return new Response("Not found", { status: 404 });
      let token = url.searchParams.get("access_token") ?? "";
      const isMultipart = (req.headers.get("content-type") ?? "").startsWith("multipart/form-data");
      if (!token && req.method === "POST" && !isMultipart) token = new URLSearchParams(await req.clone().text()).get("access_token") ?? "";
      if (!token && isMultipart) token = String((await req.clone().formData()).get("access_token") ?? "");
      const userToken = userTokens.get(token);
      const pageToken = pageOfToken(token);
      if (!userToken && !pageToken) return graphError("GraphMethodException", 400, "Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.", 190, 460);
      if (path === "/me" && req.method === "GET") return Response.json(userToken ? { id: user.id, name: user.name } : { id: pageToken!.id, name: pageToken!.name });
      if (path === "/me/accounts" && req.method === "GET") {
        if (!userToken) return graphError("GraphMethodException", 400, "(#100) Tried accessing nonexisting field (accounts)", 100);
        return Response.json({ data: pages.map((p) => ({ id: p.id, name: p.name, access_token: p.token, category: "Bakery", tasks: ["ADVERTISE", "ANALYZE", "CREATE_CONTENT", "MESSAGING", "MODERATE", "MANAGE"] })), paging: { cursors: { before: "b", after: "a" } } });
      }
      const edge = /^\/([^/]+)\/(photos|feed|scheduled_posts|comments)$/.exec(path);
      if (edge) {
        const [, objectId, kind] = edge as unknown as [string, string, string];
        if (kind === "comments") {
          const post = state.posts.find((p) => p.id === objectId && !p.deleted);
          if (!post) return graphError("GraphMethodException", 400, `(#100) Unsupported ${req.method.toLowerCase()} request. Object with ID '${objectId}' does not exist`, 100, 33);
          if (req.method === "GET") return Response.json({ data: post.comments.map((c) => ({ id: c.id, message: c.message, created_time: new Date().toISOString() })) });
          if (!post.published) return graphError("GraphMethodException", 400, "(#100) Cannot comment on an unpublished post", 100);
          const form = new URLSearchParams(await req.text());
          form.delete("access_token");
          only("comments", form, ["message", "attachment_url"], ["message"]);
          const comment = { id: `${post.id.split("_")[1]}_${fbId()}`, message: form.get("message") ?? "" };
          post.comments.push(comment);
          return Response.json({ id: comment.id });
        }
        const page = pageToken && pageToken.id === objectId ? pageToken : null;
        if (!page) return graphError("GraphMethodException", 403, "(#200) The user hasn't authorized the application to perform this action", 200);
        if (kind === "photos" && req.method === "POST") return photos(req, page);
        if (kind === "feed" && req.method === "POST") return feed(req, page);
        if (kind === "feed" && req.method === "GET") {
          const data = state.posts.filter((p) => p.pageId === page.id && p.published && !p.deleted).reverse().map((p) => ({ id: p.id, message: p.message, created_time: new Date().toISOString() }));
          return Response.json({ data });
        }
        if (kind === "scheduled_posts" && req.method === "GET") {
          const data = state.posts.filter((p) => p.pageId === page.id && !p.published && !p.deleted).map((p) => ({ id: p.id, message: p.message, scheduled_publish_time: p.scheduledAt }));
          return Response.json({ data });
        }
      }
      const single = /^\/([^/]+)$/.exec(path);
      if (single) {
        const id = single[1]!;
        const page = pages.find((p) => p.id === id);
        if (page && req.method === "GET") return pageToken?.id === page.id || userToken ? Response.json({ id: page.id, name: page.name }) : graphError("GraphMethodException", 403, "(#200) Permissions error", 200);
        const post = state.posts.find((p) => p.id === id && !p.deleted);
        if (!post) return graphError("GraphMethodException", 400, `Unsupported ${req.method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`, 100, 33);
        if (req.method === "DELETE") {
          post.deleted = true;
          return Response.json({ success: true });
        }
        return Response.json({ id: post.id, is_published: post.published, permalink_url: `https://www.facebook.com/${post.pageId}/posts/${post.id.split("_")[1]}` });
      }
      return graphError("GraphMethodException", 400, "Unknown path components", 2500);
    },
  });
  state.origin = `http://127.0.0.1:${server.port}`;
  state.overrides = ["www.facebook.com", "graph.facebook.com"].map((h) => `${h}=${state.origin}`).join(",");
  return state;
}
