CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`credits_balance` integer DEFAULT 0 NOT NULL,
	`credits_reserved` integer DEFAULT 0 NOT NULL,
	`disabled_at` integer,
	`created_at` integer NOT NULL,
	CONSTRAINT "accounts_balance_non_negative" CHECK("accounts"."credits_balance" >= 0),
	CONSTRAINT "accounts_reserved_non_negative" CHECK("accounts"."credits_reserved" >= 0)
);
--> statement-breakpoint
CREATE TABLE `members` (
	`account_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "members_role_valid" CHECK("members"."role" IN ('owner','editor','viewer'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `members_account_user_unique` ON `members` (`account_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `members_user_idx` ON `members` (`user_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`password_hash` text NOT NULL,
	`is_instance_admin` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (lower("email"));--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`scopes` text NOT NULL,
	`secret_hash` text NOT NULL,
	`prefix` text NOT NULL,
	`expires_days` integer,
	`expires_at` integer,
	`grace_until` integer,
	`replaced_by_id` text,
	`revoked_at` integer,
	`last_used_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_secret_hash_unique` ON `api_keys` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account_idx` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `assets` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`file_name` text NOT NULL,
	`mime_type` text NOT NULL,
	`ext` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`sha256` text NOT NULL,
	`storage_key` text NOT NULL,
	`source` text NOT NULL,
	`source_url` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `assets_account_created_idx` ON `assets` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `credit_holds` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`amount` integer NOT NULL,
	`state` text NOT NULL,
	`purpose` text NOT NULL,
	`created_at` integer NOT NULL,
	`resolved_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "credit_holds_amount_non_negative" CHECK("credit_holds"."amount" >= 0),
	CONSTRAINT "credit_holds_state_valid" CHECK("credit_holds"."state" IN ('open','captured','released'))
);
--> statement-breakpoint
CREATE INDEX `credit_holds_account_state_idx` ON `credit_holds` (`account_id`,`state`);--> statement-breakpoint
CREATE TABLE `credit_ledger` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`amount` integer NOT NULL,
	`hold_id` text,
	`note` text DEFAULT '' NOT NULL,
	`balance_after` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "credit_ledger_kind_valid" CHECK("credit_ledger"."kind" IN ('grant','reserve','capture','release')),
	CONSTRAINT "credit_ledger_amount_non_negative" CHECK("credit_ledger"."amount" >= 0)
);
--> statement-breakpoint
CREATE INDEX `credit_ledger_account_idx` ON `credit_ledger` (`account_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `credit_ledger_one_resolution_per_hold` ON `credit_ledger` (`hold_id`) WHERE "credit_ledger"."kind" IN ('capture','release');--> statement-breakpoint
CREATE TABLE `upload_links` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_by_key_id` text,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`asset_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `upload_links_token_hash_unique` ON `upload_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `upload_links_expires_idx` ON `upload_links` (`expires_at`);--> statement-breakpoint
CREATE TABLE `connections` (
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
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "connections_platform_valid" CHECK("connections"."platform" IN ('bluesky','mastodon','webhook'))
);
--> statement-breakpoint
CREATE INDEX `connections_account_idx` ON `connections` (`account_id`);--> statement-breakpoint
CREATE TABLE `scheduled_post_targets` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`account_id` text NOT NULL,
	`connection_id` text,
	`platform` text NOT NULL,
	`label` text NOT NULL,
	`status` text NOT NULL,
	`provider_post_id` text,
	`published_url` text,
	`error_message` text,
	`held_by_provider` integer DEFAULT false NOT NULL,
	`next_attempt_at` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_token` text,
	`lease_expires_at` integer,
	`send_started_at` integer,
	`withdrawn_at` integer,
	`published_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `scheduled_posts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "scheduled_post_targets_status_valid" CHECK("scheduled_post_targets"."status" IN ('scheduled','publishing','published','failed','withdrawn'))
);
--> statement-breakpoint
CREATE INDEX `scheduled_post_targets_post_idx` ON `scheduled_post_targets` (`post_id`);--> statement-breakpoint
CREATE INDEX `scheduled_post_targets_due_idx` ON `scheduled_post_targets` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `scheduled_post_targets_connection_idx` ON `scheduled_post_targets` (`connection_id`);--> statement-breakpoint
CREATE TABLE `scheduled_posts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`creation_id` text NOT NULL,
	`scheduled_time` integer NOT NULL,
	`status` text NOT NULL,
	`error_message` text,
	`caption` text NOT NULL,
	`alt_text` text,
	`image_asset_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "scheduled_posts_status_valid" CHECK("scheduled_posts"."status" IN ('scheduled','publishing','published','partially_failed','failed'))
);
--> statement-breakpoint
CREATE INDEX `scheduled_posts_account_time_idx` ON `scheduled_posts` (`account_id`,`scheduled_time`);--> statement-breakpoint
CREATE INDEX `scheduled_posts_image_asset_idx` ON `scheduled_posts` (`image_asset_id`);--> statement-breakpoint
CREATE TABLE `seeds` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`account_id` text NOT NULL,
	`title` text NOT NULL,
	`content` text NOT NULL,
	`category` text,
	`image_asset_id` text,
	`image_url` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "seeds_title_length" CHECK(length("seeds"."title") BETWEEN 1 AND 300),
	CONSTRAINT "seeds_content_length" CHECK(length("seeds"."content") BETWEEN 1 AND 20000)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `seeds_id_unique` ON `seeds` (`id`);--> statement-breakpoint
CREATE INDEX `seeds_account_created_idx` ON `seeds` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `seeds_image_asset_idx` ON `seeds` (`image_asset_id`);--> statement-breakpoint
CREATE INDEX `seeds_account_idx` ON `seeds` (`account_id`);--> statement-breakpoint
CREATE TABLE `brand_voices` (
	`account_id` text PRIMARY KEY NOT NULL,
	`tone` text NOT NULL,
	`audience` text NOT NULL,
	`language` text NOT NULL,
	`emoji` text NOT NULL,
	`hashtags` text NOT NULL,
	`banned_words` text NOT NULL,
	`signature` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "brand_voices_emoji_valid" CHECK("brand_voices"."emoji" IN ('none','some','lots'))
);
--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`route` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`state` text NOT NULL,
	`lease` text NOT NULL,
	`lease_until` integer NOT NULL,
	`status` integer,
	`content_type` text,
	`body` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `route`, `key`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "idempotency_keys_state_valid" CHECK("idempotency_keys"."state" IN ('in_flight','done'))
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `creations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`seed_id` text NOT NULL,
	`caption` text NOT NULL,
	`alt_text` text,
	`image_asset_id` text,
	`aspect_ratio` text NOT NULL,
	`media_style` text NOT NULL,
	`variant` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "creations_variant_non_negative" CHECK("creations"."variant" >= 0)
);
--> statement-breakpoint
CREATE INDEX `creations_account_idx` ON `creations` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `creations_account_seed_idx` ON `creations` (`account_id`,`seed_id`,`id`);--> statement-breakpoint
CREATE INDEX `creations_image_asset_idx` ON `creations` (`image_asset_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`user_id` text NOT NULL,
	`account_id` text,
	`csrf_token` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`absolute_expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_token_hash_unique` ON `sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);