/**
 * A throwaway certificate authority and a `localhost` server certificate made with openssl, plus a
 * `Bun.serve({ tls })` starter, so tests can talk HTTPS to a real local peer (testing.md "HTTPS sources
 * with a test CA").
 *
 * NB: trusting the CA. Bun reads NODE_EXTRA_CA_CERTS once, when the process starts; setting
 * `process.env.NODE_EXTRA_CA_CERTS` later has no effect on `fetch` (checked with Bun 1.4.5 by
 * test/safe-fetch.test.ts). In-process tests therefore hand the CA to safeFetch explicitly (`extraCa`);
 * a server under test started as a child process gets it through NODE_EXTRA_CA_CERTS in its environment.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The files of one throwaway CA and its `localhost` leaf certificate. */
export interface TestCa {
  /** Directory holding every file; removed by `dispose`. */
  dir: string;
  /** PEM of the CA certificate: what a client must trust. */
  caPem: string;
  /** Path of the CA certificate, for NODE_EXTRA_CA_CERTS in a child process. */
  caPath: string;
  /** PEM of the leaf certificate: DNS:localhost (plus any extra names), no IP, so verifying against 127.0.0.1 fails. */
  certPem: string;
  /** PEM of the leaf's private key. */
  keyPem: string;
  /** Deletes the temp directory. */
  dispose: () => void;
}

/** The leaf's only name: a client must verify against the host name, never the dialled IP. */
export const TEST_CERT_HOST = "localhost";

const OPENSSL_TIMEOUT_MS = 30_000;
const VALID_DAYS = "2";
const EC_ARGS = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

function openssl(args: string[], cwd: string): void {
  const run = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe", timeout: OPENSSL_TIMEOUT_MS });
  if (run.exitCode !== 0) {
    throw new Error(`openssl ${args[0]} failed: ${run.stderr.toString()}`);
  }
}

/**
 * Makes a fresh CA and a `localhost` certificate signed by it, in a new temp directory. `extraNames` adds
 * DNS names to the certificate, e.g. a `.test` name the system resolver cannot answer, to prove a client
 * connects to the address it was given instead of resolving the name itself.
 */
export function createTestCa(extraNames: readonly string[] = []): TestCa {
  const dir = mkdtempSync(join(tmpdir(), "seedcast-test-ca-"));
  openssl(
    ["req", "-x509", ...EC_ARGS, "-days", VALID_DAYS, "-subj", "/CN=Seedcast Test CA",
      "-keyout", "ca.key", "-out", "ca.pem",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
    dir,
  );
  openssl(["req", ...EC_ARGS, "-subj", `/CN=${TEST_CERT_HOST}`, "-keyout", "leaf.key", "-out", "leaf.csr"], dir);
  writeFileSync(
    join(dir, "leaf.ext"),
    `subjectAltName=${[TEST_CERT_HOST, ...extraNames].map((n) => `DNS:${n}`).join(",")}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  );
  openssl(
    ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
      "-days", VALID_DAYS, "-out", "leaf.pem", "-extfile", "leaf.ext"],
    dir,
  );
  return {
    dir,
    caPath: join(dir, "ca.pem"),
    caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
    certPem: readFileSync(join(dir, "leaf.pem"), "utf8"),
    keyPem: readFileSync(join(dir, "leaf.key"), "utf8"),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A running local HTTPS server that presents the test CA's `localhost` certificate. */
export interface TestHttpsServer {
  /** `https://localhost:PORT` — the name the certificate is valid for. */
  url: string;
  port: number;
  /** Path of the CA certificate that signed the server's certificate. */
  caPath: string;
  /** PEM of that CA, to pass to a client explicitly. */
  caPem: string;
  /** Stops the server (closing open connections) and deletes the CA files unless a CA was passed in. */
  stop: () => Promise<void>;
}

/** What the handler may see: the request and the peer's address (to prove where a socket landed). */
export type TestHttpsHandler = (request: Request, server: Bun.Server<undefined>) => Response | Promise<Response>;

/**
 * Starts `Bun.serve({ tls })` on 127.0.0.1 and a random free port. Pass `ca` to share one CA between
 * several servers (e.g. two peers that must both be trusted); otherwise a fresh CA is made and disposed on stop.
 * `hostname` + `port` place a second peer on e.g. 127.0.0.2 at the first one's port.
 */
export function startHttpsServer(
  handler: TestHttpsHandler,
  options: { ca?: TestCa; hostname?: string; port?: number } = {},
): TestHttpsServer {
  const ca = options.ca ?? createTestCa();
  const server = Bun.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    tls: { cert: ca.certPem, key: ca.keyPem },
    fetch: handler,
  });
  const port = server.port ?? 0;
  return {
    url: `https://${TEST_CERT_HOST}:${port}`,
    port,
    caPath: ca.caPath,
    caPem: ca.caPem,
    stop: async () => {
      await server.stop(true);
      if (!options.ca) ca.dispose();
    },
  };
}

/**
 * Runs `script` in a child Bun that trusts `ca` the way production does (NODE_EXTRA_CA_CERTS is read at start, so it
 * cannot be set inside this process) and answers its stdout, once it exited. Throws with its stderr if it printed any.
 */
export async function runTrustingCa(ca: Pick<TestCa, "caPath">, script: string): Promise<string> {
  const child = Bun.spawn([process.execPath, "-e", script], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: ca.caPath },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  if (err !== "") throw new Error(`the child process printed to stderr: ${err}`);
  return out;
}
