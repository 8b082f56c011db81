/**
 * Environment → one frozen, validated Config. Fails fast with a message that names the variable.
 */
import { resolve } from "node:path";
import ipaddr from "ipaddr.js";
import { INSTANCE_SECRET_MIN_BYTES, decodeBase64Secret } from "./lib/instance-secret";
import { LOG_LEVELS, type LogLevel } from "./lib/log";
import { OriginOverrideError, parseOriginOverrides, type OriginOverrides } from "./lib/origin-overrides";

export const GENERATOR_KINDS = ["builtin", "openai"] as const;
/** The environment variables that choose the language model server; each wins over the Instance page's value. */
export const MODEL_ENV_VARS = ["GENERATOR", "OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_TEXT_MODEL", "OPENAI_IMAGE_MODEL"] as const;
export type ModelEnvVar = (typeof MODEL_ENV_VARS)[number];
export type GeneratorKind = (typeof GENERATOR_KINDS)[number];
export const MEDIA_STORES = ["local", "s3"] as const;
export type MediaStoreKind = (typeof MEDIA_STORES)[number];

/**
 * Dispatcher tuning defaults (DISPATCH_CONCURRENCY, DISPATCH_LEASE_MS, DISPATCH_POLL_MS). Concurrency 128 (was 32,
 * issue 22): a slot is held until the outcome is recorded, and on PostgreSQL a batch's claim, stamp and outcome take
 * about 20 round trips; 32 slots capped one replica below 10,000 posts due in 10 s (docs/benchmarks/dispatch.md).
 */
export const DISPATCH_DEFAULTS = Object.freeze({ concurrency: 128, leaseMs: 120_000, pollMs: 500 });

/**
 * Token refreshes the daily job keeps in flight at once (TOKEN_REFRESH_CONCURRENCY). One at a time, 10,000 sign-ins at
 * a token endpoint answering in 150 ms take about half an hour; 8 keep it to minutes while staying gentle with each
 * network (docs/benchmarks/networks-six.md).
 */
export const TOKEN_REFRESH_CONCURRENCY_DEFAULT = 8;

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

/**
 * An S3 bucket's settings. The secret is a private field behind a getter, so printing (Bun.inspect, console.log, a
 * log line) or serialising the config never shows it.
 */
export class S3MediaConfig {
  readonly kind = "s3" as const;
  readonly #secretAccessKey: string;
  constructor(
    readonly endpoint: string,
    readonly bucket: string,
    readonly region: string,
    readonly accessKeyId: string,
    secretAccessKey: string,
  ) {
    this.#secretAccessKey = secretAccessKey;
    Object.freeze(this);
  }
  get secretAccessKey(): string {
    return this.#secretAccessKey;
  }
  toJSON() {
    return { kind: this.kind, endpoint: this.endpoint, bucket: this.bucket, region: this.region, accessKeyId: this.accessKeyId };
  }
}

/**
 * The networks whose app (client id and secret) is instance-wide (decisions.md §12), each with the two environment
 * variables that set it. The environment wins over what the instance admin enters on the Instance page.
 */
export const NETWORK_APP_ENV = {
  x: ["X_CLIENT_ID", "X_CLIENT_SECRET"],
  linkedin: ["LINKEDIN_CLIENT_ID", "LINKEDIN_CLIENT_SECRET"],
  facebook: ["META_APP_ID", "META_APP_SECRET"],
  instagram: ["INSTAGRAM_APP_ID", "INSTAGRAM_APP_SECRET"],
  threads: ["THREADS_APP_ID", "THREADS_APP_SECRET"],
  pinterest: ["PINTEREST_APP_ID", "PINTEREST_APP_SECRET"],
} as const;
export type AppNetwork = keyof typeof NETWORK_APP_ENV;
export const APP_NETWORKS = Object.keys(NETWORK_APP_ENV) as readonly AppNetwork[];

/**
 * One network's app from the environment. The secret is a private field behind a getter, so printing or serialising
 * the config never shows it.
 */
export class NetworkAppConfig {
  readonly #clientSecret: string;
  constructor(
    readonly clientId: string,
    clientSecret: string,
  ) {
    this.#clientSecret = clientSecret;
    Object.freeze(this);
  }
  get clientSecret(): string {
    return this.#clientSecret;
  }
  toJSON() {
    return { clientId: this.clientId };
  }
}

/** Where media bytes live: DATA_DIR/media (the default), or an S3-compatible bucket. */
export type MediaStoreConfig = { kind: "local" } | S3MediaConfig;

/**
 * INSTANCE_SECRET, decoded. The bytes are a private field behind a getter, so printing or serialising the config
 * never shows them.
 */
export class InstanceSecretConfig {
  readonly source = "environment" as const;
  readonly #bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    Object.freeze(this);
  }
  get bytes(): Uint8Array {
    return this.#bytes;
  }
  toJSON() {
    return { source: this.source };
  }
}

/**
 * A URL that may hold a password. The URL is a private field behind a getter; `redacted` is the form safe for
 * messages and logs (the password replaced by `***`). Each subclass freezes itself once its own fields are set.
 */
abstract class SecretUrlConfig {
  readonly redacted: string;
  readonly #url: string;
  constructor(url: string) {
    this.#url = url;
    this.redacted = redactUrl(url);
  }
  get url(): string {
    return this.#url;
  }
}

/** DATABASE_URL: a PostgreSQL connection URL (it may hold a password; see SecretUrlConfig). */
export class PostgresDatabaseConfig extends SecretUrlConfig {
  readonly kind = "postgres" as const;
  constructor(url: string) {
    super(url);
    Object.freeze(this);
  }
  toJSON() {
    return { kind: this.kind, url: this.redacted };
  }
}

/** SMTP_URL and MAIL_FROM: where email goes out (the URL may hold a password; see SecretUrlConfig). */
export class SmtpConfig extends SecretUrlConfig {
  constructor(
    url: string,
    /** The From header: `noreply@example.com` or `Seedcast <noreply@example.com>`. */
    readonly from: string,
  ) {
    super(url);
    Object.freeze(this);
  }
  toJSON() {
    return { url: this.redacted, from: this.from };
  }
}

/** Where the tables live: SQLite in DATA_DIR (the default), or PostgreSQL (DATABASE_URL). */
export type DatabaseConfig = { kind: "sqlite" } | PostgresDatabaseConfig;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  baseUrl: string;
  maxImageBytes: number;
  creditsInitial: number;
  allowPrivateHosts: ReadonlySet<string>;
  /**
   * PLATFORM_ORIGIN_OVERRIDES (decisions.md §12): host → origin; every call and browser redirect meant for
   * `https://<host>/…` goes to `<origin>/…` instead, exempt from the public-address and https rules. Empty by default.
   */
  platformOriginOverrides: OriginOverrides;
  generator: GeneratorKind;
  openai: {
    baseUrl: string;
    apiKey: string;
    textModel: string;
    imageModel: string;
    timeoutMs: number;
    /**
     * Which of MODEL_ENV_VARS the environment sets: each wins over the same value set on the dashboard's Instance
     * page (GENERATOR set: the environment chooses the generator, and the page's server is not used at all).
     */
    setInEnvironment: readonly ModelEnvVar[];
  };
  logLevel: LogLevel;
  /** Requests per minute per API key before 429. */
  rateLimitPerMinute: number;
  prices: Prices;
  /** Caption limit in graphemes for generated captions. */
  captionMaxGraphemes: number;
  /**
   * Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For is believed, for the client address of login
   * throttling. Empty: the socket's address is the client's, and X-Forwarded-For is ignored.
   */
  trustedProxies: readonly string[];
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** Backups: nightly job when set (cron expression), with the number of archives kept. */
  backup: { cron: string | null; dir: string; keep: number };
  dispatch: DispatchConfig;
  /** Token refreshes the daily job runs at once (TOKEN_REFRESH_CONCURRENCY). */
  tokenRefreshConcurrency: number;
  /**
   * CORS_ORIGINS: browser origins (`https://app.example.com`) allowed to call /api/v1 and /openapi.json, or `*` for
   * any. Empty (the default): no CORS headers at all.
   */
  corsOrigins: ReadonlySet<string>;
  media: MediaStoreConfig;
  database: DatabaseConfig;
  /** INSTANCE_SECRET when set; null: the secret is DATA_DIR/instance.secret (lib/instance-secret.ts). */
  instanceSecret: InstanceSecretConfig | null;
  /** SMTP_URL + MAIL_FROM; null: no email, notices show in the dashboard only. */
  smtp: SmtpConfig | null;
  /** The network apps set in the environment (both variables of the pair); absent: the Instance page's, if any. */
  networkApps: Readonly<Partial<Record<AppNetwork, NetworkAppConfig>>>;
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

/** A comma-separated list of IP addresses and CIDR ranges (`10.0.0.0/8`, `::1`). */
function proxiesVar(env: Env, name: string): string[] {
  const entries = (env[name] ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const ok = entry.includes("/") ? (() => { try { ipaddr.parseCIDR(entry); return true; } catch { return false; } })() : ipaddr.isValid(entry);
    if (!ok) throw new ConfigError(`${name} must list IP addresses or CIDR ranges, comma-separated; got "${entry}".`);
  }
  return entries;
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

/** S3 bucket names: 3–63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit. */
const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION_RE = /^[a-z0-9-]{1,64}$/;

function requiredVar(env: Env, name: string, why: string): string {
  const raw = env[name]?.trim();
  if (!raw) throw new ConfigError(`${why} needs ${name}.`);
  return raw;
}

/** MEDIA_STORE and, for `s3`, the bucket's settings. Messages name the variable, never a secret's value. */
function mediaVar(env: Env): MediaStoreConfig {
  const kind = enumVar(env, "MEDIA_STORE", MEDIA_STORES, "local");
  if (kind === "local") return { kind };
  const why = "MEDIA_STORE=s3";
  const endpoint = requiredVar(env, "S3_ENDPOINT", why);
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ConfigError(`S3_ENDPOINT must be an http(s) URL such as https://s3.example.com; got "${endpoint}".`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`S3_ENDPOINT must be an http(s) URL without credentials, query or fragment, such as https://s3.example.com; got "${url.protocol}//${url.host}${url.pathname}".`);
  }
  const bucket = requiredVar(env, "S3_BUCKET", why);
  if (!BUCKET_RE.test(bucket) || bucket.includes("..")) {
    throw new ConfigError(`S3_BUCKET must be a bucket name (3 to 63 lowercase letters, digits, dots and hyphens); got "${bucket}".`);
  }
  const region = env.S3_REGION?.trim() || "us-east-1";
  if (!REGION_RE.test(region)) throw new ConfigError(`S3_REGION must be a region name such as us-east-1; got "${region}".`);
  const accessKeyId = requiredVar(env, "S3_ACCESS_KEY_ID", why);
  const secretAccessKey = requiredVar(env, "S3_SECRET_ACCESS_KEY", why);
  return new S3MediaConfig(endpoint.replace(/\/+$/, ""), bucket, region, accessKeyId, secretAccessKey);
}

/** A URL with its password (if any) replaced by `***`; never throws. */
function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = "***";
    // libpq also takes the password as a query parameter.
    for (const name of [...url.searchParams.keys()]) if (name.toLowerCase() === "password") url.searchParams.set(name, "***");
    return url.href;
  } catch {
    return "(not a URL)";
  }
}

/**
 * INSTANCE_SECRET: base64 (standard or URL-safe) of at least 32 bytes. Messages say what is wrong, never the value.
 */
function instanceSecretVar(env: Env): InstanceSecretConfig | null {
  const raw = env.INSTANCE_SECRET;
  if (raw === undefined || raw.trim() === "") return null;
  const rule = `INSTANCE_SECRET must be base64 (standard or URL-safe) of at least ${INSTANCE_SECRET_MIN_BYTES} random bytes, such as the line \`seedcast secret new\` prints`;
  const bytes = decodeBase64Secret(raw);
  if (!bytes) throw new ConfigError(`${rule}; the value given is not base64 (it is not shown here).`);
  if (bytes.length < INSTANCE_SECRET_MIN_BYTES) {
    throw new ConfigError(`${rule}; the value given decodes to ${bytes.length} bytes (it is not shown here).`);
  }
  return new InstanceSecretConfig(bytes);
}

/** Said instead of a value that may hold a password. */
const NOT_SHOWN = "(it is not shown here: it may hold a password)";

/**
 * `raw` parsed as a URL with one of `protocols` (such as "smtp:"). A refusal starts with `rule`, never repeats the
 * value (it may hold a password), and ends with `hint` after a wrong protocol.
 */
function secretUrlVar(raw: string, rule: string, protocols: readonly string[], hint = ""): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${rule}; the value given is not a URL ${NOT_SHOWN}.`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${rule}; the value given does not start with ${protocols.map((p) => `${p}//`).join(" or ")} ${NOT_SHOWN}.${hint}`);
  }
  return url;
}

/**
 * DATABASE_URL: unset → SQLite in DATA_DIR; else a postgres:// or postgresql:// URL. A refusal never repeats the value
 * (a connection URL usually holds a password).
 */
function databaseVar(env: Env): DatabaseConfig {
  const raw = env.DATABASE_URL?.trim();
  if (!raw) return { kind: "sqlite" };
  const rule = "DATABASE_URL must be a PostgreSQL connection URL, postgres://USER:PASSWORD@HOST:PORT/DATABASE (or postgresql://...)";
  secretUrlVar(raw, rule, ["postgres:", "postgresql:"], " To run on SQLite in DATA_DIR, unset DATABASE_URL.");
  return new PostgresDatabaseConfig(raw);
}

const EMAIL_ADDRESS = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

/**
 * SMTP_URL (smtp:// or smtps://[user:pass@]host[:port]) with MAIL_FROM: both or neither. A refusal about SMTP_URL never
 * repeats the value (it usually holds a password).
 */
function smtpVar(env: Env): SmtpConfig | null {
  const raw = env.SMTP_URL?.trim();
  const from = env.MAIL_FROM?.trim();
  if (!raw) {
    if (from) throw new ConfigError("MAIL_FROM is set but SMTP_URL is not: set SMTP_URL (smtp://user:pass@host:587 or smtps://user:pass@host:465) to send email, or unset MAIL_FROM.");
    return null;
  }
  const rule = "SMTP_URL must be smtp://USER:PASSWORD@HOST:PORT or smtps://USER:PASSWORD@HOST:PORT (user and password optional)";
  const url = secretUrlVar(raw, rule, ["smtp:", "smtps:"]);
  if (!url.hostname) throw new ConfigError(`${rule}; the value given names no host ${NOT_SHOWN}.`);
  if (!from) throw new ConfigError("SMTP_URL needs MAIL_FROM, the sender address, such as MAIL_FROM=\"Seedcast <noreply@example.com>\".");
  const address = /<([^<>]*)>\s*$/.exec(from)?.[1] ?? from;
  if (!EMAIL_ADDRESS.test(address.trim()) || /[\r\n]/.test(from)) {
    throw new ConfigError(`MAIL_FROM must be an email address, optionally with a name: noreply@example.com or Seedcast <noreply@example.com>; got "${from}".`);
  }
  return new SmtpConfig(raw, from);
}

function originOverridesVar(env: Env, name: string): OriginOverrides {
  try {
    return parseOriginOverrides(env[name]);
  } catch (error) {
    if (error instanceof OriginOverrideError) {
      throw new ConfigError(`${name} must be comma-separated host=origin pairs (api.x.com=http://127.0.0.1:9101): ${error.message}`);
    }
    throw error;
  }
}

/** The network apps the environment sets; one variable of a pair without the other stops the start, naming both. */
function networkAppsVar(env: Env): Partial<Record<AppNetwork, NetworkAppConfig>> {
  const apps: Partial<Record<AppNetwork, NetworkAppConfig>> = {};
  for (const network of APP_NETWORKS) {
    const [idVar, secretVar] = NETWORK_APP_ENV[network];
    const id = (env[idVar] ?? "").trim();
    const secret = (env[secretVar] ?? "").trim();
    if (id === "" && secret === "") continue;
    if (id === "" || secret === "") throw new ConfigError(`${idVar} and ${secretVar} are set together: one of them is empty.`);
    apps[network] = new NetworkAppConfig(id, secret);
  }
  return Object.freeze(apps);
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
    platformOriginOverrides: originOverridesVar(env, "PLATFORM_ORIGIN_OVERRIDES"),
    generator: enumVar(env, "GENERATOR", GENERATOR_KINDS, "builtin"),
    openai: {
      baseUrl: urlVar(env, "OPENAI_BASE_URL", "https://api.openai.com/v1"),
      apiKey: env.OPENAI_API_KEY ?? "",
      textModel: env.OPENAI_TEXT_MODEL?.trim() || "gpt-4o-mini",
      imageModel: env.OPENAI_IMAGE_MODEL?.trim() || "gpt-image-1",
      timeoutMs: intVar(env, "OPENAI_TIMEOUT_MS", 60_000, 100),
      setInEnvironment: MODEL_ENV_VARS.filter((name) => (env[name] ?? "").trim() !== ""),
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
    trustedProxies: proxiesVar(env, "TRUSTED_PROXIES"),
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
    tokenRefreshConcurrency: intVar(env, "TOKEN_REFRESH_CONCURRENCY", TOKEN_REFRESH_CONCURRENCY_DEFAULT, 1, 100),
    corsOrigins: originsVar(env, "CORS_ORIGINS"),
    media: mediaVar(env),
    database: databaseVar(env),
    instanceSecret: instanceSecretVar(env),
    smtp: smtpVar(env),
    networkApps: networkAppsVar(env),
  };
  if (config.generator === "openai" && !config.openai.apiKey) {
    throw new ConfigError("GENERATOR=openai needs OPENAI_API_KEY.");
  }
  if (config.database.kind === "postgres" && !config.instanceSecret) {
    throw new ConfigError(
      "DATABASE_URL (PostgreSQL mode) needs INSTANCE_SECRET: every replica must hash API keys and seal credentials under the same secret, so it cannot be a file in one DATA_DIR. Run `seedcast secret new` once, and give its output to every replica as INSTANCE_SECRET (base64, at least 32 bytes).",
    );
  }
  if (config.database.kind === "postgres" && config.backup.cron) {
    throw new ConfigError(
      "BACKUP_CRON cannot be used with DATABASE_URL: seedcast backup archives an appliance's SQLite database. Back up PostgreSQL with pg_dump (or your provider's snapshots) and the media with bucket versioning, and unset BACKUP_CRON.",
    );
  }
  if (config.media.kind === "s3" && config.backup.cron) {
    throw new ConfigError(
      "BACKUP_CRON cannot be used with MEDIA_STORE=s3: a backup archive holds media from DATA_DIR only. Back up the bucket with its own versioning or replication, and unset BACKUP_CRON.",
    );
  }
  return Object.freeze(config);
}
