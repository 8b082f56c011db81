CREATE TABLE `sign_in_apps` (
	`id` text PRIMARY KEY NOT NULL,
	`platform` text NOT NULL,
	`server` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`scopes` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_sealed` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sign_in_apps_server_idx` ON `sign_in_apps` (`platform`,`server`,`redirect_uri`,`scopes`);--> statement-breakpoint
CREATE TABLE `sign_in_states` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`account_id` text NOT NULL,
	`platform` text NOT NULL,
	`sealed` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sign_in_states_expires_idx` ON `sign_in_states` (`expires_at`);--> statement-breakpoint
ALTER TABLE `connections` ADD `token_expires_at` integer;--> statement-breakpoint
ALTER TABLE `connections` ADD `refresh_lease_token` text;--> statement-breakpoint
ALTER TABLE `connections` ADD `refresh_lease_expires_at` integer;