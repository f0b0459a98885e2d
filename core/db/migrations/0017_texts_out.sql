CREATE TABLE "sms_opt_outs" (
	"number_id" text NOT NULL,
	"remote_number" text NOT NULL,
	"account_id" text NOT NULL,
	"opted_out" boolean NOT NULL,
	"keyword" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_opt_outs_number_id_remote_number_pk" PRIMARY KEY("number_id","remote_number")
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "status" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "segments" integer;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "charged_micros" bigint;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "status_updated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sms_opt_outs" ADD CONSTRAINT "sms_opt_outs_number_id_numbers_number_id_fk" FOREIGN KEY ("number_id") REFERENCES "public"."numbers"("number_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_opt_outs" ADD CONSTRAINT "sms_opt_outs_account_id_accounts_account_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("account_id") ON DELETE cascade ON UPDATE no action;