-- Written by `npm run db:functions` from core/db/functions/: each function here is its file there.
DROP FUNCTION IF EXISTS agentline_open_turn(text, text, text, timestamptz, text, text, text, text, text, bigint, json, integer, text, text, boolean, integer, integer);
--> statement-breakpoint
-- The caller's half of a live turn in one round trip (openTurn, core/calls/turns.ts): a finished
-- utterance on a call whose agent's events go to a relay socket or the mailbox. Under the call's
-- row lock the open turn goes stale, the new turn and its transcript line are written, and the
-- call.utterance event is recorded and (when p_notify) announced to the other processes. A webhook
-- agent is left to the application (outcome 'webhook', nothing written), which builds its
-- delivery job and protocol-2 messages. Runs on PostgreSQL and PGlite.
--
-- What the application decides comes in as arguments: the envelope, as a template with holes for
-- what only the database knows (utteranceTemplate, core/calls/utterance-envelope.ts); the
-- conversation window it kept, and the window's limits; when a relay socket counts as alive; the
-- advisory-lock namespace of an agent's events; and the bus's channels and NOTIFY size limit.
--
-- This file is the function's one source: `npm run db:functions` writes the migration that
-- installs it (CONTRIBUTING.md, "Changing the database").
CREATE OR REPLACE FUNCTION agentline_open_turn(
  p_call_id text, p_turn_id text, p_text text, p_input text, p_now timestamptz,
  p_event_id text, p_envelope text, p_session_key text,
  p_known_last bigint, p_conversation text, p_omitted integer, p_max_lines integer, p_max_bytes integer,
  p_relay_live_since timestamptz, p_events_lock integer,
  p_process_id text, p_notify boolean, p_bus_channel text, p_events_channel text, p_notify_max_bytes integer
) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_last bigint;
  v_entry bigint;
  v_conversation text;
  v_omitted integer;
  v_recomputed boolean := false;
  v_envelope json;
  v_seq bigint;
  v_before json;
  v_message text;
BEGIN
  -- The call, locked, with its agent's delivery route: a relay socket seen since
  -- p_relay_live_since, else a webhook, else the mailbox. The same rule as deliveryTarget
  -- (core/events/routing.ts), which the application follows for every other event.
  SELECT cl.call_id, cl.account_id, cl.agent_id, cl.status, cl.from_number, cl.to_number, cl.is_owner_call,
         r.process_id AS relay_process, w.webhook_id IS NOT NULL AS has_webhook INTO c
    FROM calls cl
    JOIN agents a ON a.agent_id = cl.agent_id
    LEFT JOIN relay_sessions r ON r.agent_id = a.agent_id AND r.last_seen_at > p_relay_live_since
    LEFT JOIN webhooks w ON w.agent_id = a.agent_id
    WHERE cl.call_id = p_call_id FOR UPDATE OF cl;
  IF NOT FOUND THEN RETURN json_build_object('outcome', 'not_in_progress', 'status', null); END IF;
  IF c.status <> 'in-progress' THEN RETURN json_build_object('outcome', 'not_in_progress', 'status', c.status); END IF;
  IF c.relay_process IS NULL AND c.has_webhook THEN RETURN json_build_object('outcome', 'webhook'); END IF;

  -- The open turn goes stale, the new one opens, its line joins the transcript; v_last is the
  -- transcript's last line before it. One statement: its data-modifying WITH clauses see the rows
  -- as they were when it began, which is what each part reads.
  WITH stale AS (
    UPDATE turns SET status = 'stale', closed_at = p_now WHERE call_id = p_call_id AND status = 'open'
  ), opened AS (
    INSERT INTO turns (turn_id, call_id, text, input, opened_at) VALUES (p_turn_id, p_call_id, p_text, p_input, p_now)
  ), line AS (
    INSERT INTO transcript_entries (call_id, role, text, turn_id, created_at)
      VALUES (p_call_id, 'user', p_text, p_turn_id, p_now) RETURNING entry_id
  )
  SELECT (SELECT max(entry_id) FROM transcript_entries WHERE call_id = p_call_id), line.entry_id INTO v_last, v_entry FROM line;
  -- The window the application kept (JSON text, this utterance last) holds if it ended with the
  -- call's last line; else it is read afresh.
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
             'timestamp', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY entry_id), '[]'::json)::text,
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

  -- The envelope is the application's (its shape is written only there); its holes are format()
  -- arguments, each filled with a JSON value: 1 agent_id, 2 account_id, 3 from_number,
  -- 4 to_number, 5 is_owner_call, 6 session_key (p_session_key names the agent with %s),
  -- 7 conversation, 8 conversation_omitted. The json column keeps the text as it is, key order
  -- included.
  v_envelope := format(p_envelope, to_json(c.agent_id), to_json(c.account_id), to_json(c.from_number),
    to_json(c.to_number), to_json(c.is_owner_call), to_json(format(p_session_key, c.agent_id)),
    v_conversation, v_omitted)::json;

  -- An agent's events are written under a per-agent advisory lock held to commit, so they commit
  -- in the order of their seq. Taken in a statement of its own: the next one must begin after it,
  -- to see every earlier event of the agent committed.
  PERFORM pg_advisory_xact_lock(p_events_lock, hashtext(c.agent_id));
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

  -- The other processes hear of it (NOTIFY is held until commit), in the bus's own message
  -- shape (c: channel, p: sender, m: message; core/bus-postgres.ts); this process is told from
  -- memory by the caller. Only when the relay socket is not this process's own.
  IF p_notify AND c.relay_process IS DISTINCT FROM p_process_id THEN
    v_message := json_build_object('c', p_events_channel, 'p', p_process_id, 'm', json_build_object(
      'agent_id', c.agent_id, 'account_id', c.account_id, 'seq', v_seq, 'before', v_before, 'event', v_envelope))::text;
    IF octet_length(v_message) > p_notify_max_bytes THEN
      -- Too large for a NOTIFY: ids only; the receiver reads its backlog.
      v_message := json_build_object('c', p_events_channel, 'p', p_process_id,
        'm', json_build_object('agent_id', c.agent_id, 'account_id', c.account_id))::text;
    END IF;
    PERFORM pg_notify(p_bus_channel, v_message);
  END IF;

  -- What the application needs to build the same envelope for this process's receivers; the
  -- window only when it was read here.
  RETURN json_build_object('outcome', 'opened', 'agent_id', c.agent_id, 'account_id', c.account_id,
    'from_number', c.from_number, 'to_number', c.to_number, 'is_owner_call', c.is_owner_call,
    'seq', v_seq, 'before', v_before, 'entry_id', v_entry,
    'conversation', CASE WHEN v_recomputed THEN v_conversation::json END,
    'conversation_omitted', CASE WHEN v_recomputed THEN v_omitted END);
END;
$$;
--> statement-breakpoint
DROP FUNCTION IF EXISTS agentline_push_context(text, text, text, boolean, timestamptz, text, text[]);
--> statement-breakpoint
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
