/**
 * Builds one self-contained executable with `bun build --compile`.
 *
 * Flags, chosen deliberately:
 * - `--no-compile-autoload-dotenv` and `--no-compile-autoload-bunfig`: a compiled binary would otherwise read
 *   `.env` and `bunfig.toml` from whatever directory it is started in. Seedcast is a service started from
 *   systemd units, containers and shells in arbitrary directories; a stray `.env` silently changing its
 *   configuration (or a `bunfig.toml` changing preload/runtime behaviour) is a support nightmare. Its
 *   configuration comes only from the process environment and its own config (decisions.md), so both are off.
 *   (tsconfig.json/package.json autoload are already off by default for compiled binaries.)
 * - `--minify-syntax --minify-whitespace` (not identifiers) keep the binary smaller while stack traces and
 *   class names stay readable; `--sourcemap=inline` embeds the map in the executable so traces name the source
 *   files and lines (verified: still mapped after the side file is deleted). Bun 1.4.5 also writes an
 *   `<outfile>.map` next to it; compile() deletes that so the build stays ONE file.
 * - `--bytecode`: the bundle is compiled to JavaScriptCore bytecode at build time, so a start skips parsing it
 *   (`seedcast version` 0.14 s → 0.03 s here). Bytecode is tied to the Bun version, which package.json pins.
 *   NB: it needs a bundle without top-level await (src/main.ts keeps to that).
 * - Native pieces need no flags: sharp's addon is embedded by the bundler and libvips is embedded as a file
 *   import in src/lib/sharp.ts; fonts and wasm are file imports too.
 * Usage: `bun scripts/compile.ts <entry> <outfile>`; the product build calls compile("src/main.ts", "dist/seedcast").
 */

import { rm } from "node:fs/promises";

/** The flags every Seedcast executable is built with (see above). */
export const COMPILE_FLAGS = [
  "--compile",
  "--bytecode",
  "--target=bun",
  "--minify-syntax",
  "--minify-whitespace",
  "--sourcemap=inline",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
] as const;

/** Compiles `entry` to a standalone executable at `outfile`; throws with bun's output when the build fails. */
export async function compile(entry: string, outfile: string): Promise<void> {
  // process.execPath is the bun running this script: the pinned version builds the binary.
  const proc = Bun.spawn([process.execPath, "build", ...COMPILE_FLAGS, entry, "--outfile", outfile], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) {
    throw new Error(`bun build --compile ${entry} failed (exit ${code}):\n${stderr || stdout}`);
  }
  await rm(`${outfile}.map`, { force: true }); // the map is embedded; the side file is redundant
}

if (import.meta.main) {
  const [entry, outfile] = process.argv.slice(2);
  if (!entry || !outfile) {
    console.error("usage: bun scripts/compile.ts <entry> <outfile>");
    process.exit(2);
  }
  await compile(entry, outfile);
  console.log(`compiled ${entry} → ${outfile}`);
}
