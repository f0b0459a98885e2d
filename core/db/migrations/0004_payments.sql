CREATE TABLE "payment_settlements" (
	"settlement_id" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"payer" text NOT NULL,
	"nonce" text NOT NULL,
	"payee" text NOT NULL,
	"amount_micros" bigint NOT NULL,
	"mode" text NOT NULL,
	"status" text NOT NULL,
	"reference" text,
	"scope" text NOT NULL,
	"request_hash" text NOT NULL,
	"account_id" text,
	"transaction_id" text,
	"response_status" integer,
	"response_body" json,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_settlements_signature" UNIQUE("network","asset","payer","nonce")
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "wallet_address" text;--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "agent_token_hash" text;--> statement-breakpoint
CREATE INDEX "payment_settlements_account_idx" ON "payment_settlements" USING btree ("account_id");--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_wallet_address_unique" UNIQUE("wallet_address");--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_agent_token_hash_unique" UNIQUE("agent_token_hash");