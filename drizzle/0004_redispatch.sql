ALTER TABLE `events` ADD `fanned_out_at` integer;--> statement-breakpoint
CREATE INDEX `events_not_fanned_out` ON `events` (`dispatched_at`) WHERE fanned_out_at IS NULL;--> statement-breakpoint
-- Events dispatched before this migration were fanned out by the consumer of their time: mark them
-- so, or the sweep would send the last day's events again once.
UPDATE `events` SET `fanned_out_at` = `dispatched_at` WHERE `dispatched_at` IS NOT NULL;
