/**
 * safeFetch against real local HTTPS peers presenting a throwaway CA's `localhost` certificate.
 * The URL host is `localhost`, exempted through allowPrivateHosts (the way ALLOW_PRIVATE_HOSTS=localhost
 * serves tests), and an injected resolver decides where `localhost` points.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { createTestCa, runTrustingCa, startHttpsServer, type TestCa, type TestHttpsServer } from "./helpers/test-ca.ts";
import {
  parseAllowPrivateHosts,
  safeFetch,
  safeFetchOk,
  SafeFetchError,
  toAppError,
  type Resolver,
  type SafeFetchOptions,
} from "../src/lib/safe-fetch.ts";
import { AppError } from "../src/lib/errors.ts";

/** In the test certificate, but unresolvable by the system (RFC 6761 `.test`): only our resolver can answer it. */
const UNRESOLVABLE_NAME = "rebind.seedcast.test";
const EXEMPT = new Set(["localhost", UNRESOLVABLE_NAME]);
const LOOPBACK: Resolver = async () => ["127.0.0.1"];

let ca: TestCa;
let server: TestHttpsServer;
/** Requests the main server saw: path, Host header, Accept-Encoding, method, body. */
const seen: { path: string; host: string | null; acceptEncoding: string | null; method: string; body: string }[] = [];
const PAYLOAD = crypto.getRandomValues(new Uint8Array(200_000));

async function expectReason(promise: Promise<unknown>, reason: string): Promise<SafeFetchError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SafeFetchError);
    expect((error as SafeFetchError).reason).toBe(reason as SafeFetchError["reason"]);
    return error as SafeFetchError;
  }
  throw new Error(`expected a refusal with ${reason}, got success`);
}

function opts(extra: SafeFetchOptions = {}): SafeFetchOptions {
  return { allowPrivateHosts: EXEMPT, resolver: LOOPBACK, extraCa: ca.caPem, timeoutMs: 5_000, ...extra };
}

beforeAll(() => {
  ca = createTestCa([UNRESOLVABLE_NAME]);
  server = startHttpsServer(
    async (req) => {
      const url = new URL(req.url);
      seen.push({
        path: url.pathname,
        host: req.headers.get("host"),
        acceptEncoding: req.headers.get("accept-encoding"),
        method: req.method,
        body: await req.text(),
      });
      const n = Number(url.searchParams.get("n") ?? "0");
      switch (url.pathname) {
        case "/bytes":
          return new Response(PAYLOAD, { headers: { "content-type": "application/octet-stream" } });
        case "/endless":
          // Chunked, no Content-Length, never ends: only a streaming cap can stop it.
          return new Response(
            new ReadableStream({
              pull(controller) {
                controller.enqueue(new Uint8Array(64 * 1024));
              },
            }),
          );
        case "/gzip":
          return new Response(gzipSync(Buffer.from("hello")), { headers: { "content-encoding": "gzip" } });
        case "/missing":
          return new Response("nope", { status: 404 });
        case "/chain":
          return n > 0
            ? new Response(null, { status: 302, headers: { location: `/chain?n=${n - 1}` } })
            : new Response("end of chain");
        case "/to-metadata":
          return new Response(null, { status: 302, headers: { location: "https://169.254.169.254/latest/meta-data/" } });
        case "/to-http":
          return new Response(null, { status: 301, headers: { location: `http://localhost:${server.port}/bytes` } });
        case "/post-307":
          return new Response(null, { status: 307, headers: { location: "/echo" } });
        case "/post-303":
          return new Response(null, { status: 303, headers: { location: "/echo" } });
        case "/echo":
          return Response.json({ method: req.method, host: req.headers.get("host") });
        case "/hang":
          return new Promise<Response>(() => undefined);
        default:
          return new Response("ok");
      }
    },
    { ca },
  );
});

afterAll(async () => {
  await server.stop();
  ca.dispose();
});

describe("safeFetch over real HTTPS", () => {
  test("returns the body byte-exact, with Host = the URL host, identity encoding, verified against the name", async () => {
    seen.length = 0;
    const res = await safeFetch(`${server.url}/bytes`, opts());
    expect(res.status).toBe(200);
    expect(res.body.byteLength).toBe(PAYLOAD.byteLength);
    expect(Buffer.from(res.body).equals(Buffer.from(PAYLOAD))).toBe(true);
    expect(res.url).toBe(`${server.url}/bytes`);
    expect(seen[0]?.host).toBe(`localhost:${server.port}`);
    expect(seen[0]?.acceptEncoding).toBe("identity");
  });

  test("a certificate not issued for the name is fetch_failed", async () => {
    // 127.0.0.1 as a literal: the certificate names only localhost, so verification must fail.
    const allowIp = new Set(["127.0.0.1"]);
    await expectReason(safeFetch(`https://127.0.0.1:${server.port}/bytes`, opts({ allowPrivateHosts: allowIp })), "fetch_failed");
  });

  test("a certificate from an untrusted CA is fetch_failed", async () => {
    const other = createTestCa();
    try {
      await expectReason(safeFetch(`${server.url}/bytes`, opts({ extraCa: other.caPem })), "fetch_failed");
    } finally {
      other.dispose();
    }
  });

  test("a body over the cap is refused while streaming, without Content-Length", async () => {
    const started = performance.now();
    const err = await expectReason(safeFetch(`${server.url}/endless`, opts({ maxBytes: 1_000_000 })), "too_large");
    expect(performance.now() - started).toBeLessThan(5_000);
    const mapped = toAppError(err);
    expect(mapped).toBeInstanceOf(AppError);
    expect((mapped as AppError).code).toBe("image_too_large");
  });

  test("a body exactly at the cap passes; one byte under the size is refused", async () => {
    const exact = await safeFetch(`${server.url}/bytes`, opts({ maxBytes: PAYLOAD.byteLength }));
    expect(exact.body.byteLength).toBe(PAYLOAD.byteLength);
    await expectReason(safeFetch(`${server.url}/bytes`, opts({ maxBytes: PAYLOAD.byteLength - 1 })), "too_large");
  });

  test("gzip Content-Encoding is refused", async () => {
    await expectReason(safeFetch(`${server.url}/gzip`, opts()), "unsupported_encoding");
  });

  test("an upstream 404 is surfaced as a status, and as upstream_status by safeFetchOk", async () => {
    const res = await safeFetch(`${server.url}/missing`, opts());
    expect(res.status).toBe(404);
    expect(new TextDecoder().decode(res.body)).toBe("nope");
    const err = await expectReason(safeFetchOk(`${server.url}/missing`, opts()), "upstream_status");
    expect(err.upstreamStatus).toBe(404);
    const mapped = toAppError(err) as AppError;
    expect(mapped.code).toBe("upstream_status");
    expect(mapped.toBody().upstreamStatus).toBe(404);
  });

  test("5 redirects are followed, each hop resolved once; 6 are too_many_redirects", async () => {
    let lookups = 0;
    const counting: Resolver = async () => {
      lookups++;
      return ["127.0.0.1"];
    };
    const res = await safeFetch(`${server.url}/chain?n=5`, opts({ resolver: counting }));
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(res.body)).toBe("end of chain");
    expect(res.url).toBe(`${server.url}/chain?n=0`);
    expect(lookups).toBe(6);
    await expectReason(safeFetch(`${server.url}/chain?n=6`, opts()), "too_many_redirects");
  });

  test("a redirect to the metadata address is host_not_public", async () => {
    await expectReason(safeFetch(`${server.url}/to-metadata`, opts()), "host_not_public");
  });

  test("a redirect to plain http is https_required", async () => {
    await expectReason(safeFetch(`${server.url}/to-http`, opts()), "https_required");
  });

  test("POST bodies are sent, kept on 307 and dropped to GET on 303", async () => {
    seen.length = 0;
    const direct = await safeFetch(`${server.url}/echo`, opts({ method: "POST", body: '{"a":1}', headers: { "content-type": "application/json" } }));
    expect(JSON.parse(new TextDecoder().decode(direct.body))).toEqual({ method: "POST", host: `localhost:${server.port}` });
    expect(seen.at(-1)?.body).toBe('{"a":1}');
    const kept = await safeFetch(`${server.url}/post-307`, opts({ method: "POST", body: new TextEncoder().encode("xyz") }));
    expect(JSON.parse(new TextDecoder().decode(kept.body)).method).toBe("POST");
    expect(seen.at(-1)?.body).toBe("xyz");
    const dropped = await safeFetch(`${server.url}/post-303`, opts({ method: "POST", body: "xyz" }));
    expect(JSON.parse(new TextDecoder().decode(dropped.body)).method).toBe("GET");
    expect(seen.at(-1)?.body).toBe("");
  });

  test("a server that never answers is fetch_failed within the total budget", async () => {
    const started = performance.now();
    await expectReason(safeFetch(`${server.url}/hang`, opts({ timeoutMs: 300 })), "fetch_failed");
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3_000);
  });

  test("a body that stalls half-way is fetch_failed within the total budget", async () => {
    const stalling = startHttpsServer(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new Uint8Array(1000));
            },
          }),
        ),
      { ca },
    );
    try {
      await expectReason(safeFetch(`${stalling.url}/`, opts({ timeoutMs: 300 })), "fetch_failed");
    } finally {
      await stalling.stop();
    }
  });

  test("a resolver that never answers is fetch_failed within the total budget", async () => {
    const stuck: Resolver = () => new Promise<string[]>(() => undefined);
    await expectReason(safeFetch(`${server.url}/`, opts({ resolver: stuck, timeoutMs: 200 })), "fetch_failed");
  });

  test("a caller's abort is fetch_failed", async () => {
    const controller = new AbortController();
    const pending = safeFetch(`${server.url}/hang`, opts({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    await expectReason(pending, "fetch_failed");
  });

  test("nothing listening is fetch_failed; a refused first address falls through to the next checked one", async () => {
    const closed = startHttpsServer(() => new Response("x"), { ca });
    const closedPort = closed.port;
    await closed.stop();
    await expectReason(safeFetch(`https://localhost:${closedPort}/`, opts()), "fetch_failed");
    // ::1 is refused (the peer listens on 127.0.0.1 only), then 127.0.0.1 answers.
    const res = await safeFetch(`${server.url}/`, opts({ resolver: async () => ["::1", "127.0.0.1"] }));
    expect(res.status).toBe(200);
  });
});

describe("the socket goes to the address that was checked", () => {
  test("a resolver that changes its answer after the check cannot move the connection", async () => {
    // Two peers on the same port: 127.0.0.1 (first answer) and 127.0.0.2 (what a rebinding answer would give).
    const hits: string[] = [];
    const first = startHttpsServer(() => {
      hits.push("first");
      return new Response("first");
    }, { ca });
    const second = startHttpsServer(() => {
      hits.push("second");
      return new Response("second");
    }, { ca, hostname: "127.0.0.2", port: first.port });
    let calls = 0;
    const rebinding: Resolver = async () => (++calls === 1 ? ["127.0.0.1"] : ["127.0.0.2"]);
    // A name the system cannot resolve: a client that looked it up again itself would fail outright.
    const url = `https://${UNRESOLVABLE_NAME}:${first.port}/`;
    try {
      const res = await safeFetch(url, opts({ resolver: rebinding }));
      expect(new TextDecoder().decode(res.body)).toBe("first");
      expect(calls).toBe(1);
      expect(hits).toEqual(["first"]);
      // Control: the second peer is really there, so the assertion above is not vacuous.
      const control = await safeFetch(url, opts({ resolver: async () => ["127.0.0.2"] }));
      expect(new TextDecoder().decode(control.body)).toBe("second");
    } finally {
      await first.stop();
      await second.stop();
    }
  });

  test("an IPv6 answer is dialled as that address", async () => {
    const hits: string[] = [];
    const v6 = startHttpsServer((_req, srv) => {
      hits.push(srv.requestIP(_req)?.address ?? "?");
      return new Response("v6");
    }, { ca, hostname: "::1" });
    try {
      const res = await safeFetch(v6.url, opts({ resolver: async () => ["::1"] }));
      expect(new TextDecoder().decode(res.body)).toBe("v6");
      expect(hits).toEqual(["::1"]);
    } finally {
      await v6.stop();
    }
  });

  test("a name whose answers include one private address is refused, even if another is public", async () => {
    let calls = 0;
    const mixed: Resolver = async () => {
      calls++;
      return ["93.184.216.34", "10.0.0.7"];
    };
    const err = await expectReason(safeFetch("https://example.com/x.png", { resolver: mixed }), "host_not_public");
    expect(err.address).toMatchObject({ address: "10.0.0.7", range: "private" });
    expect(err.message).not.toContain("10.0.0.7");
    expect(calls).toBe(1);
  });

  test.each([
    ["127.0.0.1"],
    ["::1"],
    ["::ffff:127.0.0.1"],
    ["64:ff9b::a9fe:a9fe"],
    ["169.254.169.254"],
    ["100.64.1.1"],
  ])("a name resolving to %s is host_not_public", async (address) => {
    await expectReason(safeFetch("https://images.example/x.png", { resolver: async () => [address] }), "host_not_public");
  });

  test("an unresolvable name is host_unresolvable", async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    await expectReason(safeFetch("https://nowhere.example/", { resolver: failing }), "host_unresolvable");
    await expectReason(safeFetch("https://nowhere.example/", { resolver: async () => [] }), "host_unresolvable");
    // The real system resolver: .invalid never resolves (RFC 6761).
    await expectReason(safeFetch("https://seedcast-test.invalid/"), "host_unresolvable");
  });
});

describe("rules checked before any network use", () => {
  const never: Resolver = async () => {
    throw new Error("the resolver must not be called");
  };

  test.each([
    ["http://example.com/a.png", "https_required"],
    ["ftp://example.com/a.png", "https_required"],
    ["file:///etc/passwd", "https_required"],
    ["https://user:pass@example.com/a.png", "invalid_url"],
    ["https://user@example.com/a.png", "invalid_url"],
    ["not a url", "invalid_url"],
    ["https://example.com:8443/a.png", "port_not_allowed"],
    ["https://example.com:80/a.png", "port_not_allowed"],
    ["https://169.254.169.254/latest/meta-data/", "host_not_public"],
    ["https://2130706433/", "host_not_public"],
    ["https://0x7f.1/", "host_not_public"],
    ["https://0177.0.0.1/", "host_not_public"],
    ["https://[::ffff:127.0.0.1]/", "host_not_public"],
    ["https://[::1]/", "host_not_public"],
    ["https://[64:ff9b::7f00:1]/", "host_not_public"],
  ])("%s is %s", async (url, reason) => {
    await expectReason(safeFetch(url, { resolver: never }), reason);
  });

  test("port 443 written explicitly is allowed (the URL parser drops it)", async () => {
    await expectReason(safeFetch("https://example.com:443/", { resolver: async () => ["10.1.2.3"] }), "host_not_public");
  });

  test("http is refused for an exempt host unless requireHttps is false", async () => {
    await expectReason(safeFetch("http://localhost:1/", opts()), "https_required");
    // Exempt + requireHttps false: allowed through the rules; nothing listens on port 1.
    await expectReason(safeFetch("http://localhost:1/", opts({ requireHttps: false })), "fetch_failed");
    // Not exempt: still refused.
    await expectReason(safeFetch("http://example.com/", { requireHttps: false, resolver: never }), "https_required");
  });

  test("plain http to an exempt 127.0.0.1 peer works (other modules' test peers)", async () => {
    const peer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => new Response(`got ${req.method}`) });
    try {
      const res = await safeFetch(`http://127.0.0.1:${peer.port}/hook`, {
        method: "POST",
        body: "{}",
        requireHttps: false,
        allowPrivateHosts: parseAllowPrivateHosts("127.0.0.1, Localhost."),
      });
      expect(new TextDecoder().decode(res.body)).toBe("got POST");
    } finally {
      await peer.stop(true);
    }
  });
});

describe("parseAllowPrivateHosts", () => {
  test("normalises names and literals, drops junk", () => {
    expect([...parseAllowPrivateHosts(" Localhost. ,, 127.0.0.1,[::1], minio.internal, a:b ")].sort()).toEqual(
      ["127.0.0.1", "::1", "localhost", "minio.internal"].sort(),
    );
    expect(parseAllowPrivateHosts(undefined).size).toBe(0);
  });
});

describe("trusting an extra CA (NODE_EXTRA_CA_CERTS)", () => {
  test("is honoured when set at process start, with no extraCa passed", async () => {
    const script = `
      import { safeFetch } from ${JSON.stringify(`${import.meta.dir}/../src/lib/safe-fetch.ts`)};
      const res = await safeFetch(${JSON.stringify(`${server.url}/echo`)}, {
        allowPrivateHosts: new Set(["localhost"]),
        resolver: async () => ["127.0.0.1"],
      });
      console.log(res.status);
    `;
    const out = await runTrustingCa(ca, script);
    expect(out.trim()).toBe("200");
  });

  test("is NOT honoured when set later in the running process (so tests pass extraCa)", async () => {
    const before = process.env.NODE_EXTRA_CA_CERTS;
    process.env.NODE_EXTRA_CA_CERTS = ca.caPath;
    try {
      await expectReason(safeFetch(`${server.url}/echo`, { allowPrivateHosts: EXEMPT, resolver: LOOPBACK }), "fetch_failed");
    } finally {
      if (before === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = before;
    }
  });
});
