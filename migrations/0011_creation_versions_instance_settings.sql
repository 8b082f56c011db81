CREATE TABLE `creation_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`creation_id` text NOT NULL,
	`account_id` text NOT NULL,
	`caption` text NOT NULL,
	`caption_source` text NOT NULL,
	`alt_text` text,
	`alt_text_source` text,
	`image_asset_id` text,
	`replaced_at` integer NOT NULL,
	FOREIGN KEY (`creation_id`) REFERENCES `creations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `creation_versions_creation_idx` ON `creation_versions` (`creation_id`,`id`);--> statement-breakpoint
CREATE TABLE `instance_settings` (
	`id` integer PRIMARY KEY DEFAULT 1 NOT NULL,
	`model_base_url` text,
	`model_api_key_sealed` text,
	`model_text_model` text,
	`model_image_model` text,
	`updated_at` integer NOT NULL,
	CONSTRAINT "instance_settings_single_row" CHECK("instance_settings"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE `creations` ADD `caption_source` text DEFAULT 'generated' NOT NULL;--> statement-breakpoint
ALTER TABLE `creations` ADD `alt_text_source` text;