CREATE TABLE "secret_reveals" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"sealed" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "secret_reveals" ADD CONSTRAINT "secret_reveals_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "secret_reveals_expires_idx" ON "secret_reveals" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "secret_reveals_session_idx" ON "secret_reveals" USING btree ("session_id");