import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../scripts/compile.ts";

/**
 * The image toolkit inside the real single binary: compiled with scripts/compile.ts and run from "/", so
 * node_modules, the source tree and system fonts are out of reach (a binary run next to node_modules can
 * pass by accident because Bun bakes build-machine paths into it).
 */
const ROOT = join(import.meta.dir, "..");
const ENTRY = join(ROOT, "test/fixtures/compiled-images-entry.ts");
let dir = "";
let binary = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "seedcast-compiled-images-"));
  binary = join(dir, "images-check");
  await compile(ENTRY, binary);
  expect(await Bun.file(`${binary}.map`).exists()).toBe(false); // one file: the map is embedded
}, 180_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Report {
  caption: string;
  card: { bytes: number; width: number; height: number; altText: string };
  big: number;
  fitted: { bytes: number; width: number; height: number; mimeType: string };
}

test("compiled binary renders a PNG card and fits a big JPEG under 1 MB, run from /", async () => {
  const out = join(dir, "out");
  await Bun.$`mkdir -p ${out}`;
  // A scrubbed environment: no NODE_PATH, no hint where the build tree is.
  const proc = Bun.spawn([binary, out], { cwd: "/", env: { PATH: "/usr/bin:/bin", TMPDIR: tmpdir() }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as Report;

  const png = new Uint8Array(await Bun.file(join(out, "card.png")).arrayBuffer());
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(png.buffer, png.byteOffset);
  expect({ w: view.getUint32(16), h: view.getUint32(20) }).toEqual({ w: 1080, h: 1350 });
  expect(png.byteLength).toBe(report.card.bytes);
  expect(png.byteLength).toBeGreaterThan(10_000); // glyphs were drawn: a blank card compresses to a few KB
  expect(png.byteLength).toBeLessThan(1_000_000);
  expect(report.card.altText).toContain("COMPILED CARD CHECK");
  expect(report.caption).toContain("Rendered inside the single binary.");

  expect(report.big).toBeGreaterThan(1_000_000);
  const jpg = new Uint8Array(await Bun.file(join(out, "fitted.jpg")).arrayBuffer());
  expect([...jpg.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  expect(jpg.byteLength).toBeLessThanOrEqual(1_000_000);
  expect(report.fitted).toMatchObject({ mimeType: "image/jpeg", width: 2000, height: 1500 });

  const size = (await stat(binary)).size;
  console.log(`compiled images binary: ${(size / 1e6).toFixed(1)} MB; card ${png.byteLength} B; fitted ${report.big} → ${jpg.byteLength} B`);
}, 120_000);
