/** Every table, for drizzle's typed client and drizzle-kit. Each module's tables live in their own file. */
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
export * from "./instance-identity";
