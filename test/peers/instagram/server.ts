/**
 * An Instagram stand-in (Instagram API with Instagram Login), written from Meta's documentation pages, never from
 * Seedcast's client. It serves the three hosts a deployment reaches (www.instagram.com, api.instagram.com,
 * graph.instagram.com; tests point all three at it with PLATFORM_ORIGIN_OVERRIDES):
 *  - Business Login: https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login
 *    `GET https://www.instagram.com/oauth/authorize?client_id&redirect_uri&response_type=code&scope=a,b&state`
 *    (scopes comma-separated); the person allows (back with `code`) or denies (back with `error=access_denied`,
 *    `error_reason=user_denied`, `error_description`). `POST https://api.instagram.com/oauth/access_token` (form:
 *    client_id, client_secret, grant_type=authorization_code, redirect_uri, code; a code is good once) answers
 *    `{data: [{access_token, user_id, permissions}]}` as the page documents, or flat `{access_token, user_id,
 *    permissions}` as the live API answers (mode `tokenShape`); a bad code answers
 *    `{error_type: "OAuthException", code: 400, error_message: "Invalid authorization code"}`.
 *  - Long-lived tokens: https://developers.facebook.com/docs/instagram-platform/reference/access_token and
 *    .../reference/refresh_access_token: `GET /access_token?grant_type=ig_exchange_token&client_secret&access_token`
 *    and `GET /refresh_access_token?grant_type=ig_refresh_token&access_token` answer `{access_token, token_type,
 *    expires_in}` (60 days, 5,183,944 s); a revoked token answers the Graph error code 190.
 *  - Publishing: https://developers.facebook.com/docs/instagram-platform/content-publishing and
 *    https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container:
 *    `POST /<v>/<ig-user>/media` (`image_url`, `caption`, `alt_text`, `is_carousel_item`; or `media_type=CAROUSEL`,
 *    `children` 2–10), `GET /<v>/<container>?fields=status_code,status` (IN_PROGRESS, FINISHED, ERROR, EXPIRED,
 *    PUBLISHED), `POST /<v>/<ig-user>/media_publish` (`creation_id`; a container publishes once, only FINISHED),
 *    `POST /<v>/<media>/comments` (`message`), `GET /<v>/<ig-user>/media`, `GET /<v>/<media>/comments`,
 *    `GET /<v>/me?fields=user_id,username`. Instagram fetches each image from `image_url` itself: JPEG only, aspect
 *    ratio 4:5 to 1.91:1, or the container ends in ERROR (error subcode 2207009 "The aspect ratio is not supported").
 *  - Errors: https://developers.facebook.com/docs/graph-api/guides/error-handling (`{error: {message, type, code,
 *    error_subcode, fbtrace_id}}`; 190 for a bad token).
 * Requests a page does not describe (unknown parameters, a missing one) are recorded in `violations`.
 */
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { cutOffAnswer, escapeHtml, graphError, graphIds } from "../stand-in-kit";

/** 60 days, as Meta answers it. */
export const LONG_LIVED_SECONDS = 5_183_944;

/** A container as kept. */
export interface IgContainer {
  id: string;
  kind: "IMAGE" | "CAROUSEL";
  imageUrl: string | null;
  caption: string | null;
  altText: string | null;
  carouselItem: boolean;
  children: string[];
  statusCode: "IN_PROGRESS" | "FINISHED" | "ERROR" | "EXPIRED" | "PUBLISHED";
  status: string | null;
  /** Looks left before it leaves IN_PROGRESS. */
  looksLeft: number;
  /** The image as Instagram fetched it: type and size. */
  fetched: { contentType: string; width: number; height: number } | null;
}

/** A published media. */
export interface IgMedia {
  id: string;
  containerId: string;
  caption: string;
  images: { url: string; altText: string | null; width: number; height: number }[];
  comments: { id: string; text: string }[];
}

/** What the stand-in does with the next requests. */
export interface IgMode {
  /** Code exchange answers `{data: [...]}` (documented) or flat (live). */
  tokenShape: "data" | "flat";
  /** Token endpoints answer 503 this many times. */
  tokenUnavailable: number;
  /** New containers stay IN_PROGRESS for this many looks. */
  inProgressLooks: number;
  /** New containers end in ERROR with this status text. */
  containerError: string | null;
  /** New containers never leave IN_PROGRESS. */
  stuck: boolean;
  /** media_publish: publish, then cut the answer off this many times. */
  publishThenCut: number;
  /** Latency of each media_publish, half before publishing and half after (kills land on either side). */
  publishLatencyMs: number;
}

/** A running stand-in. */
export interface InstagramStandIn {
  origin: string;
  /** PLATFORM_ORIGIN_OVERRIDES for its three hosts. */
  overrides: string;
  clientId: string;
  clientSecret: string;
  user: { id: string; username: string };
  containers: Map<string, IgContainer>;
  media: IgMedia[];
  violations: string[];
  requests: string[];
  tokenCalls: { grant: string; status: number }[];
  mode: IgMode;
  /** The person removes the app in Instagram's settings: every token stops working. */
  revokeAll(): void;
  stop(): Promise<void>;
}

const igId = graphIds(17_900_000_000_000_000n);

/**
 * Starts the stand-in on 127.0.0.1. `redirectUri` is the app's registered redirect URI; `fetchImage` is how
 * "Instagram" fetches an `image_url` (tests pass the app's in-process handler).
 */
export function startInstagramStandIn(opts: { redirectUri: string; fetchImage?: (url: string) => Promise<Response>; username?: string }): InstagramStandIn {
  const clientId = String(1_000_000_000_000_000 + Math.floor(Math.random() * 1e9));
  const clientSecret = randomBytes(16).toString("hex");
  const user = { id: "17841400000000001", username: opts.username ?? "cornerbakery" };
  const codes = new Map<string, { redirectUri: string; scope: string }>();
  /** Tokens that work, and whether each is long-lived. */
  const tokens = new Map<string, { longLived: boolean }>();
  const fetchImage = opts.fetchImage ?? ((url: string) => fetch(url));
  const state: InstagramStandIn = {
    origin: "",
    overrides: "",
    clientId,
    clientSecret,
    user,
    containers: new Map(),
    media: [],
    violations: [],
    requests: [],
    tokenCalls: [],
    mode: { tokenShape: "flat", tokenUnavailable: 0, inProgressLooks: 1, containerError: null, stuck: false, publishThenCut: 0, publishLatencyMs: 0 },
    revokeAll: () => tokens.clear(),
    stop: async () => {
      await server.stop(true);
    },
  };

  const only = (where: string, params: URLSearchParams, allowed: readonly string[], required: readonly string[]) => {
    for (const name of params.keys()) if (!allowed.includes(name)) state.violations.push(`${where}: unknown parameter ${name}`);
    for (const name of required) if (!params.get(name)) state.violations.push(`${where}: missing ${name}`);
  };

  function authorizePage(url: URL): Response {
    const p = url.searchParams;
    only("authorize", p, ["client_id", "redirect_uri", "response_type", "scope", "state", "enable_fb_login", "force_authentication"], ["client_id", "redirect_uri", "response_type", "scope"]);
    const wrong =
      p.get("client_id") !== clientId ? "Invalid app ID" : p.get("redirect_uri") !== opts.redirectUri ? "Invalid redirect_uri" : p.get("response_type") !== "code" ? "response_type must be code" : null;
    if (wrong) {
      state.violations.push(`authorize: ${wrong}`);
      return new Response(`<!doctype html><title>Instagram</title><p>${escapeHtml(wrong)}</p>`, { status: 400, headers: { "content-type": "text/html" } });
    }
    // Instagram Login's scopes are comma-separated.
    const scopes = (p.get("scope") ?? "").split(",");
    for (const s of scopes) if (!["instagram_business_basic", "instagram_business_content_publish", "instagram_business_manage_comments", "instagram_business_manage_messages"].includes(s)) state.violations.push(`authorize: unknown scope ${s}`);
    const hidden = ["redirect_uri", "state", "scope"].map((n) => `<input type="hidden" name="${n}" value="${escapeHtml(p.get(n) ?? "")}">`).join("");
    const html = `<!doctype html><html lang="en"><head><title>Instagram</title></head><body>
<h1>Allow Seedcast to access your Instagram account?</h1>
<p>Logged in as ${escapeHtml(user.username)}. Seedcast will be able to: ${scopes.map(escapeHtml).join(", ")}</p>
<form method="post" action="/oauth/authorize/decision">${hidden}<button name="decision" value="allow">Allow</button> <button name="decision" value="deny">Cancel</button></form>
</body></html>`;
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  }

  async function decision(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    const back = new URL(form.get("redirect_uri") ?? "");
    if (form.get("decision") === "allow") {
      const code = `AQ${randomBytes(24).toString("base64url")}`;
      codes.set(code, { redirectUri: form.get("redirect_uri") ?? "", scope: form.get("scope") ?? "" });
      back.searchParams.set("code", code);
    } else {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_reason", "user_denied");
      back.searchParams.set("error_description", "The user denied your request.");
    }
    back.searchParams.set("state", form.get("state") ?? "");
    // Instagram appends "#_" to the redirect: browsers keep the fragment to themselves.
    return new Response(null, { status: 302, headers: { location: `${back.toString()}#_` } });
  }

  async function codeExchange(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    only("oauth/access_token", form, ["client_id", "client_secret", "grant_type", "redirect_uri", "code"], ["client_id", "client_secret", "grant_type", "redirect_uri", "code"]);
    const done = (res: Response) => {
      state.tokenCalls.push({ grant: form.get("grant_type") ?? "", status: res.status });
      return res;
    };
    if (state.mode.tokenUnavailable > 0) {
      state.mode.tokenUnavailable -= 1;
      return done(new Response("Service Unavailable", { status: 503 }));
    }
    if (form.get("client_id") !== clientId || form.get("client_secret") !== clientSecret) {
      return done(Response.json({ error_type: "OAuthException", code: 400, error_message: "Invalid client_secret: " + (form.get("client_secret") ? "***" : "") }, { status: 400 }));
    }
    const code = codes.get(form.get("code") ?? "");
    codes.delete(form.get("code") ?? "");
    if (!code || code.redirectUri !== form.get("redirect_uri") || form.get("grant_type") !== "authorization_code") {
      return done(Response.json({ error_type: "OAuthException", code: 400, error_message: "Invalid authorization code" }, { status: 400 }));
    }
    const accessToken = `IGQ${randomBytes(24).toString("base64url")}`;
    tokens.set(accessToken, { longLived: false });
    const inner = { access_token: accessToken, user_id: Number(user.id), permissions: code.scope.split(",") };
    return done(Response.json(state.mode.tokenShape === "data" ? { data: [inner] } : inner));
  }

  function longLived(url: URL, grant: "ig_exchange_token" | "ig_refresh_token"): Response {
    const p = url.searchParams;
    only(grant, p, grant === "ig_exchange_token" ? ["grant_type", "client_secret", "access_token"] : ["grant_type", "access_token"], grant === "ig_exchange_token" ? ["grant_type", "client_secret", "access_token"] : ["grant_type", "access_token"]);
    const done = (res: Response) => {
      state.tokenCalls.push({ grant, status: res.status });
      return res;
    };
    if (state.mode.tokenUnavailable > 0) {
      state.mode.tokenUnavailable -= 1;
      return done(graphError("IGApiException", 503, "An unexpected error has occurred. Please retry your request later.", 2));
    }
    if (p.get("grant_type") !== grant) return done(graphError("IGApiException", 400, "Unsupported grant_type", 100));
    if (grant === "ig_exchange_token" && p.get("client_secret") !== clientSecret) return done(graphError("IGApiException", 400, "Error validating client secret.", 101));
    const presented = tokens.get(p.get("access_token") ?? "");
    if (!presented) return done(graphError("IGApiException", 400, "Error validating access token: The user has not authorized application.", 190, 460));
    if (grant === "ig_exchange_token" && presented.longLived) return done(graphError("IGApiException", 400, "Invalid OAuth access token - Cannot parse access token", 190));
    if (grant === "ig_refresh_token" && !presented.longLived) return done(graphError("IGApiException", 400, "Short-lived tokens cannot be refreshed", 190));
    const accessToken = `IGAA${randomBytes(30).toString("base64url")}`;
    tokens.set(accessToken, { longLived: true });
    return done(Response.json({ access_token: accessToken, token_type: "bearer", expires_in: LONG_LIVED_SECONDS }));
  }

  async function readImage(container: IgContainer): Promise<void> {
    try {
      const res = await fetchImage(container.imageUrl ?? "");
      const type = res.headers.get("content-type") ?? "";
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (!res.ok) throw new Error("Media download has failed. The media URI doesn't meet our requirements.");
      const meta = await sharp(bytes).metadata();
      container.fetched = { contentType: type, width: meta.width ?? 0, height: meta.height ?? 0 };
      if (meta.format !== "jpeg") throw new Error("Only photo or video can be accepted as media type. The image format is not supported: only JPEG.");
      const ratio = (meta.width ?? 1) / (meta.height ?? 1);
      if (ratio < 0.8 - 1e-3 || ratio > 1.91 + 1e-3) throw Object.assign(new Error("The aspect ratio is not supported."), { subcode: 2207009 });
    } catch (error) {
      container.statusCode = "ERROR";
      container.status = `Error: ${(error as Error).message}`;
    }
  }

  async function createContainer(req: Request, userId: string): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    form.delete("access_token");
    if (userId !== user.id && userId !== "me") return graphError("IGApiException", 400, "Unsupported post request. Object does not exist or cannot be loaded due to missing permissions", 100, 33);
    const carousel = form.get("media_type") === "CAROUSEL";
    const allowed = carousel ? ["media_type", "children", "caption"] : ["image_url", "caption", "alt_text", "is_carousel_item", "media_type"];
    only("media", form, allowed, carousel ? ["children"] : ["image_url"]);
    const id = igId();
    const container: IgContainer = {
      id,
      kind: carousel ? "CAROUSEL" : "IMAGE",
      imageUrl: form.get("image_url"),
      caption: form.get("caption"),
      altText: form.get("alt_text"),
      carouselItem: form.get("is_carousel_item") === "true",
      children: carousel ? (form.get("children") ?? "").split(",").filter((c) => c !== "") : [],
      statusCode: "IN_PROGRESS",
      status: null,
      looksLeft: state.mode.stuck ? Number.POSITIVE_INFINITY : state.mode.inProgressLooks,
      fetched: null,
    };
    if (container.caption !== null && [...container.caption].length > 2200) return graphError("IGApiException", 400, "The caption is too long.", 100, 2207010);
    if (carousel) {
      if (container.children.length < 2 || container.children.length > 10) return graphError("IGApiException", 400, "The carousel must have between 2 and 10 items.", 100, 2207028);
      for (const child of container.children) {
        const c = state.containers.get(child);
        if (!c || !c.carouselItem || c.statusCode !== "FINISHED") return graphError("IGApiException", 400, "Carousel item is not ready or is not a carousel item.", 100, 2207027);
      }
    } else {
      await readImage(container);
    }
    if (state.mode.containerError !== null && container.statusCode !== "ERROR") {
      container.statusCode = "ERROR";
      container.status = state.mode.containerError;
    }
    state.containers.set(id, container);
    return Response.json({ id });
  }

  function containerStatus(url: URL, container: IgContainer): Response {
    const fields = (url.searchParams.get("fields") ?? "id").split(",");
    if (container.statusCode === "IN_PROGRESS") {
      if (container.looksLeft <= 0) container.statusCode = "FINISHED";
      else container.looksLeft -= 1;
    }
    const out: Record<string, unknown> = { id: container.id };
    if (fields.includes("status_code")) out.status_code = container.statusCode;
    if (fields.includes("status") && container.status !== null) out.status = container.status;
    return Response.json(out);
  }

  async function publish(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    form.delete("access_token");
    only("media_publish", form, ["creation_id"], ["creation_id"]);
    const container = state.containers.get(form.get("creation_id") ?? "");
    if (!container) return graphError("IGApiException", 400, "Media ID is not available", 9007, 2207027);
    if (container.statusCode === "PUBLISHED") return graphError("IGApiException", 400, "The media has already been published.", 9007, 2207026);
    if (container.statusCode !== "FINISHED" || container.carouselItem) return graphError("IGApiException", 400, "The media is not ready for publishing, please wait for a moment", 9007, 2207027);
    const half = state.mode.publishLatencyMs / 2;
    if (half > 0) await Bun.sleep(half);
    container.statusCode = "PUBLISHED";
    const items = container.kind === "CAROUSEL" ? container.children.map((c) => state.containers.get(c)!) : [container];
    const id = igId();
    state.media.push({
      id,
      containerId: container.id,
      caption: container.caption ?? "",
      images: items.map((c) => ({ url: c.imageUrl ?? "", altText: c.altText, width: c.fetched?.width ?? 0, height: c.fetched?.height ?? 0 })),
      comments: [],
    });
    if (half > 0) await Bun.sleep(half);
    if (state.mode.publishThenCut > 0) {
      state.mode.publishThenCut -= 1;
      return cutOffAnswer(200);
    }
    return Response.json({ id });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      state.requests.push(`${req.method} ${url.pathname}`);
      if (req.method === "GET" && url.pathname === "/oauth/authorize") return authorizePage(url);
      if (req.method === "POST" && url.pathname === "/oauth/authorize/decision") return decision(req);
      if (req.method === "POST" && url.pathname === "/oauth/access_token") return codeExchange(req);
      if (req.method === "GET" && url.pathname === "/access_token") return longLived(url, "ig_exchange_token");
      if (req.method === "GET" && url.pathname === "/refresh_access_token") return longLived(url, "ig_refresh_token");
      const api = /^\/v\d+\.\d+(\/.*)$/.exec(url.pathname);
      if (!api) return new Response("Not found", { status: 404 });
      const path = api[1]!;
      const body = req.method === "POST" ? await req.clone().text() : "";
      const token = url.searchParams.get("access_token") ?? new URLSearchParams(body).get("access_token") ?? /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? "";
      const held = tokens.get(token);
      if (!held) return graphError("IGApiException", 400, "Invalid OAuth access token - Cannot parse access token", 190);
      if (req.method === "GET" && path === "/me") return Response.json({ user_id: user.id, username: user.username, id: "9876543210" });
      const mediaOf = /^\/([^/]+)\/media$/.exec(path);
      if (mediaOf && req.method === "POST") return createContainer(req, decodeURIComponent(mediaOf[1]!));
      if (mediaOf && req.method === "GET") {
        const data = [...state.media].reverse().map((m) => ({ id: m.id, caption: m.caption, permalink: `https://www.instagram.com/p/${m.id}/`, timestamp: new Date().toISOString() }));
        return Response.json({ data });
      }
      if (req.method === "POST" && /^\/[^/]+\/media_publish$/.test(path)) return publish(req);
      const commentsOf = /^\/([^/]+)\/comments$/.exec(path);
      if (commentsOf) {
        const media = state.media.find((m) => m.id === decodeURIComponent(commentsOf[1]!));
        if (!media) return graphError("IGApiException", 400, "Unsupported request. Object does not exist.", 100, 33);
        if (req.method === "GET") return Response.json({ data: media.comments.map((c) => ({ id: c.id, text: c.text, timestamp: new Date().toISOString() })) });
        const form = new URLSearchParams(await req.text());
        form.delete("access_token");
        only("comments", form, ["message"], ["message"]);
        const comment = { id: igId(), text: form.get("message") ?? "" };
        media.comments.push(comment);
        return Response.json({ id: comment.id });
      }
      const single = /^\/([^/]+)$/.exec(path);
      if (req.method === "GET" && single) {
        const id = decodeURIComponent(single[1]!);
        const container = state.containers.get(id);
        if (container) return containerStatus(url, container);
        const media = state.media.find((m) => m.id === id);
        if (media) return Response.json({ id: media.id, permalink: `https://www.instagram.com/p/${media.id}/` });
      }
      return graphError("IGApiException", 400, "Unsupported get request. Object does not exist, cannot be loaded due to missing permissions, or does not support this operation.", 100, 33);
    },
  });
  state.origin = `http://127.0.0.1:${server.port}`;
  state.overrides = ["www.instagram.com", "api.instagram.com", "graph.instagram.com"].map((h) => `${h}=${state.origin}`).join(",");
  return state;
}
