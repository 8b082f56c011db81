/**
 * safeFetch keeps connections alive (issue 22), which is safe only while Bun's connection pool keys a TLS socket by
 * the name it was verified for (SNI), not just by the dialled IP and port: safeFetch dials the checked IP with the
 * name as SNI, so a pool keyed by address alone would hand a socket verified for one name to a request for another
 * name that resolves to the same address, and skip that name's certificate check. Run in a child process trusting the
 * test CA through NODE_EXTRA_CA_CERTS, as production trusts extra CAs (an `extraCa` option would give the call a TLS
 * context of its own, and so a pool of its own: not what production uses).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestCa, type TestHttpsServer, createTestCa, runTrustingCa, startHttpsServer } from "./helpers/test-ca.ts";

let ca: TestCa;
let server: TestHttpsServer;

beforeAll(() => {
  // The certificate names `localhost` only.
  ca = createTestCa();
  server = startHttpsServer((req, s) => Response.json({ clientPort: s.requestIP(req)?.port ?? null }), { ca });
});

afterAll(async () => {
  await server.stop();
  ca.dispose();
});

test("a pooled TLS connection serves its own name again, never another name on the same address", async () => {
  const script = `
    import { safeFetch } from ${JSON.stringify(`${import.meta.dir}/../src/lib/safe-fetch.ts`)};
    // Both names resolve to the peer's address; the certificate covers only localhost.
    const options = { allowPrivateHosts: new Set(["localhost", "other.seedcast.test"]), resolver: async () => ["127.0.0.1"], timeoutMs: 5000 };
    const port = async (host) => {
      try {
        const res = await safeFetch("https://" + host + ":${server.port}/", options);
        return JSON.parse(new TextDecoder().decode(res.body)).clientPort;
      } catch (error) {
        return "refused: " + error.reason;
      }
    };
    const first = await port("localhost");
    const second = await port("localhost");
    const other = await port("other.seedcast.test");
    const third = await port("localhost");
    console.log(JSON.stringify({ first, second, other, third }));
  `;
  const out = await runTrustingCa(ca, script);
  const seen = JSON.parse(out.trim()) as { first: number; second: number; other: number | string; third: number };
  // The second request to localhost came over the first one's connection (same client port): kept alive.
  expect(typeof seen.first).toBe("number");
  expect(seen.second).toBe(seen.first);
  // Another name on the same address and port got no pooled socket: its own handshake, refused by the certificate.
  expect(seen.other).toBe("refused: fetch_failed");
  expect(typeof seen.third).toBe("number");
});
