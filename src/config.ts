/**
 * Environment → one frozen, validated Config. Fails fast with a message that names the variable.
 */
import { resolve } from "node:path";

export const GENERATOR_KINDS = ["builtin", "openai"] as const;
export type GeneratorKind = (typeof GENERATOR_KINDS)[number];
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Dispatcher tuning defaults (DISPATCH_CONCURRENCY, DISPATCH_LEASE_MS, DISPATCH_POLL_MS). */
export const DISPATCH_DEFAULTS = Object.freeze({ concurrency: 32, leaseMs: 120_000, pollMs: 500 });

/** How the continuous dispatcher runs inside `seedcast serve`. */
export interface DispatchConfig {
  /** Deliveries in flight at once. */
  concurrency: number;
  /** How long a claimed target stays leased before another worker may take it over (ms). */
  leaseMs: number;
  /** Longest idle sleep before looking for due work again (ms). */
  pollMs: number;
}

export interface Prices {
  generateSocialPost: number;
  regenerateCaption: number;
  regenerateImage: number;
  /** The whole price of a `both` regenerate: caption + image at the bundled rate. */
  regenerateBoth: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  baseUrl: string;
  maxImageBytes: number;
  creditsInitial: number;
  allowPrivateHosts: ReadonlySet<string>;
  generator: GeneratorKind;
  openai: { baseUrl: string; apiKey: string; textModel: string; imageModel: string; timeoutMs: number };
  logLevel: LogLevel;
  /** Requests per minute per API key before 429. */
  rateLimitPerMinute: number;
  prices: Prices;
  /** Caption limit in graphemes for generated captions. */
  captionMaxGraphemes: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** Backups: nightly job when set (cron expression), with the number of archives kept. */
  backup: { cron: string | null; dir: string; keep: number };
  dispatch: DispatchConfig;
  /**
   * CORS_ORIGINS: browser origins (`https://app.example.com`) allowed to call /api/v1 and /openapi.json, or `*` for
   * any. Empty (the default): no CORS headers at all.
   */
  corsOrigins: ReadonlySet<string>;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}".`);
  }
  return value;
}

function enumVar<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = raw.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}; got "${raw}".`);
  }
  return value as T;
}

function urlVar(env: Env, name: string, fallback: string): string {
  const raw = (env[name] ?? "").trim() || fallback;
  try {
    const url = new URL(raw);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL; got "${raw}".`);
  }
  return raw.replace(/\/+$/, "");
}

/** CORS_ORIGINS: each entry an exact origin (scheme, host, optional port; no path) or `*`. */
function originsVar(env: Env, name: string): Set<string> {
  const origins = new Set<string>();
  for (const part of (env[name] ?? "").split(",")) {
    const raw = part.trim();
    if (raw === "") continue;
    if (raw === "*") {
      origins.add("*");
      continue;
    }
    let url: URL;
    try {
      url = new URL(raw);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
    } catch {
      throw new ConfigError(`${name} must be comma-separated origins such as https://app.example.com; got "${raw}".`);
    }
    if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
      throw new ConfigError(`${name} entries are origins (scheme://host[:port]) without a path; got "${raw}".`);
    }
    // As browsers send it in Origin: lower-case scheme and host, no default port.
    origins.add(url.origin);
  }
  return origins;
}

/** Reads the configuration from `env` (default: process.env). Throws ConfigError on any invalid value. */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const port = intVar(env, "PORT", 8787, 0, 65535);
  const dataDir = resolve(env.DATA_DIR?.trim() || "./data");
  const config: Config = {
    port,
    host: env.HOST?.trim() || "0.0.0.0",
    dataDir,
    baseUrl: urlVar(env, "BASE_URL", `http://localhost:${port}`),
    maxImageBytes: intVar(env, "MAX_IMAGE_BYTES", 10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    creditsInitial: intVar(env, "CREDITS_INITIAL", 100, 0),
    allowPrivateHosts: new Set(
      (env.ALLOW_PRIVATE_HOSTS ?? "")
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    ),
    generator: enumVar(env, "GENERATOR", GENERATOR_KINDS, "builtin"),
    openai: {
      baseUrl: urlVar(env, "OPENAI_BASE_URL", "https://api.openai.com/v1"),
      apiKey: env.OPENAI_API_KEY ?? "",
      textModel: env.OPENAI_TEXT_MODEL?.trim() || "gpt-4o-mini",
      imageModel: env.OPENAI_IMAGE_MODEL?.trim() || "gpt-image-1",
      timeoutMs: intVar(env, "OPENAI_TIMEOUT_MS", 60_000, 100),
    },
    logLevel: enumVar(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    rateLimitPerMinute: intVar(env, "RATE_LIMIT_PER_MINUTE", 1200, 1),
    prices: {
      generateSocialPost: intVar(env, "PRICE_GENERATE", 5, 0),
      regenerateCaption: intVar(env, "PRICE_REGENERATE_CAPTION", 1, 0),
      regenerateImage: intVar(env, "PRICE_REGENERATE_IMAGE", 4, 0),
      regenerateBoth: intVar(env, "PRICE_REGENERATE_BOTH", 4, 0),
    },
    captionMaxGraphemes: intVar(env, "CAPTION_MAX_GRAPHEMES", 300, 20, 5000),
    metricsToken: env.METRICS_TOKEN?.trim() || null,
    backup: {
      cron: env.BACKUP_CRON?.trim() || null,
      dir: resolve(env.BACKUP_DIR?.trim() || `${dataDir}/backups`),
      keep: intVar(env, "BACKUP_KEEP", 7, 1, 1000),
    },
    dispatch: {
      concurrency: intVar(env, "DISPATCH_CONCURRENCY", DISPATCH_DEFAULTS.concurrency, 1, 1000),
      // Under a second, a slow provider call would lose its lease mid-flight and be taken over.
      leaseMs: intVar(env, "DISPATCH_LEASE_MS", DISPATCH_DEFAULTS.leaseMs, 1000, 3_600_000),
      pollMs: intVar(env, "DISPATCH_POLL_MS", DISPATCH_DEFAULTS.pollMs, 10, 60_000),
    },
    corsOrigins: originsVar(env, "CORS_ORIGINS"),
  };
  if (config.generator === "openai" && !config.openai.apiKey) {
    throw new ConfigError("GENERATOR=openai needs OPENAI_API_KEY.");
  }
  return Object.freeze(config);
}
