ALTER TABLE "messages" ADD COLUMN "carrier_ref" text;--> statement-breakpoint
CREATE UNIQUE INDEX "calls_carrier_ref_idx" ON "calls" USING btree ("carrier_ref");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_carrier_ref_idx" ON "messages" USING btree ("carrier_ref");