CREATE TABLE "account_identities" (
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"account_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_identities_issuer_subject_pk" PRIMARY KEY("issuer","subject")
);
--> statement-breakpoint
CREATE TABLE "agentid_sessions" (
	"session_hash" text PRIMARY KEY NOT NULL,
	"state_hash" text NOT NULL,
	"sealed_checks" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"account_id" text,
	"account_created" boolean DEFAULT false NOT NULL,
	"failure" text,
	"interval_s" integer NOT NULL,
	"last_polled_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agentid_sessions_state_hash_unique" UNIQUE("state_hash")
);
--> statement-breakpoint
ALTER TABLE "account_identities" ADD CONSTRAINT "account_identities_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agentid_sessions" ADD CONSTRAINT "agentid_sessions_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agentid_sessions_expires_idx" ON "agentid_sessions" USING btree ("expires_at");