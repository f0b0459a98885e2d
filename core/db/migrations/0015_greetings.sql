ALTER TABLE "agents" ADD COLUMN "greeting" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "greeting" text;