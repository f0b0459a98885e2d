-- A live turn carries a window of its call's conversation, not the whole of it (docs/decisions.md,
-- "Hostile clients"): every call.utterance stored the call so far, so a long call grew the events
-- table with the square of its length. agentline_open_turn as in 0010, except that it takes the
-- window the process kept (p_conversation, and p_omitted, the lines before it), reads only the
-- newest lines when it must read the window afresh, and writes `conversation_omitted` and
-- `transcript_url` beside `conversation`. Its arguments changed, so the 0010 function is dropped.

DROP FUNCTION IF EXISTS agentline_open_turn(text, text, text, timestamptz, text, text, text, text, text, bigint, json, text, boolean);
--> statement-breakpoint

CREATE OR REPLACE FUNCTION agentline_open_turn(
  p_call_id text, p_text text, p_input text, p_now timestamptz, p_created_at text,
  p_turn_id text, p_event_id text, p_push_url text, p_push_token text,
  p_known_last bigint, p_conversation json, p_omitted integer, p_transcript_url text,
  p_process_id text, p_notify boolean, p_max_lines integer, p_max_bytes integer
) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_last bigint;
  v_entry bigint;
  v_conversation json;
  v_omitted integer;
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
    v_omitted := p_omitted;
  ELSE
    -- The window as conversationWindow (core/calls/conversation-window.ts) cuts it: the newest
    -- lines, at most p_max_lines of them and p_max_bytes of text in all (the newest line whatever
    -- its size). Only those lines are read (backwards along transcript_call_idx); the others are
    -- counted.
    v_recomputed := true;
    SELECT coalesce(json_agg(json_build_object('role', role, 'text', text,
             'timestamp', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY entry_id), '[]'::json),
           count(*)
      INTO v_conversation, v_omitted
      FROM (SELECT entry_id, role, text, created_at,
                   row_number() OVER (ORDER BY entry_id DESC) AS newest,
                   sum(octet_length(text)) OVER (ORDER BY entry_id DESC) AS bytes
              FROM (SELECT entry_id, role, text, created_at FROM transcript_entries
                     WHERE call_id = p_call_id ORDER BY entry_id DESC LIMIT p_max_lines) recent) sized
     WHERE newest = 1 OR bytes <= p_max_bytes;
    v_omitted := (SELECT count(*) FROM transcript_entries WHERE call_id = p_call_id) - v_omitted;
  END IF;

  -- The envelope's fields in the order recordEvent writes them (json keeps it).
  v_envelope := json_build_object(
    'event_id', p_event_id, 'agent_id', c.agent_id, 'account_id', c.account_id, 'event_type', 'call.utterance',
    'created_at', p_created_at,
    'payload', json_build_object('call_id', p_call_id, 'turn_id', p_turn_id, 'text', p_text, 'input', p_input,
      'from_number', c.from_number, 'to_number', c.to_number, 'is_owner_call', c.is_owner_call),
    'call_id', p_call_id, 'turn_id', p_turn_id, 'session_key', 'agentline:' || c.agent_id || ':' || p_call_id,
    'conversation', v_conversation, 'conversation_omitted', v_omitted, 'transcript_url', p_transcript_url,
    'push_context_url', p_push_url, 'push_token', p_push_token);

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
    'conversation', CASE WHEN v_recomputed THEN v_conversation END,
    'conversation_omitted', CASE WHEN v_recomputed THEN v_omitted END);
END;
$$;
