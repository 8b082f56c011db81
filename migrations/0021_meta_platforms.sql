PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`platform` text NOT NULL,
	`label` text NOT NULL,
	`endpoint` text NOT NULL,
	`credentials_sealed` text NOT NULL,
	`session_sealed` text,
	`meta` text DEFAULT '{}' NOT NULL,
	`ready_to_post` integer DEFAULT false NOT NULL,
	`blocked_reason` text,
	`checked_at` integer,
	`token_expires_at` integer,
	`refresh_lease_token` text,
	`refresh_lease_expires_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "connections_platform_valid" CHECK("__new_connections"."platform" IN ('bluesky','mastodon','webhook','nostr','discord','telegram','x','linkedin','pinterest','instagram','facebook','threads'))
);
--> statement-breakpoint
INSERT INTO `__new_connections`("id", "account_id", "platform", "label", "endpoint", "credentials_sealed", "session_sealed", "meta", "ready_to_post", "blocked_reason", "checked_at", "token_expires_at", "refresh_lease_token", "refresh_lease_expires_at", "created_at", "updated_at") SELECT "id", "account_id", "platform", "label", "endpoint", "credentials_sealed", "session_sealed", "meta", "ready_to_post", "blocked_reason", "checked_at", "token_expires_at", "refresh_lease_token", "refresh_lease_expires_at", "created_at", "updated_at" FROM `connections`;--> statement-breakpoint
DROP TABLE `connections`;--> statement-breakpoint
ALTER TABLE `__new_connections` RENAME TO `connections`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `connections_account_idx` ON `connections` (`account_id`);