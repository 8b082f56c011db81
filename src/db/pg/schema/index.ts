/** Every PostgreSQL table (the pg-core mirror of src/db/schema, same file names), for drizzle and drizzle-kit. */
export {};
