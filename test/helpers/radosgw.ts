/**
 * A real S3 server for tests: Ceph's radosgw from Debian (scripts/test-setup.sh installs radosgw, ceph-mon and
 * ceph-osd) on a one-node cluster in a temp dir, all on 127.0.0.1 and free ports: one monitor, one memstore OSD
 * (RAM only), radosgw's beast frontend. cephx is off inside the cluster; the S3 frontend still checks every SigV4
 * signature. `startRadosgw()` also creates an S3 user and a bucket; `stop()` ends the three daemons (which this
 * helper started, by their pids) and removes the dir. Takes 12–14 s: share one per test file.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Radosgw {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** How long the cluster took from nothing to a created bucket (ms). */
  startMs: number;
  /** MEDIA_STORE=s3 and the S3_* variables for a Seedcast config pointed at this bucket. */
  env(overrides?: Record<string, string>): Record<string, string>;
  /** Creates another bucket (signed by curl's own SigV4). */
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** The SHA-256 of an empty body: curl's --aws-sigv4 needs it stated for a body-less PUT. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const REGION = "us-east-1";

/** A port nothing listens on right now (the OS picks it). */
function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

async function run(cmd: string[], what: string): Promise<string> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${err.trim() || out.trim()}`);
  return out;
}

function requireBinaries(): void {
  for (const bin of ["monmaptool", "ceph-mon", "ceph-osd", "radosgw", "radosgw-admin", "ceph", "curl"]) {
    if (!Bun.which(bin)) throw new Error(`${bin} is missing: run scripts/test-setup.sh (apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd)`);
  }
}

/** Starts mon + osd + radosgw, creates a user and `bucket`. */
export async function startRadosgw({ bucket = "seedcast-media" }: { bucket?: string } = {}): Promise<Radosgw> {
  requireBinaries();
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "seedcast-radosgw-"));
  for (const sub of ["run", "log", "mon", "osd", "rgw"]) mkdirSync(join(dir, sub));
  const monPort = freePort();
  const rgwPort = freePort();
  const fsid = crypto.randomUUID();
  const conf = join(dir, "ceph.conf");
  // The ms_*_mode lines: without them radosgw loops on "get_initial_auth_request returned -13" (auth is off).
  writeFileSync(
    conf,
    `[global]
fsid = ${fsid}
mon_host = v2:127.0.0.1:${monPort}
mon_initial_members = a
public_addr = 127.0.0.1
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_mon_client_mode = crc secure
ms_mon_service_mode = crc secure
ms_mon_cluster_mode = crc secure
ms_client_mode = crc secure
ms_service_mode = crc secure
ms_cluster_mode = crc secure
ms_bind_msgr1 = false
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
mon_max_pg_per_osd = 1000
osd_crush_chooseleaf_type = 0
run_dir = ${dir}/run
admin_socket = ${dir}/run/$name.asok
log_file = ${dir}/log/$name.log
pid_file = ${dir}/run/$name.pid
mon_data = ${dir}/mon/$name
osd_data = ${dir}/osd/$name
osd_objectstore = memstore
memstore_device_bytes = 1073741824
[client.rgw.a]
rgw_frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw_data = ${dir}/rgw
`,
  );
  const daemons: ReturnType<typeof Bun.spawn>[] = [];
  const daemon = (cmd: string[]) => {
    // -f: stay in the foreground, so the pid is the daemon's own and stop() can end it.
    const proc = Bun.spawn([...cmd, "-f", "-c", conf], { stdout: "ignore", stderr: "ignore" });
    daemons.push(proc);
    return proc;
  };
  // A process that dies without stop() (a crash, a signal) must not leave the daemons behind. NB: `bun test` fires no
  // process "exit" event, so under it only the signals are covered: test files call stop() in afterAll (the run's shared
  // one is stopped by test/helpers/run-end.ts).
  const killOnExit = () => {
    for (const proc of daemons) proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    killOnExit();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("exit", killOnExit);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    process.removeListener("SIGTERM", onSignal);
    process.removeListener("SIGINT", onSignal);
    for (const proc of daemons.reverse()) {
      proc.kill("SIGTERM");
      const ended = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
      if (!ended) {
        proc.kill("SIGKILL");
        await proc.exited;
      }
    }
    daemons.length = 0;
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await run(["monmaptool", "--create", "--fsid", fsid, "--addv", "a", `[v2:127.0.0.1:${monPort}]`, join(dir, "monmap")], "monmaptool");
    await run(["ceph-mon", "--mkfs", "-i", "a", "--monmap", join(dir, "monmap"), "-c", conf], "ceph-mon --mkfs");
    daemon(["ceph-mon", "-i", "a"]);
    const osdUuid = crypto.randomUUID();
    const osdId = (await run(["ceph", "-c", conf, "--connect-timeout", "30", "osd", "new", osdUuid], "ceph osd new")).trim();
    mkdirSync(join(dir, "osd", `osd.${osdId}`));
    await run(["ceph-osd", "-i", osdId, "--mkfs", "--osd-uuid", osdUuid, "-c", conf], "ceph-osd --mkfs");
    daemon(["ceph-osd", "-i", osdId]);
    const rgw = daemon(["radosgw", "-n", "client.rgw.a"]);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    for (let ready = false; !ready; ) {
      if (rgw.exitCode !== null) throw new Error(`radosgw exited (${rgw.exitCode}); see ${dir}/log`);
      if (performance.now() - started > 90_000) throw new Error(`radosgw did not answer within 90 s; see ${dir}/log`);
      ready = await fetch(endpoint, { signal: AbortSignal.timeout(1000) }).then(
        () => true,
        () => false,
      );
      if (!ready) await Bun.sleep(200);
    }
    const accessKeyId = `SEEDCAST${crypto.randomUUID().replaceAll("-", "").slice(0, 12).toUpperCase()}`;
    const secretAccessKey = Buffer.from(crypto.getRandomValues(new Uint8Array(30))).toString("base64url");
    await run(
      ["radosgw-admin", "-c", conf, "user", "create", "--uid=seedcast", "--display-name=Seedcast tests", `--access-key=${accessKeyId}`, `--secret-key=${secretAccessKey}`],
      "radosgw-admin user create",
    );
    const createBucket = async (name: string) => {
      const status = await run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", `aws:amz:${REGION}:s3`, "--user", `${accessKeyId}:${secretAccessKey}`, "-H", `x-amz-content-sha256: ${EMPTY_SHA256}`, "-X", "PUT", `${endpoint}/${name}`],
        "bucket create",
      );
      if (status !== "200") throw new Error(`creating bucket ${name} answered HTTP ${status}`);
    };
    await createBucket(bucket);
    const startMs = Math.round(performance.now() - started);
    return {
      endpoint,
      bucket,
      region: REGION,
      accessKeyId,
      secretAccessKey,
      startMs,
      env: (overrides = {}) => ({
        MEDIA_STORE: "s3",
        S3_ENDPOINT: endpoint,
        S3_BUCKET: bucket,
        S3_REGION: REGION,
        S3_ACCESS_KEY_ID: accessKeyId,
        S3_SECRET_ACCESS_KEY: secretAccessKey,
        ...overrides,
      }),
      createBucket,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
