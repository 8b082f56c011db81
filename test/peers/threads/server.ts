/**
 * A Threads stand-in, written from Meta's Threads API documentation pages, never from Seedcast's client. It serves
 * threads.net and graph.threads.net (tests point both at it with PLATFORM_ORIGIN_OVERRIDES):
 *  - Sign-in: https://developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions
 *    (`GET https://threads.net/oauth/authorize?client_id&redirect_uri&scope=a,b&response_type=code&state`; back with
 *    `code`, or `error=access_denied&error_reason=user_denied`; `POST https://graph.threads.net/oauth/access_token`
 *    with client_id, client_secret, code, grant_type=authorization_code, redirect_uri → `{access_token, user_id}`)
 *    and https://developers.facebook.com/docs/threads/get-started/long-lived-tokens (`GET /access_token?
 *    grant_type=th_exchange_token&client_secret&access_token`, `GET /refresh_access_token?grant_type=th_refresh_token
 *    &access_token` → `{access_token, token_type, expires_in}`).
 *  - Posts: https://developers.facebook.com/docs/threads/posts (`POST /v1.0/<user>/threads` with `media_type` TEXT,
 *    IMAGE, CAROUSEL, `text` up to 500 characters, `image_url`, `alt_text`, `is_carousel_item`, `children`;
 *    `POST /v1.0/<user>/threads_publish` with `creation_id`), https://developers.facebook.com/docs/threads/troubleshooting
 *    (`GET /v1.0/<container>?fields=status,error_message`: IN_PROGRESS, FINISHED, ERROR, EXPIRED, PUBLISHED),
 *    https://developers.facebook.com/docs/threads/reply-management (`reply_to_id`, `GET /v1.0/<media>/replies`),
 *    https://developers.facebook.com/docs/threads/threads-media (`GET /v1.0/<user>/threads`, `permalink`).
 *  - Errors: Graph errors (`{error: {message, type, code, error_subcode, fbtrace_id}}`; 190 for a bad token).
 * Threads fetches each `image_url` itself (JPEG or PNG). Parameters a page does not describe go to `violations`.
 */
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { escapeHtml, graphError, graphIds } from "../stand-in-kit";

export const THREADS_LONG_LIVED_SECONDS = 5_184_000;

/** A container as kept. */
export interface ThContainer {
  id: string;
  mediaType: string;
  text: string | null;
  imageUrl: string | null;
  altText: string | null;
  carouselItem: boolean;
  children: string[];
  replyTo: string | null;
  status: "IN_PROGRESS" | "FINISHED" | "ERROR" | "EXPIRED" | "PUBLISHED";
  errorMessage: string | null;
  looksLeft: number;
}

/** A published thread or reply. */
export interface ThMedia {
  id: string;
  text: string;
  replyTo: string | null;
  images: { url: string; altText: string | null }[];
}

export interface ThMode {
  tokenUnavailable: number;
  inProgressLooks: number;
  /** threads_publish: publish, then cut the answer off this many times. */
  publishThenCut: number;
  /** Publishes answered whole before the cut-offs above begin. */
  publishCutSkip: number;
  publishLatencyMs: number;
}

export interface ThreadsStandIn {
  origin: string;
  overrides: string;
  clientId: string;
  clientSecret: string;
  user: { id: string; username: string };
  containers: Map<string, ThContainer>;
  media: ThMedia[];
  violations: string[];
  tokenCalls: { grant: string; status: number }[];
  mode: ThMode;
  revokeAll(): void;
  stop(): Promise<void>;
}

const thId = graphIds(18_000_000_000_000_000n);

/** Starts the stand-in. `fetchImage` is how "Threads" fetches an `image_url`. */
export function startThreadsStandIn(opts: { redirectUri: string; fetchImage?: (url: string) => Promise<Response> }): ThreadsStandIn {
  const clientId = String(3_000_000_000_000_000 + Math.floor(Math.random() * 1e9));
  const clientSecret = randomBytes(16).toString("hex");
  const user = { id: "27000000000000001", username: "cornerbakery" };
  const codes = new Map<string, { redirectUri: string }>();
  const tokens = new Map<string, { longLived: boolean }>();
  const fetchImage = opts.fetchImage ?? ((url: string) => fetch(url));
  const state: ThreadsStandIn = {
    origin: "",
    overrides: "",
    clientId,
    clientSecret,
    user,
    containers: new Map(),
    media: [],
    violations: [],
    tokenCalls: [],
    mode: { tokenUnavailable: 0, inProgressLooks: 1, publishThenCut: 0, publishCutSkip: 0, publishLatencyMs: 0 },
    revokeAll: () => tokens.clear(),
    stop: async () => {
      await server.stop(true);
    },
  };
  const only = (where: string, params: URLSearchParams, allowed: readonly string[]) => {
    for (const name of params.keys()) if (!allowed.includes(name)) state.violations.push(`${where}: unknown parameter ${name}`);
  };

  function authorize(url: URL): Response {
    const p = url.searchParams;
    only("authorize", p, ["client_id", "redirect_uri", "scope", "response_type", "state"]);
    if (p.get("client_id") !== clientId || p.get("redirect_uri") !== opts.redirectUri) {
      state.violations.push("authorize: unknown app or redirect_uri");
      return new Response("Invalid request", { status: 400 });
    }
    const hidden = ["redirect_uri", "state"].map((n) => `<input type="hidden" name="${n}" value="${escapeHtml(p.get(n) ?? "")}">`).join("");
    return new Response(
      `<!doctype html><html lang="en"><head><title>Threads</title></head><body><h1>Allow Seedcast to access your Threads profile?</h1><p>${escapeHtml(p.get("scope") ?? "")}</p>
<form method="post" action="/oauth/authorize/decision">${hidden}<button name="decision" value="allow">Allow</button> <button name="decision" value="deny">Cancel</button></form></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  }

  async function decision(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    const back = new URL(form.get("redirect_uri") ?? "");
    if (form.get("decision") === "allow") {
      const code = `TH${randomBytes(24).toString("base64url")}`;
      codes.set(code, { redirectUri: form.get("redirect_uri") ?? "" });
      back.searchParams.set("code", code);
    } else {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_reason", "user_denied");
      back.searchParams.set("error_description", "Permissions error");
    }
    back.searchParams.set("state", form.get("state") ?? "");
    return new Response(null, { status: 302, headers: { location: `${back}#_` } });
  }

  async function exchange(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    only("oauth/access_token", form, ["client_id", "client_secret", "code", "grant_type", "redirect_uri"]);
    const done = (r: Response) => (state.tokenCalls.push({ grant: "authorization_code", status: r.status }), r);
    if (form.get("client_id") !== clientId || form.get("client_secret") !== clientSecret) return done(graphError("THApiException", 400, "Error validating client secret.", 1));
    const code = codes.get(form.get("code") ?? "");
    codes.delete(form.get("code") ?? "");
    if (!code || code.redirectUri !== form.get("redirect_uri")) return done(graphError("THApiException", 400, "Invalid authorization code", 100, 36007));
    const t = `THQ${randomBytes(24).toString("base64url")}`;
    tokens.set(t, { longLived: false });
    return done(Response.json({ access_token: t, user_id: user.id }));
  }

  function longLived(url: URL, grant: "th_exchange_token" | "th_refresh_token"): Response {
    const p = url.searchParams;
    only(grant, p, grant === "th_exchange_token" ? ["grant_type", "client_secret", "access_token"] : ["grant_type", "access_token"]);
    const done = (r: Response) => (state.tokenCalls.push({ grant, status: r.status }), r);
    if (state.mode.tokenUnavailable > 0) {
      state.mode.tokenUnavailable -= 1;
      return done(graphError("THApiException", 503, "Service temporarily unavailable", 2));
    }
    if (grant === "th_exchange_token" && p.get("client_secret") !== clientSecret) return done(graphError("THApiException", 400, "Error validating client secret.", 1));
    const held = tokens.get(p.get("access_token") ?? "");
    if (!held || (grant === "th_refresh_token") !== held.longLived) return done(graphError("THApiException", 400, "Error validating access token: Session has expired or been invalidated.", 190, 463));
    const t = `THAA${randomBytes(30).toString("base64url")}`;
    tokens.set(t, { longLived: true });
    return done(Response.json({ access_token: t, token_type: "bearer", expires_in: THREADS_LONG_LIVED_SECONDS }));
  }

  async function create(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    form.delete("access_token");
    only("threads", form, ["media_type", "text", "image_url", "alt_text", "is_carousel_item", "children", "reply_to_id"]);
    const type = form.get("media_type") ?? "";
    if (!["TEXT", "IMAGE", "CAROUSEL"].includes(type)) return graphError("THApiException", 400, "The parameter media_type is required.", 100);
    const text = form.get("text");
    if (text !== null && [...text].length > 500) return graphError("THApiException", 400, "The text is too long. Maximum: 500 characters.", 100, 4279009);
    const replyTo = form.get("reply_to_id");
    if (replyTo !== null && !state.media.some((m) => m.id === replyTo)) return graphError("THApiException", 400, "The reply_to_id is not a valid media id.", 100, 4279019);
    const c: ThContainer = {
      id: thId(),
      mediaType: type,
      text,
      imageUrl: form.get("image_url"),
      altText: form.get("alt_text"),
      carouselItem: form.get("is_carousel_item") === "true",
      children: (form.get("children") ?? "").split(",").filter((x) => x !== ""),
      replyTo,
      status: "IN_PROGRESS",
      errorMessage: null,
      looksLeft: state.mode.inProgressLooks,
    };
    if (type === "IMAGE") {
      try {
        const res = await fetchImage(c.imageUrl ?? "");
        const meta = await sharp(new Uint8Array(await res.arrayBuffer())).metadata();
        if (!res.ok || !["jpeg", "png"].includes(meta.format ?? "")) throw new Error("unsupported image");
      } catch {
        c.status = "ERROR";
        c.errorMessage = "FAILED_DOWNLOADING_IMAGE";
      }
    }
    if (type === "CAROUSEL") {
      if (c.children.length < 2 || c.children.length > 20) return graphError("THApiException", 400, "A carousel takes 2 to 20 items.", 100);
      for (const id of c.children) if (state.containers.get(id)?.status !== "FINISHED") return graphError("THApiException", 400, "A carousel item is not ready.", 100, 4279012);
    }
    state.containers.set(c.id, c);
    return Response.json({ id: c.id });
  }

  async function publish(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    form.delete("access_token");
    only("threads_publish", form, ["creation_id"]);
    const c = state.containers.get(form.get("creation_id") ?? "");
    if (!c || c.carouselItem) return graphError("THApiException", 400, "The media container was not found.", 24, 4279001);
    if (c.status === "PUBLISHED") return graphError("THApiException", 400, "The media has already been published.", 24, 4279002);
    if (c.status !== "FINISHED") return graphError("THApiException", 400, "The media is not ready to be published.", 24, 4279005);
    const half = state.mode.publishLatencyMs / 2;
    if (half > 0) await Bun.sleep(half);
    c.status = "PUBLISHED";
    const items = c.mediaType === "CAROUSEL" ? c.children.map((id) => state.containers.get(id)!) : c.mediaType === "IMAGE" ? [c] : [];
    const id = thId();
    state.media.push({ id, text: c.text ?? "", replyTo: c.replyTo, images: items.map((i) => ({ url: i.imageUrl ?? "", altText: i.altText })) });
    if (half > 0) await Bun.sleep(half);
    if (state.mode.publishThenCut > 0 && state.mode.publishCutSkip > 0) state.mode.publishCutSkip -= 1;
    else if (state.mode.publishThenCut > 0) {
      state.mode.publishThenCut -= 1;
      return new Response(new ReadableStream({ start: (ctl) => (ctl.enqueue(new TextEncoder().encode('{"id":')), ctl.close()) }), { headers: { "content-length": "999" } });
    }
    return Response.json({ id });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method === "GET" && url.pathname === "/oauth/authorize") return authorize(url);
      if (req.method === "POST" && url.pathname === "/oauth/authorize/decision") return decision(req);
      if (req.method === "POST" && url.pathname === "/oauth/access_token") return exchange(req);
      if (req.method === "GET" && url.pathname === "/access_token") return longLived(url, "th_exchange_token");
      if (req.method === "GET" && url.pathname === "/refresh_access_token") return longLived(url, "th_refresh_token");
      const api = /^\/v1\.0(\/.*)$/.exec(url.pathname);
      if (!api) return new Response("Not found", { status: 404 });
      const path = api[1]!;
      const body = req.method === "POST" ? await req.clone().text() : "";
      const t = url.searchParams.get("access_token") ?? new URLSearchParams(body).get("access_token") ?? "";
      if (!tokens.has(t)) return graphError("THApiException", 400, "Invalid OAuth access token - Cannot parse access token", 190);
      if (path === "/me") return Response.json({ id: user.id, username: user.username });
      if (req.method === "POST" && path === `/${user.id}/threads`) return create(req);
      if (req.method === "POST" && path === `/${user.id}/threads_publish`) return publish(req);
      if (req.method === "GET" && path === `/${user.id}/threads`) return Response.json({ data: state.media.filter((m) => m.replyTo === null).reverse().map((m) => ({ id: m.id, text: m.text, timestamp: new Date().toISOString() })) });
      const replies = /^\/([^/]+)\/replies$/.exec(path);
      if (req.method === "GET" && replies) return Response.json({ data: state.media.filter((m) => m.replyTo === replies[1]).map((m) => ({ id: m.id, text: m.text, timestamp: new Date().toISOString() })) });
      const single = /^\/([^/]+)$/.exec(path);
      if (req.method === "GET" && single) {
        const c = state.containers.get(single[1]!);
        if (c) {
          if (c.status === "IN_PROGRESS") {
            if (c.looksLeft <= 0) c.status = "FINISHED";
            else c.looksLeft -= 1;
          }
          return Response.json({ id: c.id, status: c.status, ...(c.errorMessage ? { error_message: c.errorMessage } : {}) });
        }
        const m = state.media.find((x) => x.id === single[1]);
        if (m) return Response.json({ id: m.id, permalink: `https://www.threads.net/@${user.username}/post/${m.id}` });
      }
      return graphError("THApiException", 400, "Unsupported request", 100, 33);
    },
  });
  state.origin = `http://127.0.0.1:${server.port}`;
  state.overrides = ["threads.net", "graph.threads.net"].map((h) => `${h}=${state.origin}`).join(",");
  return state;
}
