/**
 * WebSockets to user-supplied addresses (Nostr relays) under the outbound rule: the name is resolved once and checked,
 * the socket goes to the checked IP with the name as Host and as TLS server name, and the certificate is verified
 * against the name (Bun 1.4.5's WebSocket honours `tls.serverName`; this file fails if an upgrade changes that).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SafeFetchError } from "../src/lib/safe-fetch";
import { openSafeWebSocket } from "../src/lib/safe-websocket";
import { type TestCa, createTestCa } from "./helpers/test-ca";

let ca: TestCa;
let tlsServer: ReturnType<typeof Bun.serve>;
let plainServer: ReturnType<typeof Bun.serve>;
const hosts: string[] = [];

function echoServer(tls?: { cert: string; key: string }) {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    ...(tls ? { tls } : {}),
    fetch(request, server) {
      hosts.push(request.headers.get("host") ?? "");
      return server.upgrade(request) ? undefined : new Response("not a websocket", { status: 400 });
    },
    websocket: {
      message(ws, message) {
        ws.send(message);
      },
    },
  });
}

beforeAll(() => {
  ca = createTestCa();
  tlsServer = echoServer({ cert: ca.certPem, key: ca.keyPem });
  plainServer = echoServer();
});

afterAll(() => {
  tlsServer.stop(true);
  plainServer.stop(true);
  ca.dispose();
});

async function echo(ws: WebSocket, text: string): Promise<string> {
  const answer = new Promise<string>((resolve) => {
    ws.onmessage = (event) => resolve(String(event.data));
  });
  ws.send(text);
  const got = await answer;
  ws.close();
  return got;
}

async function refusal(promise: Promise<unknown>): Promise<SafeFetchError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SafeFetchError) return error;
    throw error;
  }
  throw new Error("the connection was not refused");
}

const loopback = async () => ["127.0.0.1"];

describe("safe WebSocket", () => {
  test("wss to an allowed name: dialled at the checked IP, the certificate verified for the name, Host is the name", async () => {
    const ws = await openSafeWebSocket(`wss://localhost:${tlsServer.port}/`, { allowPrivateHosts: new Set(["localhost"]), resolver: loopback, extraCa: ca.caPem });
    expect(await echo(ws, "hello")).toBe("hello");
    expect(hosts.at(-1)).toBe(`localhost:${tlsServer.port}`);
  });

  test("a name whose certificate does not match is refused, although its address answers", async () => {
    const error = await refusal(openSafeWebSocket(`wss://other.test:${tlsServer.port}/`, { allowPrivateHosts: new Set(["other.test"]), resolver: loopback, extraCa: ca.caPem }));
    expect(error.reason).toBe("fetch_failed");
    expect(error.message).toMatch(/certificate|altnames|TLS/i);
  });

  test("a public name that resolves to a private address is refused before anything is dialled", async () => {
    const before = hosts.length;
    const error = await refusal(openSafeWebSocket("wss://relay.example.com/", { resolver: loopback }));
    expect(error.reason).toBe("host_not_public");
    expect(hosts.length).toBe(before);
  });

  test("plain ws:// only for a host in ALLOW_PRIVATE_HOSTS", async () => {
    const refused = await refusal(openSafeWebSocket(`ws://relay.example.com/`, { resolver: async () => ["93.184.216.34"] }));
    expect(refused.reason).toBe("https_required");
    const ws = await openSafeWebSocket(`ws://localhost:${plainServer.port}/`, { allowPrivateHosts: new Set(["localhost"]), resolver: loopback });
    expect(await echo(ws, "plain")).toBe("plain");
  });

  test("a public host on another port than 443, and a scheme that is not a WebSocket, are refused", async () => {
    expect((await refusal(openSafeWebSocket("wss://relay.example.com:8443/", { resolver: async () => ["93.184.216.34"] }))).reason).toBe("port_not_allowed");
    expect((await refusal(openSafeWebSocket("https://relay.example.com/"))).reason).toBe("https_required");
  });

  test("nothing listening: fetch_failed, said plainly", async () => {
    const error = await refusal(openSafeWebSocket("ws://localhost:9/", { allowPrivateHosts: new Set(["localhost"]), resolver: loopback }));
    expect(error.reason).toBe("fetch_failed");
  });
});
