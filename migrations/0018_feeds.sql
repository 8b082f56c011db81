CREATE TABLE `feed_items` (
	`feed_id` text NOT NULL,
	`item_key` text NOT NULL,
	`seed_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`feed_id`, `item_key`),
	FOREIGN KEY (`feed_id`) REFERENCES `feeds`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `feeds` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`url` text NOT NULL,
	`mode` text NOT NULL,
	`targets` text NOT NULL,
	`title` text,
	`etag` text,
	`last_modified` text,
	`state` text NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`last_error_code` text,
	`last_polled_at` integer,
	`last_success_at` integer,
	`next_poll_at` integer NOT NULL,
	`poll_lease_until` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `feeds_account_url_unique` ON `feeds` (`account_id`,`url`);--> statement-breakpoint
CREATE INDEX `feeds_account_created_idx` ON `feeds` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `feeds_due_idx` ON `feeds` (`state`,`next_poll_at`);