PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_scheduled_post_targets` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`account_id` text NOT NULL,
	`connection_id` text,
	`platform` text NOT NULL,
	`label` text NOT NULL,
	`status` text NOT NULL,
	`provider_post_id` text,
	`parts_out` text DEFAULT '[]' NOT NULL,
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
	CONSTRAINT "scheduled_post_targets_status_valid" CHECK("__new_scheduled_post_targets"."status" IN ('scheduled','publishing','published','failed','withdrawn','unconfirmed','pending_approval'))
);
--> statement-breakpoint
INSERT INTO `__new_scheduled_post_targets`("id", "post_id", "account_id", "connection_id", "platform", "label", "status", "provider_post_id", "parts_out", "published_url", "error_message", "held_by_provider", "next_attempt_at", "attempts", "lease_token", "lease_expires_at", "send_started_at", "withdrawn_at", "published_at", "created_at", "updated_at") SELECT "id", "post_id", "account_id", "connection_id", "platform", "label", "status", "provider_post_id", '[]', "published_url", "error_message", "held_by_provider", "next_attempt_at", "attempts", "lease_token", "lease_expires_at", "send_started_at", "withdrawn_at", "published_at", "created_at", "updated_at" FROM `scheduled_post_targets`;--> statement-breakpoint
DROP TABLE `scheduled_post_targets`;--> statement-breakpoint
ALTER TABLE `__new_scheduled_post_targets` RENAME TO `scheduled_post_targets`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `scheduled_post_targets_post_idx` ON `scheduled_post_targets` (`post_id`);--> statement-breakpoint
CREATE INDEX `scheduled_post_targets_due_idx` ON `scheduled_post_targets` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `scheduled_post_targets_connection_idx` ON `scheduled_post_targets` (`connection_id`);--> statement-breakpoint
CREATE TABLE `__new_scheduled_posts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`creation_id` text NOT NULL,
	`scheduled_time` integer NOT NULL,
	`status` text NOT NULL,
	`error_message` text,
	`caption` text NOT NULL,
	`alt_text` text,
	`image_asset_id` text,
	`images` text DEFAULT '[]' NOT NULL,
	`thread` text DEFAULT '[]' NOT NULL,
	`first_comment` text,
	`variants` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "scheduled_posts_status_valid" CHECK("__new_scheduled_posts"."status" IN ('scheduled','publishing','published','partially_failed','failed','unconfirmed','pending_approval'))
);
--> statement-breakpoint
INSERT INTO `__new_scheduled_posts`("id", "account_id", "creation_id", "scheduled_time", "status", "error_message", "caption", "alt_text", "image_asset_id", "images", "thread", "first_comment", "variants", "created_at", "updated_at") SELECT "id", "account_id", "creation_id", "scheduled_time", "status", "error_message", "caption", "alt_text", "image_asset_id", CASE WHEN "image_asset_id" IS NULL THEN '[]' ELSE json_array(json_object('assetId', "image_asset_id", 'altText', "alt_text")) END, '[]', NULL, '{}', "created_at", "updated_at" FROM `scheduled_posts`;--> statement-breakpoint
DROP TABLE `scheduled_posts`;--> statement-breakpoint
ALTER TABLE `__new_scheduled_posts` RENAME TO `scheduled_posts`;--> statement-breakpoint
CREATE INDEX `scheduled_posts_account_time_idx` ON `scheduled_posts` (`account_id`,`scheduled_time`);--> statement-breakpoint
CREATE INDEX `scheduled_posts_image_asset_idx` ON `scheduled_posts` (`image_asset_id`);--> statement-breakpoint
CREATE TABLE `__new_creations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`seed_id` text,
	`caption` text NOT NULL,
	`alt_text` text,
	`image_asset_id` text,
	`images` text DEFAULT '[]' NOT NULL,
	`thread` text DEFAULT '[]' NOT NULL,
	`first_comment` text,
	`variants` text DEFAULT '{}' NOT NULL,
	`aspect_ratio` text NOT NULL,
	`media_style` text NOT NULL,
	`caption_source` text DEFAULT 'generated' NOT NULL,
	`alt_text_source` text,
	`variant` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "creations_variant_non_negative" CHECK("__new_creations"."variant" >= 0)
);
--> statement-breakpoint
INSERT INTO `__new_creations`("id", "account_id", "type", "seed_id", "caption", "alt_text", "image_asset_id", "images", "thread", "first_comment", "variants", "aspect_ratio", "media_style", "caption_source", "alt_text_source", "variant", "created_at", "updated_at") SELECT "id", "account_id", "type", "seed_id", "caption", "alt_text", "image_asset_id", CASE WHEN "image_asset_id" IS NULL THEN '[]' ELSE json_array(json_object('assetId', "image_asset_id", 'altText', "alt_text")) END, '[]', NULL, '{}', "aspect_ratio", "media_style", "caption_source", "alt_text_source", "variant", "created_at", "updated_at" FROM `creations`;--> statement-breakpoint
DROP TABLE `creations`;--> statement-breakpoint
ALTER TABLE `__new_creations` RENAME TO `creations`;--> statement-breakpoint
CREATE INDEX `creations_account_idx` ON `creations` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `creations_account_seed_idx` ON `creations` (`account_id`,`seed_id`,`id`);--> statement-breakpoint
CREATE INDEX `creations_image_asset_idx` ON `creations` (`image_asset_id`);