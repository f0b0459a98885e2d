CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" text NOT NULL,
	"response_status" integer,
	"response_body" json,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_scope_key_pk" PRIMARY KEY("scope","key")
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"transaction_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"amount_micros" bigint NOT NULL,
	"balance_after_micros" bigint NOT NULL,
	"category" text NOT NULL,
	"item" text,
	"description" text NOT NULL,
	"call_id" text,
	"number_id" text,
	"message_id" text,
	"quantity" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "balance_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "rate_micros_per_second" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "paid_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "charged_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "billed_seconds" integer;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "monthly_fee_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "paid_through" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "auto_renew" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "numbers" ADD COLUMN "renewal_failed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "ledger_account_idx" ON "ledger_entries" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "ledger_call_idx" ON "ledger_entries" USING btree ("call_id");--> statement-breakpoint
CREATE INDEX "ledger_number_idx" ON "ledger_entries" USING btree ("number_id");--> statement-breakpoint
CREATE INDEX "calls_metering_idx" ON "calls" USING btree ("status","paid_until");--> statement-breakpoint
CREATE INDEX "numbers_lease_idx" ON "numbers" USING btree ("status","paid_through");