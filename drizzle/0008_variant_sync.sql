CREATE TABLE `variant_sync` (
	`entry` integer PRIMARY KEY NOT NULL,
	`product_id` integer NOT NULL,
	`variant_id` integer,
	`option1_value` text NOT NULL,
	`option2_value` text NOT NULL,
	`option3_value` text NOT NULL,
	`option4_value` text NOT NULL,
	`option5_value` text NOT NULL,
	`bad` integer NOT NULL,
	`data` text NOT NULL
);
