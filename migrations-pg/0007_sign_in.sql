CREATE TABLE "sign_in_apps" (
	"id" text PRIMARY KEY NOT NULL,
	"platform" text NOT NULL,
	"server" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"scopes" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret_sealed" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sign_in_states" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"account_id" text NOT NULL,
	"platform" text NOT NULL,
	"sealed" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "token_expires_at" bigint;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "refresh_lease_token" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "refresh_lease_expires_at" bigint;--> statement-breakpoint
ALTER TABLE "sign_in_states" ADD CONSTRAINT "sign_in_states_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sign_in_states" ADD CONSTRAINT "sign_in_states_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sign_in_apps_server_idx" ON "sign_in_apps" USING btree ("platform","server","redirect_uri","scopes");--> statement-breakpoint
CREATE INDEX "sign_in_states_expires_idx" ON "sign_in_states" USING btree ("expires_at");