/**
 * probeImage / probeImageHeader on real encoder output (sharp) and on hand-made hostile headers.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import sharp, { type Sharp } from "sharp";
import { probeImage, probeImageHeader, ProbeError, type ProbeReason } from "../src/lib/image-probe.ts";

async function expectProbeReason(promise: Promise<unknown>, reason: ProbeReason): Promise<void> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ProbeError);
    expect((error as ProbeError).reason).toBe(reason);
    return;
  }
  throw new Error(`expected ProbeError ${reason}, got success`);
}

function canvas(width: number, height: number, channels: 3 | 4 = 3): Sharp {
  return sharp({ create: { width, height, channels, background: { r: 200, g: 40, b: 90, alpha: 0.5 } } });
}

/** A PNG signature + IHDR claiming any size, with no pixel data behind it. */
function pngHeader(width: number, height: number): Uint8Array {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write("IHDR", 12, "ascii");
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b.writeUInt8(8, 24); // bit depth
  b.writeUInt8(6, 25); // RGBA
  return new Uint8Array(b);
}

const samples: Record<string, Uint8Array> = {};

beforeAll(async () => {
  const enc = async (s: Sharp): Promise<Uint8Array> => new Uint8Array(await s.toBuffer());
  samples.png = await enc(canvas(321, 123).png());
  samples.jpeg = await enc(canvas(640, 480).jpeg());
  samples.progressiveJpeg = await enc(canvas(77, 1001).jpeg({ progressive: true }));
  samples.gif = await enc(canvas(50, 60).gif());
  samples.webpLossy = await enc(canvas(333, 222).webp({ quality: 50 }));
  samples.webpLossless = await enc(canvas(129, 257).webp({ lossless: true }));
  samples.webpAlpha = await enc(canvas(100, 90, 4).webp({ quality: 50 }));
});

describe("probeImage accepts every supported type, dimensions from the header", () => {
  test.each([
    ["png", "image/png", "png", 321, 123],
    ["jpeg", "image/jpeg", "jpg", 640, 480],
    ["progressiveJpeg", "image/jpeg", "jpg", 77, 1001],
    ["gif", "image/gif", "gif", 50, 60],
    ["webpLossy", "image/webp", "webp", 333, 222],
    ["webpLossless", "image/webp", "webp", 129, 257],
    ["webpAlpha", "image/webp", "webp", 100, 90],
  ])("%s", async (name, mimeType, ext, width, height) => {
    const bytes = samples[name];
    if (!bytes) throw new Error(`no sample ${name}`);
    expect(await probeImage(bytes)).toEqual({ mimeType, ext, width, height } as never);
    // The streaming probe agrees, on the whole body and on just enough of it.
    const whole = probeImageHeader(bytes);
    expect(whole).toEqual({ status: "ok", probe: { mimeType, ext, width, height } } as never);
  });

  test("the header probe needs only a prefix, answering need_more before it is complete", () => {
    for (const bytes of Object.values(samples)) {
      let firstOk = -1;
      for (let n = 0; n <= Math.min(bytes.length, 4096); n++) {
        const r = probeImageHeader(bytes.subarray(0, n));
        if (r.status === "ok") {
          firstOk = n;
          break;
        }
      }
      expect(firstOk).toBeGreaterThan(0);
      expect(firstOk).toBeLessThan(bytes.length);
    }
  });
});

describe("probeImage refuses", () => {
  test("SVG", async () => {
    const svg = new TextEncoder().encode(
      '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
    );
    await expectProbeReason(probeImage(svg), "unsupported_type");
    expect(() => probeImageHeader(svg)).toThrow(ProbeError);
  });

  test("text named .png", async () => {
    await expectProbeReason(probeImage(new TextEncoder().encode("this is not a picture, whatever the name says")), "unsupported_type");
  });

  test("other real formats (TIFF, BMP-like bytes, PDF)", async () => {
    const tiff = new Uint8Array(await canvas(10, 10).tiff().toBuffer());
    await expectProbeReason(probeImage(tiff), "unsupported_type");
    await expectProbeReason(probeImage(new TextEncoder().encode("%PDF-1.7\n%âãÏÓ\n1 0 obj\n")), "unsupported_type");
  });

  test.each(["png", "jpeg", "gif", "webpLossy", "webpLossless"])("a truncated %s header", async (name) => {
    const bytes = samples[name];
    if (!bytes) throw new Error(`no sample ${name}`);
    // Only the signature survives: the type is known but the dimensions are not.
    const keep: Record<string, number> = { png: 16, jpeg: 12, gif: 8, webpLossy: 12, webpLossless: 12 };
    await expectProbeReason(probeImage(bytes.subarray(0, keep[name])), "unsupported_type");
  });

  test("a PNG header claiming 100000×100000, without any pixel data", async () => {
    await expectProbeReason(probeImage(pngHeader(100_000, 100_000)), "image_dimensions_too_large");
    expect(() => probeImageHeader(pngHeader(100_000, 100_000))).toThrow("over the 40000000-pixel limit");
  });

  test("exactly 40 megapixels passes, one row more does not; the limit is configurable", async () => {
    expect((await probeImage(pngHeader(8000, 5000))).width).toBe(8000);
    await expectProbeReason(probeImage(pngHeader(8000, 5001)), "image_dimensions_too_large");
    await expectProbeReason(probeImage(samples.png ?? new Uint8Array(), 1000), "image_dimensions_too_large");
  });

  test("a header claiming zero width", async () => {
    await expectProbeReason(probeImage(pngHeader(0, 10)), "unsupported_type");
  });

  test("an empty body", async () => {
    await expectProbeReason(probeImage(new Uint8Array(0)), "empty_body");
    expect(probeImageHeader(new Uint8Array(0))).toEqual({ status: "need_more" });
  });
});

describe("properties", () => {
  test("any PNG header size is read back exactly, refused exactly when over the pixel cap", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (w, h) => {
        const bytes = pngHeader(w, h);
        if (w * h > 40_000_000) {
          await expectProbeReason(probeImage(bytes), "image_dimensions_too_large");
        } else {
          const probe = await probeImage(bytes);
          expect([probe.width, probe.height]).toEqual([w, h]);
        }
      }),
      { numRuns: 200 },
    );
  });

  test("random bytes never crash the probes: they answer or throw ProbeError", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          // Random tails behind each real signature reach the per-format header parsers.
          fc.tuple(fc.constantFrom("png", "jpeg", "gif", "webpLossy", "webpLossless"), fc.uint8Array({ maxLength: 48 })).map(
            ([name, tail]) => {
              const head = (samples[name] ?? new Uint8Array()).subarray(0, name === "jpeg" ? 2 : 16);
              return new Uint8Array([...head, ...tail]);
            },
          ),
        ),
        async (bytes) => {
          for (const run of [() => probeImage(bytes), async () => probeImageHeader(bytes)]) {
            try {
              await run();
            } catch (error) {
              expect(error).toBeInstanceOf(ProbeError);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
