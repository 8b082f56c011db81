/**
 * Reads the upload page's multipart/form-data body under a byte cap (the image cap plus a little framing), enforced as
 * it streams, before anything is parsed (http/form-body.ts), and returns the `file` field. The file's bytes are held
 * once: written as they arrive into one buffer of the declared length.
 */
import { type FileInspector, isUploadedFile, readForm } from "../../http/form-body";
import { AppError, invalidField } from "../../lib/errors";
import { ProbeError, probeImageHeader } from "../../lib/image-probe";
import { MAX_PIXELS } from "../assets/ingest";

/** Room for the multipart framing and any small extra fields around the image. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
export const FILE_FIELD = "file";

/**
 * Refuses the `file` part from its first bytes when they are not a PNG, JPEG, GIF or WebP header, or one over the
 * pixel or decoded-size limits: the rest of the body is then never read. The full checks run on the whole file.
 */
const inspectImage: FileInspector = (field, head) => {
  if (field !== FILE_FIELD) return "ok";
  try {
    return probeImageHeader(head, MAX_PIXELS).status === "ok" ? "ok" : "more";
  } catch (error) {
    if (error instanceof ProbeError) throw new AppError(error.reason, error.message);
    throw error;
  }
};

/** The file posted in the `file` field: its bytes and the name the browser gave it. */
export async function readUploadedFile(request: Request, maxImageBytes: number): Promise<{ bytes: Uint8Array; name: string | null }> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) {
    throw invalidField(FILE_FIELD, "send the image as multipart/form-data in the field `file`");
  }
  let form: Awaited<ReturnType<typeof readForm>>;
  try {
    form = await readForm(request, maxImageBytes + MULTIPART_OVERHEAD_BYTES, inspectImage);
  } catch (error) {
    if (error instanceof AppError && error.code === "payload_too_large") {
      throw new AppError("image_too_large", `The image is larger than ${maxImageBytes} bytes.`, { maxBytes: maxImageBytes });
    }
    if (error instanceof AppError && error.code === "invalid_request") throw invalidField(FILE_FIELD, "the multipart body could not be read");
    throw error;
  }
  const value = form[FILE_FIELD];
  const file = Array.isArray(value) ? value.find(isUploadedFile) : value;
  if (!isUploadedFile(file)) throw invalidField(FILE_FIELD, "choose an image first");
  if (file.bytes.byteLength > maxImageBytes) {
    throw new AppError("image_too_large", `The image is larger than ${maxImageBytes} bytes.`, { maxBytes: maxImageBytes });
  }
  return { bytes: file.bytes, name: file.name || null };
}
