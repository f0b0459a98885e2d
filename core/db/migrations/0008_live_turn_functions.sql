-- The two legs of a live turn, each one round trip to the database (DESIGN §12). Hand SQL: a
-- server-side function is the only way to run a chain of dependent statements in one round trip.
-- Both work on PostgreSQL and PGlite.
--
-- An agent's events are written under a per-agent advisory lock held to commit (namespace
-- 7240502): its events commit in the order of their seq, so the relay, which hands them out in
-- seq order, never sees a later one before an earlier one (issue 13 row 6).

-- A finished caller utterance on a call whose agent's events go to a relay socket or the mailbox:
-- the open turn goes stale, a turn and its transcript line are written, the call.utterance event
-- is recorded and (when p_notify) announced to the other processes, with the envelope inside.
-- The conversation comes from the caller when it knows the call's last transcript line
-- (p_known_last), so nothing here reads the whole transcript; otherwise it is read once.
-- A webhook agent is left to the caller (outcome 'webhook', nothing written): its delivery job
-- and protocol-2 messages are built in the application.
CREATE OR REPLACE FUNCTION agentline_open_turn(
  p_call_id text, p_text text, p_input text, p_now timestamptz, p_created_at text,
  p_turn_id text, p_event_id text, p_push_url text, p_push_token text,
  p_known_last bigint, p_conversation json, p_process_id text, p_notify boolean
) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_relay_process text;
  v_has_webhook boolean;
  v_route text;
  v_last bigint;
  v_entry bigint;
  v_conversation json;
  v_recomputed boolean := false;
  v_envelope json;
  v_seq bigint;
  v_before json;
  v_message text;
BEGIN
  SELECT call_id, account_id, agent_id, status, from_number, to_number, is_owner_call INTO c
    FROM calls WHERE call_id = p_call_id FOR UPDATE;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'not_in_progress', 'status', null); END IF;
  IF c.status <> 'in-progress' THEN RETURN json_build_object('outcome', 'not_in_progress', 'status', c.status); END IF;
  -- The delivery route, as deliveryTarget in core/events/routing.ts decides it (relay liveness: 60 s).
  SELECT r.process_id, w.webhook_id IS NOT NULL INTO v_relay_process, v_has_webhook
    FROM agents a
    LEFT JOIN relay_sessions r ON r.agent_id = a.agent_id AND r.last_seen_at > p_now - interval '60 seconds'
    LEFT JOIN webhooks w ON w.agent_id = a.agent_id
    WHERE a.agent_id = c.agent_id;
  IF v_relay_process IS NULL AND v_has_webhook THEN RETURN json_build_object('outcome', 'webhook'); END IF;
  v_route := CASE WHEN v_relay_process IS NOT NULL THEN 'relay' ELSE 'mailbox' END;

  UPDATE turns SET status = 'stale', closed_at = p_now WHERE call_id = p_call_id AND status = 'open';
  INSERT INTO turns (turn_id, call_id, text, input, opened_at) VALUES (p_turn_id, p_call_id, p_text, p_input, p_now);
  SELECT max(entry_id) INTO v_last FROM transcript_entries WHERE call_id = p_call_id;
  INSERT INTO transcript_entries (call_id, role, text, turn_id, created_at)
    VALUES (p_call_id, 'user', p_text, p_turn_id, p_now) RETURNING entry_id INTO v_entry;
  IF p_conversation IS NOT NULL AND v_last IS NOT DISTINCT FROM p_known_last THEN
    v_conversation := p_conversation;
  ELSE
    v_recomputed := true;
    SELECT coalesce(json_agg(json_build_object('role', role, 'text', text,
             'timestamp', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY entry_id), '[]'::json)
      INTO v_conversation FROM transcript_entries WHERE call_id = p_call_id;
  END IF;

  -- The envelope's fields in the order recordEvent writes them (json keeps it).
  v_envelope := json_build_object(
    'event_id', p_event_id, 'agent_id', c.agent_id, 'account_id', c.account_id, 'event_type', 'call.utterance',
    'created_at', p_created_at,
    'payload', json_build_object('call_id', p_call_id, 'turn_id', p_turn_id, 'text', p_text, 'input', p_input,
      'from_number', c.from_number, 'to_number', c.to_number, 'is_owner_call', c.is_owner_call),
    'call_id', p_call_id, 'turn_id', p_turn_id, 'session_key', 'agentline:' || c.agent_id || ':' || p_call_id,
    'conversation', v_conversation, 'push_context_url', p_push_url, 'push_token', p_push_token);

  PERFORM pg_advisory_xact_lock(7240502, hashtext(c.agent_id));
  INSERT INTO events (event_id, account_id, agent_id, event_type, envelope, route, created_at)
    VALUES (p_event_id, c.account_id, c.agent_id, 'call.utterance', v_envelope, v_route, p_now) RETURNING seq INTO v_seq;
  -- The agent's earlier events still pending: a relay socket sends this one at once only if it
  -- has already sent all of these (else it reads its backlog, in order).
  SELECT coalesce(json_agg(e.event_id ORDER BY e.seq), '[]'::json) INTO v_before FROM (
    SELECT event_id, seq FROM events
     WHERE agent_id = c.agent_id AND status = 'pending' AND route <> 'webhook' AND seq < v_seq
     ORDER BY seq LIMIT 50) e;

  -- The other processes hear of it (NOTIFY is held until commit); this one is told from memory
  -- by the caller. Only when the relay socket is not this process's own.
  IF p_notify AND v_relay_process IS DISTINCT FROM p_process_id THEN
    v_message := json_build_object('c', 'events.created', 'p', p_process_id, 'm', json_build_object(
      'agent_id', c.agent_id, 'account_id', c.account_id, 'seq', v_seq, 'before', v_before, 'event', v_envelope))::text;
    IF octet_length(v_message) >= 7000 THEN
      -- Too large for a NOTIFY: ids only; the receiver reads its backlog.
      v_message := json_build_object('c', 'events.created', 'p', p_process_id,
        'm', json_build_object('agent_id', c.agent_id, 'account_id', c.account_id))::text;
    END IF;
    PERFORM pg_notify('agentline', v_message);
  END IF;

  RETURN json_build_object('outcome', 'opened', 'agent_id', c.agent_id, 'account_id', c.account_id, 'seq', v_seq,
    'before', v_before, 'envelope', v_envelope, 'entry_id', v_entry,
    'conversation', CASE WHEN v_recomputed THEN v_conversation END);
END;
$$;
--> statement-breakpoint

-- A context push: under the call's row lock, the turn moves (answered, or one more interim line)
-- in one conditional update, and the line joins the transcript. p_account_id is null for a push
-- token (checked by the caller). Outcomes: 'no_call', 'ended', 'no_turn', 'interim_refused'
-- (an interim line to a protocol-2 webhook without streams_progress), 'refused' (the turn is no
-- longer open: its status says why), 'pushed'.
CREATE OR REPLACE FUNCTION agentline_push_context(
  p_call_id text, p_turn_id text, p_text text, p_final boolean, p_now timestamptz,
  p_account_id text, p_terminal text[]
) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_turn_status text;
  v_moved text;
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
  SELECT status INTO v_turn_status FROM turns WHERE turn_id = p_turn_id AND call_id = p_call_id;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'no_turn'); END IF;
  IF NOT p_final THEN
    SELECT r.agent_id IS NOT NULL, w.protocol, w.capabilities INTO v_relay, v_protocol, v_capabilities
      FROM agents a
      LEFT JOIN relay_sessions r ON r.agent_id = a.agent_id AND r.last_seen_at > p_now - interval '60 seconds'
      LEFT JOIN webhooks w ON w.agent_id = a.agent_id
      WHERE a.agent_id = c.agent_id;
    IF NOT v_relay AND v_protocol = 'service-relay/2' AND NOT (v_capabilities::jsonb ? 'streams_progress') THEN
      RETURN json_build_object('outcome', 'interim_refused');
    END IF;
  END IF;
  IF p_final THEN
    UPDATE turns SET status = 'answered', closed_at = p_now WHERE turn_id = p_turn_id AND status = 'open' RETURNING turn_id INTO v_moved;
  ELSE
    UPDATE turns SET interim_count = interim_count + 1 WHERE turn_id = p_turn_id AND status = 'open' RETURNING turn_id INTO v_moved;
  END IF;
  IF v_moved IS NULL THEN RETURN json_build_object('outcome', 'refused', 'turn_status', v_turn_status); END IF;
  SELECT max(entry_id) INTO v_last FROM transcript_entries WHERE call_id = p_call_id;
  INSERT INTO transcript_entries (call_id, role, text, turn_id, created_at)
    VALUES (p_call_id, 'assistant', p_text, p_turn_id, p_now) RETURNING entry_id INTO v_entry;
  RETURN json_build_object('outcome', 'pushed', 'agent_id', c.agent_id, 'account_id', c.account_id,
    'previous_entry_id', v_last, 'entry_id', v_entry);
END;
$$;
