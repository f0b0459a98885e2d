ALTER TABLE "calls" ADD COLUMN "transfer_to" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transfer_mode" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transfer_status" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transfer_whisper" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transfer_answered_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transfer_rate_micros_per_second" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transfer_paid_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transfer_charged_micros" bigint DEFAULT 0 NOT NULL;