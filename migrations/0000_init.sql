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
CREATE INDEX `upload_links_expires_idx` ON `upload_links` (`expires_at`);