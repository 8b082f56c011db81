ALTER TABLE "connections" DROP CONSTRAINT "connections_platform_valid";--> statement-breakpoint
ALTER TABLE "instance_settings" ADD COLUMN "network_apps_sealed" text;--> statement-breakpoint
ALTER TABLE "connections" ADD CONSTRAINT "connections_platform_valid" CHECK ("connections"."platform" IN ('bluesky','mastodon','webhook','nostr','discord','telegram','x','instagram','facebook','threads'));