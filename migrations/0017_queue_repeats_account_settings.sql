CREATE TABLE `post_series` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`every` text NOT NULL,
	`interval` integer DEFAULT 1 NOT NULL,
	`max_count` integer,
	`until` integer,
	`anchor_local` text NOT NULL,
	`occurrences` integer DEFAULT 1 NOT NULL,
	`current_post_id` text,
	`ended_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "post_series_every_valid" CHECK("post_series"."every" IN ('day','week','month'))
);
--> statement-breakpoint
CREATE INDEX `post_series_account_idx` ON `post_series` (`account_id`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `time_zone` text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `approval_required` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `posting_slots` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `scheduled_posts` ADD `queued` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `scheduled_posts` ADD `series_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `scheduled_posts_queue_slot_unique` ON `scheduled_posts` (`account_id`,`scheduled_time`) WHERE "scheduled_posts"."queued" = 1;--> statement-breakpoint
CREATE INDEX `scheduled_posts_series_idx` ON `scheduled_posts` (`series_id`);