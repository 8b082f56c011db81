/**
 * The tables services query, from the dialect this process runs on. They are typed as SQLite's: the JavaScript types
 * are the same on both sides (test/pg-schema-types.test.ts proves it). `useDialect("postgres")` swaps every binding to
 * the pg-core mirror once, at start (bootstrap), before any query is built. ESM exports are live bindings, so
 * `import { accounts } from "../../db/tables"` sees the swap. One process is one dialect (a test file that needs both
 * switches and switches back).
 *
 * Services import tables from here, never from db/schema or db/pg/schema (test/layering.test.ts checks it); the enum
 * lists and row types still come from db/schema.
 */
import * as sqlite from "./schema";

export let accounts = sqlite.accounts;
export let apiKeys = sqlite.apiKeys;
export let assets = sqlite.assets;
export let brandVoices = sqlite.brandVoices;
export let connections = sqlite.connections;
export let creations = sqlite.creations;
export let creationVersions = sqlite.creationVersions;
export let creditHolds = sqlite.creditHolds;
export let creditLedger = sqlite.creditLedger;
export let eventWebhooks = sqlite.eventWebhooks;
export let feedItems = sqlite.feedItems;
export let feeds = sqlite.feeds;
export let idempotencyKeys = sqlite.idempotencyKeys;
export let invitations = sqlite.invitations;
export let instanceIdentity = sqlite.instanceIdentity;
export let instanceSettings = sqlite.instanceSettings;
export let loginThrottle = sqlite.loginThrottle;
export let members = sqlite.members;
export let noticeMailOptOuts = sqlite.noticeMailOptOuts;
export let notices = sqlite.notices;
export let oauthClients = sqlite.oauthClients;
export let oauthCodes = sqlite.oauthCodes;
export let oauthGrants = sqlite.oauthGrants;
export let oauthTokens = sqlite.oauthTokens;
export let passwordResets = sqlite.passwordResets;
export let postSeries = sqlite.postSeries;
export let scheduledPostTargets = sqlite.scheduledPostTargets;
export let scheduledPosts = sqlite.scheduledPosts;
export let seeds = sqlite.seeds;
export let secretReveals = sqlite.secretReveals;
export let sessions = sqlite.sessions;
export let signInApps = sqlite.signInApps;
export let signInStates = sqlite.signInStates;
export let rateLimitBuckets = sqlite.rateLimitBuckets;
export let uploadLinks = sqlite.uploadLinks;
export let userPreferences = sqlite.userPreferences;
export let users = sqlite.users;
export let webhookDeliveries = sqlite.webhookDeliveries;
export let webhookEvents = sqlite.webhookEvents;

/** Every table by its export name (asset reference counting walks them). */
export function allTables() {
  return { accounts, apiKeys, assets, brandVoices, connections, creations, creationVersions, creditHolds, creditLedger, eventWebhooks, feedItems, feeds, idempotencyKeys, instanceIdentity, instanceSettings, invitations, loginThrottle, members, noticeMailOptOuts, notices, oauthClients, oauthCodes, oauthGrants, oauthTokens, passwordResets, postSeries, scheduledPostTargets, scheduledPosts, seeds, secretReveals, sessions, signInApps, signInStates, rateLimitBuckets, uploadLinks, userPreferences, users, webhookDeliveries, webhookEvents };
}

let current: "sqlite" | "postgres" = "sqlite";

/**
 * Points every table binding at `dialect`'s schema. Called once per process, before the first query is built. The
 * pg-core schema is loaded only then, so the appliance never loads it.
 */
export async function useDialect(dialect: "sqlite" | "postgres"): Promise<void> {
  if (dialect === current) return;
  const from = (dialect === "postgres" ? await import("./pg/schema") : sqlite) as unknown as typeof sqlite;
  accounts = from.accounts;
  apiKeys = from.apiKeys;
  assets = from.assets;
  brandVoices = from.brandVoices;
  connections = from.connections;
  creations = from.creations;
  creationVersions = from.creationVersions;
  creditHolds = from.creditHolds;
  creditLedger = from.creditLedger;
  eventWebhooks = from.eventWebhooks;
  feedItems = from.feedItems;
  feeds = from.feeds;
  idempotencyKeys = from.idempotencyKeys;
  invitations = from.invitations;
  instanceIdentity = from.instanceIdentity;
  instanceSettings = from.instanceSettings;
  loginThrottle = from.loginThrottle;
  members = from.members;
  noticeMailOptOuts = from.noticeMailOptOuts;
  notices = from.notices;
  oauthClients = from.oauthClients;
  oauthCodes = from.oauthCodes;
  oauthGrants = from.oauthGrants;
  oauthTokens = from.oauthTokens;
  passwordResets = from.passwordResets;
  postSeries = from.postSeries;
  scheduledPostTargets = from.scheduledPostTargets;
  scheduledPosts = from.scheduledPosts;
  seeds = from.seeds;
  secretReveals = from.secretReveals;
  sessions = from.sessions;
  signInApps = from.signInApps;
  signInStates = from.signInStates;
  rateLimitBuckets = from.rateLimitBuckets;
  uploadLinks = from.uploadLinks;
  userPreferences = from.userPreferences;
  users = from.users;
  webhookDeliveries = from.webhookDeliveries;
  webhookEvents = from.webhookEvents;
  current = dialect;
}

/** The dialect the table bindings point at. */
export function tablesDialect(): "sqlite" | "postgres" {
  return current;
}
