/**
 * The network sign-in flow (src/publishing/sign-in/, decisions.md §12). `sign_in_states`: one row per sign-in under way,
 * keyed by an HMAC of its random `state`, bound to the session and the account, taken once by the callback (a
 * conditional DELETE … RETURNING, so it works on any replica and never twice), gone after 10 minutes. `sign_in_apps`:
 * Seedcast's own registration at a network server that registers apps per server (Mastodon's `POST /api/v1/apps`),
 * kept and reused; the client secret sealed.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";
import { sessions } from "./sessions";

export const signInStates = sqliteTable(
  "sign_in_states",
  {
    /** HMAC-SHA256 (hex) of the `state` under the instance secret; the state itself is only in the browser's URL. */
    stateHash: text("state_hash").primaryKey(),
    /** The dashboard session that started it; signing out drops it. */
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    platform: text("platform").notNull(),
    /** Sealed JSON: the PKCE verifier, the server and app used, the connection being reconnected. */
    sealed: text("sealed").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sign_in_states_expires_idx").on(t.expiresAt)],
);

export const signInApps = sqliteTable(
  "sign_in_apps",
  {
    id: text("id").primaryKey(),
    platform: text("platform").notNull(),
    /** The server's origin (`https://mastodon.social`). */
    server: text("server").notNull(),
    /** The redirect URI registered with it: a new BASE_URL needs a new registration. */
    redirectUri: text("redirect_uri").notNull(),
    scopes: text("scopes").notNull(),
    clientId: text("client_id").notNull(),
    /** Sealed JSON `{clientSecret}` (the row id as additional data). */
    clientSecretSealed: text("client_secret_sealed").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("sign_in_apps_server_idx").on(t.platform, t.server, t.redirectUri, t.scopes)],
);
