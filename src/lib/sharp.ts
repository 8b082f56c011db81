/**
 * Loads sharp so that it works both from source and inside a `bun build --compile` binary.
 *
 * Why the detour (measured, see /work/shared/guides/images.md): in a compiled binary Bun extracts sharp's
 * `.node` addon to a temp dir, where its RPATH no longer points at `libvips-cpp.so.<ver>`, so `require("sharp")`
 * fails to open the library. We embed that shared library as a file and `dlopen` it first with bun:ffi: the
 * dynamic loader then finds the already-loaded soname when the addon asks for it.
 *
 * The import below names the libvips build for linux-x64 via the package's `./binary` export; a sharp
 * upgrade that changes libvips is picked up automatically as long as that export stays. The host needs
 * libstdc++ and an exec-allowed temp dir.
 */
import { dlopen, FFIType } from "bun:ffi";
import type SharpDefault from "sharp";
// Embedded into the compiled binary as a file; from source this is the real path in node_modules.
import libvipsPath from "@img/sharp-libvips-linux-x64/binary" with { type: "file" };

/** The sharp factory function (what `import sharp from "sharp"` gives). */
export type Sharp = typeof SharpDefault;

/** Prefix of paths inside a compiled binary's embedded file system. */
const BUNFS_PREFIX = "/$bunfs/";

let cached: Sharp | undefined;
/** Kept alive for the process: closing it would unload libvips under the addon. */
let libvipsHandle: { close(): void } | undefined;

/**
 * Returns the sharp factory, preloading the embedded libvips first when running compiled.
 * Safe to call many times; loads once.
 */
export function loadSharp(): Sharp {
  if (cached) return cached;
  if (libvipsPath.startsWith(BUNFS_PREFIX) || process.platform === "linux") {
    // From source the dlopen is harmless (same file the addon would load); compiled it is required.
    try {
      // bun:ffi wants at least one symbol; vips_version(int) is a stable libvips C entry point.
      libvipsHandle = dlopen(libvipsPath, { vips_version: { args: [FFIType.i32], returns: FFIType.i32 } });
    } catch (err) {
      if (libvipsPath.startsWith(BUNFS_PREFIX)) {
        throw new Error(`could not load embedded libvips from ${libvipsPath}`, { cause: err });
      }
    }
  }
  // A literal `require` (not a static import, not createRequire): it runs after the dlopen above, and the
  // bundler still sees it and embeds sharp with its addon.
  const mod = require("sharp") as Sharp | { default: Sharp };
  cached = typeof mod === "function" ? mod : mod.default;
  return cached;
}
