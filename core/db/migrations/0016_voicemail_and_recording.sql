CREATE TABLE "recordings" (
	"recording_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"call_id" text NOT NULL,
	"carrier_ref" text NOT NULL,
	"duration_seconds" integer NOT NULL,
	"status" text DEFAULT 'ready' NOT NULL,
	"charged_micros" bigint DEFAULT 0 NOT NULL,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "machine_detection" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "voicemail_message" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "answered_by" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "voicemail_left_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "record" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "record_inbound" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "recordings" ADD CONSTRAINT "recordings_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "recordings_call_idx" ON "recordings" USING btree ("call_id");--> statement-breakpoint
CREATE INDEX "recordings_account_idx" ON "recordings" USING btree ("account_id","recording_id");