/**
 * The app Seedcast signs in with at each network whose app is instance-wide (decisions.md §12: X, LinkedIn, Facebook,
 * Instagram, Threads, Pinterest). The environment's pair (X_CLIENT_ID/X_CLIENT_SECRET …, parsed in src/config.ts)
 * wins over what the instance admin entered on the Instance page; those are kept in `instance_settings`, sealed as one
 * JSON object (network → {clientId, clientSecret}), and shown only as "set" / "not set".
 */
import { eq } from "drizzle-orm";
import { type AppNetwork, APP_NETWORKS } from "../../config";
import { INSTANCE_SETTINGS_ID } from "../../db/schema/instance-settings";
import { instanceSettings } from "../../db/tables";
import type { Deps } from "../../deps";
import { invalidField } from "../../lib/errors";
import { openJson, sealJson } from "../../store/sealing";

const SEAL_LABEL = "instance-settings:network-apps:v1";
const SEAL_SUBJECT = "instance-settings";
/** Client ids and secrets are opaque strings of a few dozen characters; this bounds what is stored. */
const MAX_LENGTH = 500;

/** An app's client id and secret. */
export interface AppCredentials {
  clientId: string;
  clientSecret: string;
}

type StoredApps = Partial<Record<AppNetwork, AppCredentials>>;

/** What the Instance page shows of one network's app: where it comes from, never its values. */
export interface AppCredentialsView {
  network: AppNetwork;
  /** `environment`: both variables are set and win; `instance`: entered on the page; `none`: the network cannot be connected. */
  source: "environment" | "instance" | "none";
  /** Whether the page holds a pair (it may be overridden by the environment). */
  storedOnPage: boolean;
}

/** True when `platform` is a network whose app is instance-wide. */
export function isAppNetwork(platform: string): platform is AppNetwork {
  return (APP_NETWORKS as readonly string[]).includes(platform);
}

type ReadDeps = Pick<Deps, "config" | "store" | "instanceSecret">;

async function storedApps(deps: Pick<Deps, "store" | "instanceSecret">): Promise<StoredApps> {
  const row = await deps.store.db
    .select({ sealed: instanceSettings.networkAppsSealed })
    .from(instanceSettings)
    .where(eq(instanceSettings.id, INSTANCE_SETTINGS_ID))
    .get();
  if (!row?.sealed) return {};
  return openJson<StoredApps>(deps.instanceSecret, SEAL_SUBJECT, row.sealed, SEAL_LABEL);
}

/**
 * The app of `platform`: the environment's pair when set, else the one the instance admin entered, else null (the
 * network cannot be connected: its Connect button is disabled). Read at every call, so a change on the Instance page
 * reaches every replica at once.
 */
export async function appCredentials(deps: ReadDeps, platform: string): Promise<AppCredentials | null> {
  if (!isAppNetwork(platform)) return null;
  const env = deps.config.networkApps[platform];
  if (env) return { clientId: env.clientId, clientSecret: env.clientSecret };
  return (await storedApps(deps))[platform] ?? null;
}

/** Every network's app as the Instance page shows it ("set" / "not set", and whether the environment wins). */
export async function appCredentialsViews(deps: ReadDeps): Promise<AppCredentialsView[]> {
  const stored = await storedApps(deps);
  return APP_NETWORKS.map((network) => ({
    network,
    source: deps.config.networkApps[network] ? "environment" : stored[network] ? "instance" : "none",
    storedOnPage: Boolean(stored[network]),
  }));
}

function cleanValue(raw: string, field: string, what: string): string {
  const value = raw.trim();
  if (value.length > MAX_LENGTH || /\s/.test(value)) throw invalidField(field, `must be the ${what} as the network shows it, without spaces, at most ${MAX_LENGTH} characters`);
  return value;
}

/** The stored pairs rewritten by `change`, in one transaction (two admins saving two networks keep both). */
async function rewrite(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, change: (apps: StoredApps) => StoredApps): Promise<void> {
  await deps.store.write(async (tx) => {
    const row = await tx.select({ sealed: instanceSettings.networkAppsSealed }).from(instanceSettings).where(eq(instanceSettings.id, INSTANCE_SETTINGS_ID)).get();
    const before = row?.sealed ? openJson<StoredApps>(deps.instanceSecret, SEAL_SUBJECT, row.sealed, SEAL_LABEL) : {};
    const after = change({ ...before });
    const sealed = Object.keys(after).length > 0 ? sealJson(deps.instanceSecret, SEAL_SUBJECT, after, SEAL_LABEL) : null;
    const values = { networkAppsSealed: sealed, updatedAt: deps.clock.now() };
    await tx.insert(instanceSettings).values({ id: INSTANCE_SETTINGS_ID, ...values }).onConflictDoUpdate({ target: instanceSettings.id, set: values }).run();
  });
}

/**
 * Saves the app of `network` entered on the Instance page (sealed). An empty field keeps the stored value; with none
 * stored, both are needed (400 naming the field). Used from the next sign-in on.
 */
export async function saveAppCredentials(
  deps: Pick<Deps, "store" | "clock" | "instanceSecret">,
  network: AppNetwork,
  input: { clientId: string; clientSecret: string },
): Promise<void> {
  const clientId = cleanValue(input.clientId, "clientId", "app's id");
  const clientSecret = cleanValue(input.clientSecret, "clientSecret", "app's secret");
  await rewrite(deps, (apps) => {
    const kept = apps[network];
    const next = { clientId: clientId || kept?.clientId || "", clientSecret: clientSecret || kept?.clientSecret || "" };
    if (next.clientId === "") throw invalidField("clientId", "the app's id is needed: copy it from the network's developer console");
    if (next.clientSecret === "") throw invalidField("clientSecret", "the app's secret is needed: copy it from the network's developer console");
    apps[network] = next;
    return apps;
  });
}

/** Forgets the app of `network` entered on the page (an environment pair, if any, still applies). */
export async function clearAppCredentials(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, network: AppNetwork): Promise<void> {
  await rewrite(deps, (apps) => {
    delete apps[network];
    return apps;
  });
}
