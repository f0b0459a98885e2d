-- The agent's half of a live turn in one round trip (pushContext, core/calls/push-context.ts):
-- under the call's row lock, the turn moves (answered, or one more interim line) and the line
-- joins the transcript, in one statement; the turn is looked at again only when it did not move,
-- to say why. p_account_id is null for a push token (checked by the caller); p_terminal lists the
-- call statuses that end it; a relay socket seen since p_relay_live_since counts as alive.
-- Outcomes: 'no_call', 'ended' (with the call's status), 'no_turn', 'interim_refused' (an interim
-- line to a protocol-2 webhook without streams_progress), 'refused' (the turn is no longer open:
-- turn_status says why), 'pushed'. Runs on PostgreSQL and PGlite.
--
-- This file is the function's one source: `npm run db:functions` writes the migration that
-- installs it (CONTRIBUTING.md, "Changing the database").
CREATE OR REPLACE FUNCTION agentline_push_context(
  p_call_id text, p_turn_id text, p_text text, p_final boolean, p_now timestamptz,
  p_account_id text, p_terminal text[], p_relay_live_since timestamptz
) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_turn_status text;
  v_protocol text;
  v_capabilities json;
  v_relay boolean;
  v_last bigint;
  v_entry bigint;
BEGIN
  SELECT call_id, account_id, agent_id, status INTO c FROM calls WHERE call_id = p_call_id FOR UPDATE;
  IF NOT FOUND OR (p_account_id IS NOT NULL AND c.account_id <> p_account_id) THEN
    RETURN json_build_object('outcome', 'no_call');
  END IF;
  IF c.status = ANY (p_terminal) THEN RETURN json_build_object('outcome', 'ended', 'status', c.status); END IF;
  IF NOT p_final THEN
    -- Where the agent's events go, by the rule of deliveryTarget (core/events/routing.ts): an
    -- interim line reaches a relay socket always, a protocol-2 webhook only if it streams progress.
    SELECT r.agent_id IS NOT NULL, w.protocol, w.capabilities INTO v_relay, v_protocol, v_capabilities
      FROM agents a
      LEFT JOIN relay_sessions r ON r.agent_id = a.agent_id AND r.last_seen_at > p_relay_live_since
      LEFT JOIN webhooks w ON w.agent_id = a.agent_id
      WHERE a.agent_id = c.agent_id;
    IF NOT v_relay AND v_protocol = 'service-relay/2' AND NOT (v_capabilities::jsonb ? 'streams_progress') THEN
      -- Refused only for a turn that exists: an unknown turn is still a 404.
      PERFORM 1 FROM turns WHERE turn_id = p_turn_id AND call_id = p_call_id;
      IF NOT FOUND THEN RETURN json_build_object('outcome', 'no_turn'); END IF;
      RETURN json_build_object('outcome', 'interim_refused');
    END IF;
  END IF;
  WITH moved AS (
    UPDATE turns SET status = CASE WHEN p_final THEN 'answered' ELSE status END,
                     closed_at = CASE WHEN p_final THEN p_now ELSE closed_at END,
                     interim_count = interim_count + CASE WHEN p_final THEN 0 ELSE 1 END
     WHERE turn_id = p_turn_id AND call_id = p_call_id AND status = 'open'
     RETURNING turn_id
  ), line AS (
    INSERT INTO transcript_entries (call_id, role, text, turn_id, created_at)
      SELECT p_call_id, 'assistant', p_text, moved.turn_id, p_now FROM moved RETURNING entry_id
  )
  SELECT (SELECT max(entry_id) FROM transcript_entries WHERE call_id = p_call_id), line.entry_id INTO v_last, v_entry FROM line;
  IF v_entry IS NULL THEN
    SELECT status INTO v_turn_status FROM turns WHERE turn_id = p_turn_id AND call_id = p_call_id;
    IF NOT FOUND THEN RETURN json_build_object('outcome', 'no_turn'); END IF;
    RETURN json_build_object('outcome', 'refused', 'turn_status', v_turn_status);
  END IF;
  RETURN json_build_object('outcome', 'pushed', 'agent_id', c.agent_id, 'account_id', c.account_id,
    'previous_entry_id', v_last, 'entry_id', v_entry);
END;
$$;
