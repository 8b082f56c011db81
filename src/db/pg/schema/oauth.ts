// PostgreSQL mirror of src/db/schema/oauth.ts: the same tables, columns, JavaScript types and constraints.
/**
 * The OAuth authorization server (decisions.md §9): clients, authorization codes, grants and their tokens. Codes and
 * tokens are stored only as an HMAC-SHA256 under the instance secret, like API keys. A grant is what a person
 * consented to (client × account × member × groups); its tokens die with it.
 */
import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, users } from "./accounts";

export const oauthClients = pgTable(
  "oauth_clients",
  {
    /** The client_id: a random id for registered clients, the document's https URL for metadata-document clients. */
    id: text("id").primaryKey(),
    /** `registered` (RFC 7591) or `metadata_document` (Client ID Metadata Documents). */
    kind: text("kind", { enum: ["registered", "metadata_document"] }).notNull(),
    clientName: text("client_name").notNull(),
    /** JSON array of the exact redirect URIs. */
    redirectUris: text("redirect_uris").notNull(),
    /** none | client_secret_basic | client_secret_post */
    tokenEndpointAuthMethod: text("token_endpoint_auth_method").notNull(),
    /** HMAC of the client secret (confidential registered clients only). */
    secretHash: text("secret_hash"),
    clientUri: text("client_uri"),
    logoUri: text("logo_uri"),
    /** JSON array. */
    grantTypes: text("grant_types").notNull(),
    /** Requested scope string at registration, if any. */
    scope: text("scope"),
    /** Metadata documents: when the document was last fetched (it is fetched again after 24 h). */
    fetchedAt: bigint("fetched_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("oauth_clients_created_idx").on(t.createdAt)],
);

export const oauthGrants = pgTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The member who consented; the grant's groups are capped by this member's current role. */
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Comma-separated groups consented to. */
    scopes: text("scopes").notNull(),
    /** The resource indicator the tokens are bound to ({base_url}/mcp). */
    resource: text("resource").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    lastUsedAt: bigint("last_used_at", { mode: "number" }),
    revokedAt: bigint("revoked_at", { mode: "number" }),
  },
  (t) => [index("oauth_grants_account_idx").on(t.accountId), index("oauth_grants_user_idx").on(t.userId)],
);

export const oauthCodes = pgTable(
  "oauth_codes",
  {
    id: text("id").primaryKey(),
    /** HMAC of the code. */
    codeHash: text("code_hash").notNull(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    scopes: text("scopes").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    /** S256 challenge (base64url of SHA-256 of the verifier). */
    codeChallenge: text("code_challenge").notNull(),
    /** The `resource` sent to /authorize, or null when none was sent. */
    resource: text("resource"),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    /** Set at the first exchange; a second exchange revokes `grantId`. */
    usedAt: bigint("used_at", { mode: "number" }),
    /** The grant the code's exchange created. */
    grantId: text("grant_id"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("oauth_codes_hash_unique").on(t.codeHash), index("oauth_codes_expires_idx").on(t.expiresAt)],
);

export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    id: text("id").primaryKey(),
    grantId: text("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["access", "refresh"] }).notNull(),
    /** HMAC of the token. */
    tokenHash: text("token_hash").notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    /** Refresh tokens: set when rotated; presenting it again revokes the grant. */
    usedAt: bigint("used_at", { mode: "number" }),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("oauth_tokens_hash_unique").on(t.tokenHash),
    index("oauth_tokens_grant_idx").on(t.grantId),
    index("oauth_tokens_expires_idx").on(t.expiresAt),
  ],
);
