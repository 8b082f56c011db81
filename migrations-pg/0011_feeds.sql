CREATE TABLE "feed_items" (
	"feed_id" text NOT NULL,
	"item_key" text NOT NULL,
	"seed_id" text,
	"created_at" bigint NOT NULL,
	CONSTRAINT "feed_items_feed_id_item_key_pk" PRIMARY KEY("feed_id","item_key")
);
--> statement-breakpoint
CREATE TABLE "feeds" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"url" text NOT NULL,
	"mode" text NOT NULL,
	"targets" text NOT NULL,
	"title" text,
	"etag" text,
	"last_modified" text,
	"state" text NOT NULL,
	"failures" bigint DEFAULT 0 NOT NULL,
	"last_error" text,
	"last_error_code" text,
	"last_polled_at" bigint,
	"last_success_at" bigint,
	"next_poll_at" bigint NOT NULL,
	"poll_lease_until" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "feed_items" ADD CONSTRAINT "feed_items_feed_id_feeds_id_fk" FOREIGN KEY ("feed_id") REFERENCES "public"."feeds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feeds" ADD CONSTRAINT "feeds_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "feeds_account_url_unique" ON "feeds" USING btree ("account_id","url");--> statement-breakpoint
CREATE INDEX "feeds_account_created_idx" ON "feeds" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "feeds_due_idx" ON "feeds" USING btree ("state","next_poll_at");