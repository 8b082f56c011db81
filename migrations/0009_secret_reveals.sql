CREATE TABLE `secret_reveals` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`sealed` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `secret_reveals_expires_idx` ON `secret_reveals` (`expires_at`);--> statement-breakpoint
CREATE INDEX `secret_reveals_session_idx` ON `secret_reveals` (`session_id`);