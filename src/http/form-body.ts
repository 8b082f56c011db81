/**
 * Form bodies (application/x-www-form-urlencoded and multipart/form-data) read under a byte cap that is enforced as
 * the body streams, before anything is parsed: a declared Content-Length over the cap is refused without reading a
 * byte, and a chunked body is cut off at the first byte past it. Multipart is parsed as it streams (@fastify/busboy);
 * the bytes of uploaded files are written once into one buffer sized by the declared length, so a request never
 * holds its body twice.
 *
 * Every route that takes a form names its own cap (`parse: formParser(...)`); the server-wide limit (Bun's
 * maxRequestBodySize, the image cap plus framing) only bounds what no route claims.
 */
import { readStreamCapped } from "../lib/read-capped";
import { Busboy } from "@fastify/busboy";
import { AppError } from "../lib/errors";

/** A file part of a multipart form. `bytes` may be a view into a buffer shared with the request's other files. */
export interface UploadedFile {
  readonly kind: "file";
  name: string;
  type: string;
  bytes: Uint8Array;
}

export type FormValue = string | UploadedFile | (string | UploadedFile)[];
export type FormFields = Record<string, FormValue>;

/** The answer of a form parser that refused the body (the route renders it in its own way). */
export class BodyRefused {
  constructor(readonly error: AppError) {}
}

/** Most fields, files and parts one form may carry. */
const MAX_FIELDS = 100;
const MAX_FILES = 20;

function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `This form is limited to ${maxBytes} bytes.`, { maxBytes });
}

function refuseNul(name: string, value: string): void {
  if (value.includes("\u0000") || name.includes("\u0000")) {
    throw new AppError("invalid_request", "The form holds a NUL character, which no field accepts.", {
      details: [{ field: name.replace(/\u0000/g, ""), problem: "must not contain NUL characters" }],
    });
  }
}

function add(fields: FormFields, name: string, value: string | UploadedFile): void {
  const existing = fields[name];
  if (existing === undefined) fields[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else fields[name] = [existing, value];
}

/** The declared length, or null for a chunked body. Throws when it is over `maxBytes`. */
function declaredLength(request: Request, maxBytes: number): number | null {
  const header = request.headers.get("content-length");
  if (header === null) return null;
  const length = Number(header);
  if (!Number.isFinite(length) || length < 0) throw new AppError("invalid_request", "Content-Length is not a number.");
  if (length > maxBytes) throw tooLarge(maxBytes);
  return length;
}

/** Reads the whole (small) urlencoded body under the cap. */
async function readUrlencoded(request: Request, maxBytes: number): Promise<FormFields> {
  declaredLength(request, maxBytes);
  const bytes = await readCapped(request.body, maxBytes);
  const fields: FormFields = {};
  let count = 0;
  for (const [name, value] of new URLSearchParams(new TextDecoder().decode(bytes))) {
    if (++count > MAX_FIELDS) throw new AppError("invalid_request", `A form carries at most ${MAX_FIELDS} fields.`);
    refuseNul(name, value);
    add(fields, name, value);
  }
  return fields;
}

/** The whole of `stream`, counted as it arrives: payload_too_large as soon as it passes `maxBytes`. */
async function readCapped(stream: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array> {
  const bytes = await readStreamCapped(stream, maxBytes);
  if (bytes === null) throw tooLarge(maxBytes);
  return bytes;
}

/** Where a request's file bytes go: one buffer of the declared length, or growing chunks when none was declared. */
class FileArena {
  private readonly buffer: Uint8Array | null;
  private used = 0;
  constructor(declared: number | null) {
    this.buffer = declared === null ? null : new Uint8Array(declared);
  }

  /** Collects one file's chunks; `head` answers its bytes so far, `finish` all of them. */
  open(): { write(chunk: Uint8Array): void; head(): Uint8Array; finish(): Uint8Array } {
    const start = this.used;
    const chunks: Uint8Array[] = [];
    return {
      head: () => (this.buffer ? this.buffer.subarray(start, this.used) : new Uint8Array(Buffer.concat(chunks))),
      write: (chunk) => {
        if (this.buffer) {
          // File bytes are part of the body, so they always fit in the declared length; a body longer than it
          // declared is cut off by the cap check before this could overflow.
          this.buffer.set(chunk.subarray(0, this.buffer.length - this.used), this.used);
          this.used = Math.min(this.buffer.length, this.used + chunk.byteLength);
        } else {
          chunks.push(Uint8Array.from(chunk));
        }
      },
      finish: () => (this.buffer ? this.buffer.subarray(start, this.used) : new Uint8Array(Buffer.concat(chunks))),
    };
  }
}

/**
 * Looks at the first bytes of a file part as they arrive: "more" to see more of it, "ok" once satisfied; throwing an
 * AppError stops reading the body at once (an upload that is not an image need not arrive whole to be refused).
 */
export type FileInspector = (field: string, head: Uint8Array) => "more" | "ok";

/** Parses a multipart body as it streams, under the cap. */
async function readMultipart(request: Request, contentType: string, maxBytes: number, inspect?: FileInspector): Promise<FormFields> {
  const declared = declaredLength(request, maxBytes);
  const fields: FormFields = {};
  const arena = new FileArena(declared);
  let failure: unknown = null;
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: { "content-type": contentType },
      limits: { fields: MAX_FIELDS, files: MAX_FILES, parts: MAX_FIELDS + MAX_FILES, fieldSize: maxBytes, fileSize: maxBytes },
    });
  } catch {
    throw new AppError("invalid_request", "The multipart body has no boundary.");
  }
  const pending: Promise<void>[] = [];
  parser.on("field", (name: string, value: string) => {
    try {
      refuseNul(name, value);
      add(fields, name, value);
    } catch (error) {
      failure ??= error;
    }
  });
  parser.on("file", (name: string, stream: NodeJS.ReadableStream, fileName: string, _encoding: string, mimeType: string) => {
    const sink = arena.open();
    let inspecting = inspect !== undefined;
    pending.push(
      new Promise<void>((resolve) => {
        stream.on("data", (chunk: Uint8Array) => {
          if (failure) return;
          sink.write(chunk);
          if (!inspecting || !inspect) return;
          try {
            inspecting = inspect(name, sink.head()) === "more";
          } catch (error) {
            failure ??= error;
          }
        });
        stream.on("end", () => {
          add(fields, name, { kind: "file", name: fileName ?? "", type: mimeType ?? "", bytes: sink.finish() });
          resolve();
        });
        stream.on("error", (error: unknown) => {
          failure ??= error;
          resolve();
        });
      }),
    );
  });
  for (const limit of ["partsLimit", "filesLimit", "fieldsLimit"] as const) {
    parser.on(limit, () => {
      failure ??= new AppError("invalid_request", `A form carries at most ${MAX_FIELDS} fields and ${MAX_FILES} files.`);
    });
  }
  const finished = new Promise<void>((resolve) => {
    parser.on("finish", () => resolve());
    parser.on("error", (error: unknown) => {
      failure ??= error;
      resolve();
    });
  });

  const reader = request.body?.getReader();
  let total = 0;
  try {
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) throw tooLarge(maxBytes);
      if (declared !== null && total > declared) throw new AppError("invalid_request", "The body is longer than its Content-Length.");
      if (!parser.write(value)) await new Promise((resolve) => parser.once("drain", resolve));
      if (failure) break;
    }
  } catch (error) {
    await reader?.cancel().catch(() => undefined);
    parser.destroy();
    throw error;
  }
  if (failure) {
    await reader?.cancel().catch(() => undefined);
    parser.destroy();
  } else {
    parser.end();
    await finished;
    await Promise.all(pending);
  }
  if (failure instanceof AppError) throw failure;
  if (failure) throw new AppError("invalid_request", "The multipart body could not be read.");
  return fields;
}

/**
 * The form of `request` under `maxBytes`: urlencoded or multipart; {} for any other type or no body. Throws AppError:
 * payload_too_large (over the cap, declared or counted), invalid_request (malformed, NUL in a field, too many fields),
 * or what `inspect` threw about a file part.
 */
export async function readForm(request: Request, maxBytes: number, inspect?: FileInspector): Promise<FormFields> {
  const contentType = request.headers.get("content-type") ?? "";
  const type = contentType.split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") return readUrlencoded(request, maxBytes);
  if (type === "multipart/form-data") return readMultipart(request, contentType, maxBytes, inspect);
  return {};
}

/**
 * An Elysia `parse` option reading forms under `maxBytes`. `admit` runs before a byte is read: when it answers false
 * (no session, say) the body is left unread and the handler gets {}. A refusal comes back as BodyRefused.
 */
export function formParser(maxBytes: number, admit?: (request: Request) => boolean | Promise<boolean>) {
  return async ({ request }: { request: Request }): Promise<FormFields | BodyRefused> => {
    if (admit && !(await admit(request))) return {};
    try {
      return await readForm(request, maxBytes);
    } catch (error) {
      if (error instanceof AppError) return new BodyRefused(error);
      throw error;
    }
  };
}

/** True for a file part. */
export function isUploadedFile(value: unknown): value is UploadedFile {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "file";
}
