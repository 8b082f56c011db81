CREATE TABLE "post_series" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"every" text NOT NULL,
	"interval" bigint DEFAULT 1 NOT NULL,
	"max_count" bigint,
	"until" bigint,
	"anchor_local" text NOT NULL,
	"occurrences" bigint DEFAULT 1 NOT NULL,
	"current_post_id" text,
	"ended_at" bigint,
	"created_at" bigint NOT NULL,
	CONSTRAINT "post_series_every_valid" CHECK ("post_series"."every" IN ('day','week','month'))
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "time_zone" text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "approval_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "posting_slots" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "scheduled_posts" ADD COLUMN "queued" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "scheduled_posts" ADD COLUMN "series_id" text;--> statement-breakpoint
ALTER TABLE "post_series" ADD CONSTRAINT "post_series_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "post_series_account_idx" ON "post_series" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scheduled_posts_queue_slot_unique" ON "scheduled_posts" USING btree ("account_id","scheduled_time") WHERE "scheduled_posts"."queued";--> statement-breakpoint
CREATE INDEX "scheduled_posts_series_idx" ON "scheduled_posts" USING btree ("series_id");