ALTER TABLE "scheduled_post_targets" DROP CONSTRAINT "scheduled_post_targets_status_valid";--> statement-breakpoint
ALTER TABLE "scheduled_posts" DROP CONSTRAINT "scheduled_posts_status_valid";--> statement-breakpoint
ALTER TABLE "creations" ALTER COLUMN "seed_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "scheduled_post_targets" ADD COLUMN "parts_out" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "scheduled_posts" ADD COLUMN "images" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "scheduled_posts" ADD COLUMN "thread" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "scheduled_posts" ADD COLUMN "first_comment" text;--> statement-breakpoint
ALTER TABLE "scheduled_posts" ADD COLUMN "variants" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "creations" ADD COLUMN "images" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "creations" ADD COLUMN "thread" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "creations" ADD COLUMN "first_comment" text;--> statement-breakpoint
ALTER TABLE "creations" ADD COLUMN "variants" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "scheduled_post_targets" ADD CONSTRAINT "scheduled_post_targets_status_valid" CHECK ("scheduled_post_targets"."status" IN ('scheduled','publishing','published','failed','withdrawn','unconfirmed','pending_approval'));--> statement-breakpoint
ALTER TABLE "scheduled_posts" ADD CONSTRAINT "scheduled_posts_status_valid" CHECK ("scheduled_posts"."status" IN ('scheduled','publishing','published','partially_failed','failed','unconfirmed','pending_approval'));--> statement-breakpoint
UPDATE "creations" SET "images" = jsonb_build_array(jsonb_build_object('assetId', "image_asset_id", 'altText', "alt_text")) WHERE "image_asset_id" IS NOT NULL;--> statement-breakpoint
UPDATE "scheduled_posts" SET "images" = jsonb_build_array(jsonb_build_object('assetId', "image_asset_id", 'altText', "alt_text")) WHERE "image_asset_id" IS NOT NULL;
