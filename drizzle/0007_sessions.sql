CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`key_id` integer,
	`key_hash` text,
	`csrf` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer,
	CONSTRAINT "sessions_one_key" CHECK(("sessions"."key_id" IS NULL) <> ("sessions"."key_hash" IS NULL))
);
--> statement-breakpoint
CREATE INDEX `sessions_key_id` ON `sessions` (`key_id`);