/**
 * HTTP Range for one resource of known size (RFC 9110 §14): a single `bytes=` range is honoured; several ranges or
 * an unparsable header are answered with the whole representation (allowed by the RFC); a range that starts past
 * the end is unsatisfiable (416).
 */

export type RangeResult = { kind: "full" } | { kind: "partial"; start: number; end: number } | { kind: "unsatisfiable" };

const SINGLE_RANGE_RE = /^bytes=(\d*)-(\d*)$/i;

/** Interprets a Range header against `size` bytes. `end` is inclusive. */
export function parseRange(header: string | null, size: number): RangeResult {
  if (!header) return { kind: "full" };
  const match = SINGLE_RANGE_RE.exec(header.trim());
  if (!match) return { kind: "full" };
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return { kind: "full" };
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0) return { kind: "unsatisfiable" };
    return { kind: "partial", start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== "" && Number(last) < start) return { kind: "full" };
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "partial", start, end };
}
