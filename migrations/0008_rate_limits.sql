CREATE TABLE `rate_limit_buckets` (
	`key` text PRIMARY KEY NOT NULL,
	`tokens_milli` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`granted` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rate_limit_buckets_updated_idx` ON `rate_limit_buckets` (`updated_at`);