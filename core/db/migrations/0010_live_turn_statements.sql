-- The two live-turn functions of 0008 with fewer statements (issue 12). Each statement a plpgsql
-- function runs pays its own executor start and end, snapshot and trigger queue. The writes that
-- need no statement of their own between them now share one (a statement with data-modifying
-- WITH clauses sees the rows as they were when it began, which is what each part reads): a turn's
-- functions ran about 5% shorter one at a time; under load PostgreSQL's CPU went to the rows
-- themselves and barely moved. What the functions do, take and answer is unchanged. Both work on
-- PostgreSQL and PGlite.

CREATE OR REPLACE FUNCTION agentline_open_turn(
  p_call_id text, p_text text, p_input text, p_now timestamptz, p_created_at text,
  p_turn_id text, p_event_id text, p_push_url text, p_push_token text,
  p_known_last bigint, p_conversation json, p_process_id text, p_notify boolean
) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_last bigint;
  v_entry bigint;
  v_conversation json;
  v_recomputed boolean := false;
  v_envelope json;
  v_seq bigint;
  v_before json;
  v_message text;
BEGIN
  -- The call, locked, with its agent's delivery route as deliveryTarget in core/events/routing.ts
  -- decides it (relay liveness: 60 s).
  SELECT cl.call_id, cl.account_id, cl.agent_id, cl.status, cl.from_number, cl.to_number, cl.is_owner_call,
         r.process_id AS relay_process, w.webhook_id IS NOT NULL AS has_webhook INTO c
    FROM calls cl
    JOIN agents a ON a.agent_id = cl.agent_id
    LEFT JOIN relay_sessions r ON r.agent_id = a.agent_id AND r.last_seen_at > p_now - interval '60 seconds'
    LEFT JOIN webhooks w ON w.agent_id = a.agent_id
    WHERE cl.call_id = p_call_id FOR UPDATE OF cl;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'not_in_progress', 'status', null); END IF;
  IF c.status <> 'in-progress' THEN RETURN json_build_object('outcome', 'not_in_progress', 'status', c.status); END IF;
  IF c.relay_process IS NULL AND c.has_webhook THEN RETURN json_build_object('outcome', 'webhook'); END IF;

  -- The open turn goes stale, the new one opens, its line joins the transcript; v_last is the
  -- transcript's last line before it.
  WITH stale AS (
    UPDATE turns SET status = 'stale', closed_at = p_now WHERE call_id = p_call_id AND status = 'open'
  ), opened AS (
    INSERT INTO turns (turn_id, call_id, text, input, opened_at) VALUES (p_turn_id, p_call_id, p_text, p_input, p_now)
  ), line AS (
    INSERT INTO transcript_entries (call_id, role, text, turn_id, created_at)
      VALUES (p_call_id, 'user', p_text, p_turn_id, p_now) RETURNING entry_id
  )
  SELECT (SELECT max(entry_id) FROM transcript_entries WHERE call_id = p_call_id), line.entry_id INTO v_last, v_entry FROM line;
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

  -- An agent's events are written under a per-agent advisory lock held to commit (namespace
  -- 7240502), so they commit in the order of their seq. Taken in a statement of its own: the next
  -- one must begin after it, to see every earlier event of the agent committed.
  PERFORM pg_advisory_xact_lock(7240502, hashtext(c.agent_id));
  -- The event, and the agent's earlier events still pending: a relay socket sends this one at
  -- once only if it has already sent all of those (else it reads its backlog, in order).
  WITH earlier AS (
    SELECT coalesce(json_agg(e.event_id ORDER BY e.seq), '[]'::json) AS ids FROM (
      SELECT event_id, seq FROM events
       WHERE agent_id = c.agent_id AND status = 'pending' AND route <> 'webhook'
       ORDER BY seq LIMIT 50) e
  ), recorded AS (
    INSERT INTO events (event_id, account_id, agent_id, event_type, envelope, route, created_at)
      VALUES (p_event_id, c.account_id, c.agent_id, 'call.utterance', v_envelope,
              CASE WHEN c.relay_process IS NOT NULL THEN 'relay' ELSE 'mailbox' END, p_now)
      RETURNING seq
  )
  SELECT recorded.seq, earlier.ids INTO v_seq, v_before FROM recorded, earlier;

  -- The other processes hear of it (NOTIFY is held until commit); this one is told from memory
  -- by the caller. Only when the relay socket is not this process's own.
  IF p_notify AND c.relay_process IS DISTINCT FROM p_process_id THEN
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
-- and the line joins the transcript, in one statement; the turn is looked at again only when it
-- did not move, to say why. Outcomes as in 0008.
CREATE OR REPLACE FUNCTION agentline_push_context(
  p_call_id text, p_turn_id text, p_text text, p_final boolean, p_now timestamptz,
  p_account_id text, p_terminal text[]
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
    SELECT r.agent_id IS NOT NULL, w.protocol, w.capabilities INTO v_relay, v_protocol, v_capabilities
      FROM agents a
      LEFT JOIN relay_sessions r ON r.agent_id = a.agent_id AND r.last_seen_at > p_now - interval '60 seconds'
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
--> statement-breakpoint

-- The envelope, once a call's conversation has grown past about 2 kB, is compressed as it is
-- stored: lz4 costs a third of pglz's time. A build without lz4 keeps pglz.
DO $$
BEGIN
  ALTER TABLE events ALTER COLUMN envelope SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  NULL;
END;
$$;
