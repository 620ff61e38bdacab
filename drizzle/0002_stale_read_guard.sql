CREATE TABLE `stale_reads` (
	`product_id` integer NOT NULL,
	CONSTRAINT "stale_read" CHECK(0)
);
