/**
 * Issue 27 bench: POST /api/v1/schedule/import of a 10,000-row CSV file to a real `seedcast serve` (from source, in a
 * child process, over HTTP: auth, the CSV body, every row checked, one write for every creation and post). The rows look like a
 * month of a team's posts: captions of about 200 characters, a first comment on every third, one in ten with an image
 * of the library (a `{base_url}/media/…` URL, reused, not fetched), one in ten queued into a posting schedule with a slot
 * every 10 minutes, the others at times of their own. Peak RSS is the server process's own high-water mark (VmHWM of
 * /proc/<pid>/status, the kernel's count: the runtime, the database connections and SQLite's cache included), read
 * after the import; the RSS after start-up and one warm-up request is printed beside it.
 * Goal: < 10 s and < 200 MB peak RSS; the ratio of each to its goal is printed.
 * Usage: bun bench/import.ts [--rows N] [--json]   (SEEDCAST_TEST_DATABASE=postgres for PostgreSQL)
 */
import { isoAt } from "../src/lib/clock";
import { assetUrl, ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { putSlots } from "../src/modules/schedule/slots";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, startChildServer } from "../test/helpers/child-server";
import { createWorld } from "../test/helpers/world";
import { stopTestServices } from "../test/helpers/test-database";
import { startWebhookReceiver } from "../test/peers/webhook-receiver";
import { solidPng, WEBHOOK_SECRET } from "../test/publishing-fixtures";

const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const ROWS = argOf("rows", 10_000);
const GOAL_MS = 10_000;
const GOAL_RSS_MB = 200;
const json = args.includes("--json");
const MB = 1024 * 1024;

/** A line of /proc/<pid>/status in MB (VmHWM: the peak resident set; VmRSS: the current one). */
function procMB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`)) ?? "";
  return Number(/(\d+)\s*kB/.exec(line)?.[1] ?? 0) / 1024;
}

const ROOT = resolve(import.meta.dir, "..");
const receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
const world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "1000000" } });
try {
  const account = await world.createAccount();
  const hook = (await addConnection(world.deps, { accountId: account.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET })).accountId;
  const times = Array.from({ length: 144 }, (_, i) => `${String(Math.floor(i / 6)).padStart(2, "0")}:${String((i % 6) * 10).padStart(2, "0")}`);
  await putSlots(world.deps, { accountId: account.accountId, role: "owner" }, {
    timeZone: "UTC",
    slots: times.map((time) => ({ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], time, targets: [hook] })),
  });
  const image = await ingestImageBytes(world.deps, account.accountId, { bytes: await solidPng(), fileName: "bench" });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // The server's own library URL of the image (its BASE_URL), which the import reuses rather than fetches.
  const imageUrl = assetUrl({ config: { ...world.deps.config, baseUrl: base } }, image);
  const now = Date.now(); // the server runs on the real clock
  const filler = "Fresh from the oven this morning: rye, spelt and our seeded sourdough, baked slowly overnight with flour from the mill down the road";
  const lines = ["caption,image_urls,alt_texts,scheduled_time,queue,targets,first_comment"];
  for (let i = 0; i < ROWS; i++) {
    const queued = i % 10 === 5;
    const withImage = i % 10 === 0;
    lines.push(
      [
        `"Post ${i + 1}. ${filler}, ""and more"" (${i % 7} of 7)."`,
        withImage ? imageUrl : "",
        withImage ? "Three loaves on a wooden board" : "",
        queued ? "" : isoAt(now + 3_600_000 + i * 61_000),
        queued ? "true" : "",
        "webhook",
        i % 3 === 0 ? `"Order ahead, comment ${i + 1}"` : "",
      ].join(","),
    );
  }
  const csv = lines.join("\r\n");

  const server = await startChildServer([process.execPath, "src/main.ts", "serve"], {
    cwd: ROOT,
    port,
    logFile: join(tmpdir(), `seedcast-bench-import-${process.pid}.log`),
    env: { ...world.env(), BASE_URL: base, ALLOW_PRIVATE_HOSTS: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "1000000", LOG_LEVEL: "warn" },
  });
  let ms = 0;
  let baseline = 0;
  let peak = 0;
  try {
    const pid = server.proc.pid;
    const headers = { authorization: `Bearer ${account.key}` };
    if ((await fetch(`${base}/api/v1/schedule/targets`, { headers })).status !== 200) throw new Error("the server refused the key");
    baseline = procMB(pid, "VmRSS");
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/schedule/import`, { method: "POST", headers: { ...headers, "content-type": "text/csv" }, body: csv });
    const answer = (await res.json()) as { imported?: number };
    ms = performance.now() - started;
    peak = procMB(pid, "VmHWM");
    if (res.status !== 200 || answer.imported !== ROWS) throw new Error(`import answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  } finally {
    server.proc.kill("SIGTERM");
    await server.proc.exited;
  }

  const result = {
    dialect: world.dialect,
    rows: ROWS,
    fileMB: +(csv.length / MB).toFixed(2),
    ms: Math.round(ms),
    peakRssMB: +peak.toFixed(1),
    baselineRssMB: +baseline.toFixed(1),
    ratioTime: +(ms / GOAL_MS).toFixed(2),
    ratioRss: +(peak / GOAL_RSS_MB).toFixed(2),
    goalMs: GOAL_MS,
    goalRssMB: GOAL_RSS_MB,
  };
  const met = ms < GOAL_MS && peak < GOAL_RSS_MB;
  if (json) {
    // The row format of bench/run.ts's table.
    console.log(
      JSON.stringify({
        bench: "import",
        ...result,
        met,
        figures: [
          { label: `${result.dialect}: ${ROWS}-row CSV import, time`, value: result.ms, unit: "ms", goal: `< ${GOAL_MS} ms (${result.ratioTime}× of it)`, ok: ms < GOAL_MS },
          { label: `${result.dialect}: ${ROWS}-row CSV import, server peak RSS`, value: result.peakRssMB, unit: "MB", goal: `< ${GOAL_RSS_MB} MB (${result.ratioRss}× of it)`, ok: peak < GOAL_RSS_MB },
        ],
      }),
    );
  }
  else {
    console.log(`${result.dialect}: ${ROWS} rows (${result.fileMB} MB of CSV) imported in one request to seedcast serve`);
    console.log(`time      ${result.ms} ms          ratio to the 10 s goal: ${result.ratioTime}×`);
    console.log(`peak RSS  ${result.peakRssMB} MB of the server (${result.baselineRssMB} MB before the import)   ratio to the 200 MB goal: ${result.ratioRss}×`);
    console.log(`goal < 10 s and < 200 MB: ${met ? "met" : "NOT met"}`);
  }
} finally {
  await world.close();
  await receiver.stop();
  await stopTestServices();
}
