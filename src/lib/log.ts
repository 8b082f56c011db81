/**
 * Structured JSON-lines logging. One object per line on stdout. Secrets never reach it: callers log ids and codes,
 * and `redactHeaders` is the only way request headers may be logged.
 */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const SECRET_HEADERS = new Set(["authorization", "cookie", "set-cookie", "x-api-key", "proxy-authorization"]);

export interface Logger {
  /** Whether lines at `level` are written (so a hot path can skip building them). */
  enabled(level: LogLevel): boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** A logger that writes JSON lines at or above `level` to `write` (default: stdout). */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    write(`${JSON.stringify({ ts: new Date().toISOString(), level: lvl, msg, ...fields })}\n`);
  };
  return {
    enabled: (lvl) => RANK[lvl] >= min,
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
  };
}

/** Copies headers into a plain object with every credential-bearing header replaced by "[redacted]". */
export function redactHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => {
    out[key] = SECRET_HEADERS.has(key.toLowerCase()) ? "[redacted]" : value;
  });
  return out;
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger("silent", () => {});
