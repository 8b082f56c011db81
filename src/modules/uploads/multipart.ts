/**
 * Reads the upload page's multipart/form-data body under a byte cap, counted while streaming (a chunked body has no
 * Content-Length to trust), and returns the `file` field. Memory stays within about twice the cap.
 */
import { AppError, invalidField } from "../../lib/errors";

/** Room for the multipart framing and any small extra fields around the image. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
export const FILE_FIELD = "file";

async function readCapped(request: Request, cap: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  const tooLarge = () =>
    new AppError("image_too_large", `The image is larger than ${cap - MULTIPART_OVERHEAD_BYTES} bytes.`, {
      maxBytes: cap - MULTIPART_OVERHEAD_BYTES,
    });
  if (Number.isFinite(declared) && declared > cap) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** The file posted in the `file` field: its bytes and the name the browser gave it. */
export async function readUploadedFile(request: Request, maxImageBytes: number): Promise<{ bytes: Uint8Array; name: string | null }> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) {
    throw invalidField(FILE_FIELD, "send the image as multipart/form-data in the field `file`");
  }
  const raw = await readCapped(request, maxImageBytes + MULTIPART_OVERHEAD_BYTES);
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
  } catch {
    throw invalidField(FILE_FIELD, "the multipart body could not be read");
  }
  const file = form.get(FILE_FIELD);
  if (!(file instanceof Blob)) throw invalidField(FILE_FIELD, "choose an image first");
  const name = file instanceof File && file.name ? file.name : null;
  return { bytes: new Uint8Array(await file.arrayBuffer()), name };
}
