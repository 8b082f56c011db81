/**
 * The auth generation counter: a one-row table bumped by triggers whenever anything that decides whether a key works
 * changes (a key's revocation, grace, expiry, scopes or owner; a membership; an account's disabled flag; since v2 an
 * OAuth grant's or token's revocation or deletion, which the access-token cache relies on), by any
 * process: the server, the dashboard, or the CLI next to it. The authenticator caches key lookups and trusts an entry
 * only while the counter is unchanged, so a revocation takes effect on the very next request. Kept in code like fts.ts
 * because drizzle-kit cannot generate triggers.
 */
import type { EmbeddedMigration } from "./migrations-embed";

const BUMP = "UPDATE auth_generation SET n = n + 1 WHERE id = 1;";

const AUTH_GENERATION_V1 = `
CREATE TABLE auth_generation (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT INTO auth_generation (id, n) VALUES (1, 0);
CREATE TRIGGER api_keys_auth_update AFTER UPDATE OF revoked_at, grace_until, expires_at, scopes, user_id, account_id, secret_hash ON api_keys BEGIN ${BUMP} END;
CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys BEGIN ${BUMP} END;
CREATE TRIGGER members_auth_insert AFTER INSERT ON members BEGIN ${BUMP} END;
CREATE TRIGGER members_auth_update AFTER UPDATE ON members BEGIN ${BUMP} END;
CREATE TRIGGER members_auth_delete AFTER DELETE ON members BEGIN ${BUMP} END;
CREATE TRIGGER accounts_auth_update AFTER UPDATE OF disabled_at ON accounts BEGIN ${BUMP} END;
CREATE TRIGGER accounts_auth_delete AFTER DELETE ON accounts BEGIN ${BUMP} END;
`;

// v2: the connector's grants and tokens. Not their last use (the once-a-minute touch must not flush the caches).
const AUTH_GENERATION_V2 = `
CREATE TRIGGER oauth_grants_auth_update AFTER UPDATE OF revoked_at, scopes, account_id, user_id ON oauth_grants BEGIN ${BUMP} END;
CREATE TRIGGER oauth_grants_auth_delete AFTER DELETE ON oauth_grants BEGIN ${BUMP} END;
CREATE TRIGGER oauth_tokens_auth_update AFTER UPDATE OF revoked_at, expires_at, grant_id ON oauth_tokens BEGIN ${BUMP} END;
CREATE TRIGGER oauth_tokens_auth_delete AFTER DELETE ON oauth_tokens BEGIN ${BUMP} END;
`;

/** Applied after the drizzle migrations, once each, by tag. */
export const AUTH_TRIGGER_MIGRATIONS: EmbeddedMigration[] = [
  { tag: "9000_auth_generation_v1", sql: AUTH_GENERATION_V1 },
  { tag: "9001_auth_generation_oauth", sql: AUTH_GENERATION_V2 },
];
