-- A call's open turn by its own partial index: a new utterance stales it, and the end of the call
-- abandons it, without reading every turn the call had before (issue 12: nothing per turn grows with the call's length).
CREATE INDEX "turns_open_idx" ON "turns" USING btree ("call_id") WHERE status = 'open';