-- Credentials that can be revoked everywhere. Agent tokens move from one derived hash per account
-- (accounts.agent_token_hash) to a table of random tokens, listed and revocable one by one; the
-- tokens already issued keep working as rows of it (their last four characters are filled in at
-- their next use: only the hash was kept). Relay tickets record the credential that minted them,
-- so a revoke deletes them; the tickets outstanding now (single use, 60 s) are dropped, as the
-- credential behind them is not known.

CREATE TABLE "agent_tokens" (
	"token_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text,
	"token_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"last_four" text,
	"minted_by_kind" text NOT NULL,
	"minted_by_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "agent_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "accounts" DROP CONSTRAINT "accounts_agent_token_hash_unique";--> statement-breakpoint
DELETE FROM "relay_tickets";--> statement-breakpoint
ALTER TABLE "relay_tickets" ADD COLUMN "credential_id" text NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_tokens" ADD CONSTRAINT "agent_tokens_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_tokens_account_idx" ON "agent_tokens" USING btree ("account_id");--> statement-breakpoint
INSERT INTO "agent_tokens" ("token_id", "account_id", "token_hash", "prefix", "minted_by_kind", "minted_by_id", "created_at")
SELECT 'atk_' || substr(md5('agent-token:' || "account_id"), 1, 26), "account_id", "agent_token_hash", 'at_',
       CASE WHEN "wallet_address" IS NULL THEN 'api_key' ELSE 'wallet' END, "wallet_address", "created_at"
  FROM "accounts" WHERE "agent_token_hash" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "agent_token_hash";