/**
 * Every PostgreSQL table, for drizzle's typed client and drizzle-kit (drizzle.pg.config.ts): the pg-core mirror of
 * src/db/schema, file for file, with the same table and column names and the same JavaScript types (SQLite integers
 * are `bigint` in number mode, its boolean integers `boolean`, its JSON text `jsonDocument`).
 */
export * from "./accounts";
export * from "./api-keys";
export * from "./assets";
export * from "./credits";
export * from "./upload-links";
export * from "./connections";
export * from "./scheduled-posts";
export * from "./seeds";
export * from "./voice";
export * from "./idempotency";
export * from "./creations";
export * from "./sessions";
export * from "./oauth";
export * from "./login-throttle";
export * from "./event-webhooks";
export * from "./user-preferences";
export * from "./auth-generation";
export * from "./instance-identity";
export * from "./rate-limits";
export * from "./secret-reveals";
export * from "./creation-versions";
export * from "./instance-settings";
export * from "./notices";
export * from "./invitations";
export * from "./sign-in";
export * from "./feeds";
export * from "./post-series";
