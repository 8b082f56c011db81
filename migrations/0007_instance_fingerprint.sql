CREATE TABLE `instance_identity` (
	`id` integer PRIMARY KEY DEFAULT 1 NOT NULL,
	`secret_fingerprint` text NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "instance_identity_single_row" CHECK("instance_identity"."id" = 1)
);
