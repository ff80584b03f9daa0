-- A database in the layout of schema version 3 (before version 4 added authors, approval and the
-- audit trail), kept so that tests/db_door.rs can check it is migrated and its run goes on: the
-- run of t.toml and t.var beside this file, made with spsa at commit 8266227 by
-- `SPSA_WORK_WINDOW=10 spsa run t.toml --db URL --no-play` and one `spsa worker --until-idle`
-- (run active, 10 of 40 results), then `pg_dump --no-owner --no-privileges -n spsa`.
--
--
-- PostgreSQL database dump
--

\restrict xataB5vafzNVAkFqZnj7Kvhm6fViYwerrCrOnhoNh0n5dyq8ghbNqYBcU7CpWyC

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: spsa; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA spsa;


--
-- Name: active_runs(); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.active_runs() RETURNS TABLE(id bigint, name text, definition jsonb, iterations bigint, applied bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT id, name, definition, iterations, applied FROM spsa.runs WHERE state = 'active' ORDER BY id;
$$;


--
-- Name: artifact(text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.artifact(p_sha256 text) RETURNS bytea
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT bytes FROM spsa.artifacts WHERE sha256 = p_sha256;
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: work; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.work (
    run_id bigint NOT NULL,
    iteration bigint NOT NULL,
    step double precision[],
    pairs integer NOT NULL,
    state text DEFAULT 'open'::text NOT NULL,
    token uuid,
    worker text,
    leased_at timestamp with time zone,
    lease_expires timestamp with time zone,
    leased_theta double precision[],
    attempts integer DEFAULT 0 NOT NULL,
    CONSTRAINT work_state_check CHECK ((state = ANY (ARRAY['open'::text, 'leased'::text, 'done'::text])))
);


--
-- Name: check_report(spsa.work, text, uuid, text, integer, integer, integer, integer[], text[], text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.check_report(wk spsa.work, w text, p_token uuid, p_what text, p_wins integer, p_draws integer, p_losses integer, p_pentanomial integer[], p_faults text[], p_records text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
BEGIN
  IF wk.state <> 'leased' OR wk.token IS DISTINCT FROM p_token OR p_token IS NULL
     OR wk.worker IS DISTINCT FROM w THEN
    RAISE EXCEPTION 'no current lease for % of run % with this token (taken back?)', p_what, wk.run_id
      USING ERRCODE = 'SP003';
  END IF;
  IF p_wins < 0 OR p_draws < 0 OR p_losses < 0 OR p_wins + p_draws + p_losses <> 2 * wk.pairs THEN
    RAISE EXCEPTION 'counts +% =% -% do not make % pairs', p_wins, p_draws, p_losses, wk.pairs
      USING ERRCODE = 'SP004';
  END IF;
  IF p_pentanomial IS NULL OR array_length(p_pentanomial, 1) IS DISTINCT FROM 5
     OR EXISTS (SELECT FROM unnest(p_pentanomial) x WHERE x IS NULL OR x < 0)
     OR (SELECT sum(x) FROM unnest(p_pentanomial) x) <> wk.pairs
     OR array_length(p_faults, 1) > 1000 OR length(p_records) > 10000000 THEN
    RAISE EXCEPTION 'malformed pentanomial, faults or records' USING ERRCODE = 'SP004';
  END IF;
  RETURN true;
END
$$;


--
-- Name: clock_scaled(text, bigint, double precision, double precision); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.clock_scaled(p_worker text, p_run bigint, p_nps double precision, p_scale double precision) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  INSERT INTO spsa.worker_clocks (run_id, worker, nps, scale)
  VALUES (p_run, spsa.worker_key(p_worker), p_nps, least(greatest(p_scale, 0.25), 4))
  ON CONFLICT (run_id, worker) DO UPDATE SET nps = excluded.nps, scale = excluded.scale, measured = now();
$$;


--
-- Name: count_pairs(text, bigint, uuid, integer, double precision, text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.count_pairs(p_worker text, p_run bigint, p_token uuid, p_count integer, p_llr double precision, p_decision text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
DECLARE
  w text := spsa.worker_key(p_worker);
  r spsa.runs;
  ready int;
  n bigint;
BEGIN
  SELECT * INTO r FROM spsa.runs x WHERE x.id = p_run FOR UPDATE;
  IF NOT FOUND OR r.kind <> 'match' THEN
    RAISE EXCEPTION 'run % is not a match', p_run USING ERRCODE = 'SP001';
  END IF;
  -- Only the worker that just reported a pair of this match with this token counts.
  IF NOT EXISTS (SELECT FROM spsa.match_pairs m
                  WHERE m.run_id = p_run AND m.token = p_token AND m.worker = w) THEN
    RAISE EXCEPTION 'no pair of match % reported with this token', p_run USING ERRCODE = 'SP003';
  END IF;
  IF p_count = 0 AND p_decision IS NULL THEN
    RETURN r.applied;
  END IF;
  IF r.state NOT IN ('active', 'paused') THEN
    RAISE EXCEPTION 'match % is %', p_run, r.state USING ERRCODE = 'SP005';
  END IF;
  SELECT count(*) INTO ready FROM (
    SELECT m.pair - r.applied - row_number() OVER (ORDER BY m.pair) AS gap
      FROM spsa.match_pairs m WHERE m.run_id = p_run AND NOT m.counted AND m.pair > r.applied) g
   WHERE g.gap = 0;
  IF p_count IS NULL OR p_count < 0 OR p_count > ready
     OR (p_decision IS NULL AND p_count <> ready)
     OR (p_decision IS NOT NULL AND p_decision NOT IN ('H0', 'H1'))
     OR p_llr IS NULL OR p_llr = 'NaN'::float8 THEN
    RAISE EXCEPTION 'cannot count % of the % pairs ready (decision %)', p_count, ready, p_decision
      USING ERRCODE = 'SP004';
  END IF;
  UPDATE spsa.match_pairs m SET counted = true
   WHERE m.run_id = p_run AND m.pair > r.applied AND m.pair <= r.applied + p_count;
  UPDATE spsa.runs x
     SET applied = x.applied + p_count,
         wins = x.wins + c.wins, draws = x.draws + c.draws, losses = x.losses + c.losses,
         pentanomial = ARRAY(SELECT x.pentanomial[i] + c.penta[i] FROM generate_series(1, 5) i ORDER BY i),
         llr = p_llr, decision = p_decision, updated = now(),
         state = CASE WHEN p_decision IS NOT NULL OR x.applied + p_count >= x.iterations
                      THEN 'finished' ELSE x.state END
    FROM (SELECT coalesce(sum(m.wins), 0) AS wins, coalesce(sum(m.draws), 0) AS draws,
                 coalesce(sum(m.losses), 0) AS losses,
                 ARRAY(SELECT count(*) FILTER (WHERE m2.bucket = i)
                         FROM generate_series(0, 4) i
                         LEFT JOIN spsa.match_pairs m2
                           ON m2.run_id = p_run AND m2.pair > r.applied AND m2.pair <= r.applied + p_count
                        GROUP BY i ORDER BY i) AS penta
            FROM spsa.match_pairs m
           WHERE m.run_id = p_run AND m.pair > r.applied AND m.pair <= r.applied + p_count) c
   WHERE x.id = p_run
  RETURNING x.applied INTO n;
  -- Only pairs past the last row: an existing row may be leased by a transaction that waits for
  -- this match's row (spsa.lease_within locks a work row, then the run), and inserting over it
  -- would wait for that one in turn. Reports of a match serialize on its row, so no other
  -- transaction adds these rows meanwhile.
  INSERT INTO spsa.work (run_id, iteration, pairs)
  SELECT p_run, g, 1
    FROM generate_series((SELECT coalesce(max(x.iteration), 0) + 1 FROM spsa.work x WHERE x.run_id = p_run),
                         least(r.iterations, n + r.match_window)) g;
  RETURN n;
END
$$;


--
-- Name: engine_checked(text, bigint, text, boolean, text, text, text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.engine_checked(p_worker text, p_run bigint, p_side text, p_own boolean, p_sha256 text, p_signature text, p_refused text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  INSERT INTO spsa.worker_engines (run_id, worker, side, own_build, sha256, signature, refused)
  SELECT p_run, spsa.worker_key(p_worker), left(p_side, 20), p_own, left(p_sha256, 64),
         left(p_signature, 500), left(p_refused, 2000)
   WHERE EXISTS (SELECT FROM spsa.runs WHERE id = p_run)
  ON CONFLICT (run_id, worker, side) DO UPDATE
    SET own_build = excluded.own_build, sha256 = excluded.sha256, signature = excluded.signature,
        refused = excluded.refused, checked = now();
$$;


--
-- Name: give_back(text, uuid[]); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.give_back(p_worker text, p_tokens uuid[]) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
DECLARE
  n bigint;
BEGIN
  UPDATE spsa.work SET state = 'open', token = NULL, lease_expires = NULL
   WHERE token = ANY (p_tokens) AND state = 'leased' AND worker = spsa.worker_key(p_worker);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$$;


--
-- Name: heartbeat(text, uuid[]); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.heartbeat(p_worker text, p_tokens uuid[]) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
DECLARE
  w text := spsa.worker_key(p_worker);
  n bigint;
BEGIN
  UPDATE spsa.work wk SET lease_expires = now() + make_interval(secs => r.lease_seconds)
    FROM spsa.runs r
   WHERE wk.token = ANY (p_tokens) AND wk.state = 'leased' AND wk.worker = w AND r.id = wk.run_id;
  GET DIAGNOSTICS n = ROW_COUNT;
  -- The worker's row after its work rows, the order a report and a lease take them in: taken
  -- first, a heartbeat and a report of the same worker could each wait on the other's lock.
  UPDATE spsa.workers SET last_seen = now() WHERE name = w;
  RETURN n;
END
$$;


--
-- Name: hello(text, text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.hello(p_worker text, p_note text) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  INSERT INTO spsa.workers (name, role, note) VALUES (spsa.worker_key(p_worker), session_user, left(p_note, 2000))
  ON CONFLICT (name) DO UPDATE SET last_seen = now(), note = excluded.note;
$$;


--
-- Name: join_level(); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.join_level() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
BEGIN
  IF NEW.state = 'active' AND (TG_OP = 'INSERT' OR OLD.state <> 'active'
                               OR OLD.priority <> NEW.priority) THEN
    NEW.pass := coalesce((SELECT max(r.pass) FROM spsa.runs r
                           WHERE r.state = 'active' AND r.priority = NEW.priority AND r.id <> NEW.id),
                         0);
  END IF;
  RETURN NEW;
END
$$;


--
-- Name: lease(text, bigint[], integer); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.lease(p_worker text, p_runs bigint[], p_count integer) RETURNS TABLE(run_id bigint, iteration bigint, token uuid, theta double precision[], pairs integer)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT * FROM spsa.lease_within(spsa.worker_key(p_worker), p_runs, 2147483647, greatest(p_count, 0));
$$;


--
-- Name: lease_share(text, bigint[], integer); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.lease_share(p_worker text, p_runs bigint[], p_games integer) RETURNS TABLE(run_id bigint, iteration bigint, token uuid, theta double precision[], pairs integer)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT * FROM spsa.lease_within(spsa.worker_key(p_worker), p_runs, greatest(p_games, 1), 256);
$$;


--
-- Name: lease_within(text, bigint[], integer, integer); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.lease_within(w text, p_runs bigint[], p_games integer, p_count integer) RETURNS TABLE(run_id bigint, iteration bigint, token uuid, theta double precision[], pairs integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
DECLARE
  skip bigint[] := '{}';
  -- This call's leases per run, added to the passes at the end: the rows of the runs are
  -- locked then, in id order, and the worker's row last (as spsa.report locks a run, then its
  -- worker), so two leases or a lease and a report never wait on each other in a circle.
  got_runs bigint[] := '{}';
  got_games float8[] := '{}';
  games int := 0;
  n int := 0;
  pick_run bigint;
  pick_share float8;
  pick_iteration bigint;
BEGIN
  -- Asynchronous commit (see spsa.report): a lease lost in a crash only costs its games.
  PERFORM set_config('synchronous_commit', 'off', true);
  WHILE games < p_games AND n < least(p_count, 256) LOOP
    SELECT r.id, r.throughput INTO pick_run, pick_share FROM spsa.runs r
     WHERE r.id = ANY (p_runs) AND r.state = 'active' AND NOT r.id = ANY (skip)
       AND NOT EXISTS (SELECT FROM spsa.worker_engines e
                        WHERE e.run_id = r.id AND e.worker = w AND e.refused IS NOT NULL)
     ORDER BY r.priority DESC,
              r.pass + coalesce((SELECT sum(g.games) FROM unnest(got_runs, got_games) AS g(id, games)
                                  WHERE g.id = r.id), 0) / r.throughput,
              r.id
     LIMIT 1;
    EXIT WHEN NOT FOUND;
    SELECT wk.iteration INTO pick_iteration FROM spsa.work wk
     WHERE wk.run_id = pick_run AND wk.state <> 'done'
       AND (wk.state = 'open' OR wk.lease_expires < now())
     ORDER BY wk.iteration
     LIMIT 1
     FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      skip := skip || pick_run;
      CONTINUE;
    END IF;
    UPDATE spsa.work wk
       SET state = 'leased', token = gen_random_uuid(), worker = w, leased_at = now(),
           lease_expires = now() + make_interval(secs => r.lease_seconds),
           attempts = wk.attempts + 1
      FROM spsa.runs r
     WHERE wk.run_id = pick_run AND wk.iteration = pick_iteration AND r.id = wk.run_id
    -- A point of the curve measures the θ it was added with; an iteration, the run's θ now
    -- (handed to the worker, not stored: the row would keep a copy of θ per iteration).
    RETURNING wk.run_id, wk.iteration, wk.token,
              CASE WHEN wk.iteration < 0 THEN wk.leased_theta ELSE r.theta END, wk.pairs
      INTO run_id, iteration, token, theta, pairs;
    got_runs := got_runs || pick_run;
    got_games := got_games || (2 * pairs)::float8;
    games := games + 2 * pairs;
    n := n + 1;
    RETURN NEXT;
  END LOOP;
  FOR pick_run, pick_share IN
    SELECT g.id, sum(g.games) FROM unnest(got_runs, got_games) AS g(id, games) GROUP BY g.id ORDER BY g.id
  LOOP
    UPDATE spsa.runs r SET pass = r.pass + pick_share / r.throughput WHERE r.id = pick_run;
  END LOOP;
  UPDATE spsa.workers SET last_seen = now() WHERE name = w;
END
$$;


--
-- Name: reference_nps(bigint, double precision); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.reference_nps(p_run bigint, p_nps double precision) RETURNS double precision
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT reference_nps FROM spsa.runs WHERE id = p_run;
$$;


--
-- Name: report(text, bigint, bigint, uuid, double precision, integer, integer, integer, integer[], text[], text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.report(p_worker text, p_run bigint, p_iteration bigint, p_token uuid, p_signal double precision, p_wins integer, p_draws integer, p_losses integer, p_pentanomial integer[], p_faults text[], p_records text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
DECLARE
  w text := spsa.worker_key(p_worker);
  wk spsa.work;
  r spsa.runs;
  new_theta float8[];
  n bigint;
  prior bigint;
BEGIN
  -- A measurement of the curve moves no θ (its step is empty): a worker from before the curve
  -- that leased one cannot apply it here.
  IF p_iteration < 0 THEN
    RAISE EXCEPTION 'work % of run % is a measurement of the curve: spsa.report_track records it',
      p_iteration, p_run USING ERRCODE = 'SP001';
  END IF;
  SELECT * INTO wk FROM spsa.work WHERE run_id = p_run AND iteration = p_iteration FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'run % has no iteration %', p_run, p_iteration USING ERRCODE = 'SP001';
  END IF;
  IF wk.state = 'done' THEN
    SELECT seq INTO prior FROM spsa.results
     WHERE run_id = p_run AND iteration = p_iteration AND token = p_token AND worker = w;
    IF FOUND THEN
      RETURN prior;
    END IF;
    RAISE EXCEPTION 'iteration % of run % was already reported', p_iteration, p_run USING ERRCODE = 'SP002';
  END IF;
  PERFORM spsa.check_report(wk, w, p_token, 'iteration ' || p_iteration, p_wins, p_draws,
                            p_losses, p_pentanomial, p_faults, p_records);
  IF wk.step IS NULL THEN
    RAISE EXCEPTION 'iteration % of run % has no step', p_iteration, p_run USING ERRCODE = 'SP001';
  END IF;
  IF p_signal IS NULL OR p_signal = 'NaN'::float8 OR abs(p_signal) > 2 * wk.pairs THEN
    RAISE EXCEPTION 'signal % out of range [-%, %]', p_signal, 2 * wk.pairs, 2 * wk.pairs USING ERRCODE = 'SP004';
  END IF;
  IF p_signal <> (p_wins - p_losses)::float8 THEN
    RAISE EXCEPTION 'counts +% =% -% do not make % pairs scoring %', p_wins, p_draws, p_losses, wk.pairs, p_signal
      USING ERRCODE = 'SP004';
  END IF;
  -- Reports of a run serialize on its row until they commit. A synchronous commit would hold the
  -- row through a disk flush, capping a run at one report per flush; this one commits
  -- asynchronously (the WAL writer flushes within a fraction of a second). A crash of the server
  -- can lose the last reports, never half of one: their leases run out and their iterations are
  -- played again. The owner mirrors only results a synchronous commit of its own has flushed
  -- (see Mirror::pull), so it never writes out a result a crash could take back.
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT * INTO r FROM spsa.runs WHERE id = p_run FOR UPDATE;
  -- A paused run still takes the results of leases handed out before the pause.
  IF r.state NOT IN ('active', 'paused') THEN
    RAISE EXCEPTION 'run % is %', p_run, r.state USING ERRCODE = 'SP005';
  END IF;
  -- One pass over the arrays side by side (subscripting them in a loop reads each whole array
  -- again per element: a second a report at 10,000 variables).
  new_theta := ARRAY(
    SELECT least(h, greatest(l, t + st * p_signal))
      FROM unnest(r.theta, wk.step, r.lo, r.hi) WITH ORDINALITY AS u(t, st, l, h, i) ORDER BY i);
  UPDATE spsa.runs
     SET theta = new_theta, applied = applied + 1, updated = now(),
         wins = wins + p_wins, draws = draws + p_draws, losses = losses + p_losses,
         pentanomial = ARRAY(SELECT pentanomial[i] + p_pentanomial[i] FROM generate_series(1, 5) i ORDER BY i),
         faults = faults + coalesce(array_length(p_faults, 1), 0),
         -- A run with a curve finishes when its last point is measured (spsa.report_track).
         state = CASE WHEN applied + 1 >= iterations AND track_interval IS NULL THEN 'finished'
                      ELSE state END
   WHERE id = p_run
  RETURNING applied INTO n;
  -- Applied: the row keeps no array (its step is the owner's to derive again, θ is replayed).
  UPDATE spsa.work SET state = 'done', lease_expires = NULL, step = NULL, leased_theta = NULL
   WHERE run_id = p_run AND iteration = p_iteration;
  IF n % r.snapshot_every = 0 OR n >= r.iterations THEN
    INSERT INTO spsa.snapshots (run_id, seq, theta) VALUES (p_run, n, new_theta);
  END IF;
  -- The curve's point this result makes due, at the θ it leaves (see spsa.track_results).
  IF r.track_interval IS NOT NULL AND (n % r.track_interval = 0 OR n >= r.iterations) THEN
    INSERT INTO spsa.work (run_id, iteration, step, pairs, leased_theta)
    SELECT p_run, -(((n + r.track_interval - 1) / r.track_interval - 1) * r.track_units + s + 1),
           '{}', r.track_pairs, new_theta
      FROM generate_series(0, r.track_units - 1) AS s
    ON CONFLICT DO NOTHING;
  END IF;
  INSERT INTO spsa.results (run_id, iteration, seq, token, worker, signal, wins, draws, losses,
                            pentanomial, faults, records, theta_sum)
  VALUES (p_run, p_iteration, n, p_token, w, p_signal, p_wins, p_draws, p_losses,
          p_pentanomial, coalesce(p_faults, '{}'), coalesce(p_records, ''),
          spsa.theta_checksum(new_theta));
  INSERT INTO spsa.worker_runs (run_id, worker, results, faults, last_report)
  VALUES (p_run, w, 1, coalesce(array_length(p_faults, 1), 0), now())
  ON CONFLICT (run_id, worker) DO UPDATE
    SET results = spsa.worker_runs.results + 1, faults = spsa.worker_runs.faults + excluded.faults,
        last_report = excluded.last_report;
  UPDATE spsa.workers
     SET pairs = pairs + wk.pairs, games = games + 2 * wk.pairs,
         faults = faults + coalesce(array_length(p_faults, 1), 0), last_seen = now()
   WHERE name = w;
  RETURN n;
END
$$;


--
-- Name: report_pair(text, bigint, bigint, uuid, integer, integer, integer, integer[], text[], text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.report_pair(p_worker text, p_run bigint, p_pair bigint, p_token uuid, p_wins integer, p_draws integer, p_losses integer, p_pentanomial integer[], p_faults text[], p_records text) RETURNS TABLE(seq bigint, counted bigint, pentanomial bigint[], next integer[])
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
#variable_conflict use_column
DECLARE
  w text := spsa.worker_key(p_worker);
  wk spsa.work;
  r spsa.runs;
  n bigint;
  b int;
  prior bigint;
BEGIN
  SELECT * INTO wk FROM spsa.work x WHERE x.run_id = p_run AND x.iteration = p_pair FOR UPDATE;
  IF NOT FOUND OR p_pair < 1 THEN
    RAISE EXCEPTION 'match % has no pair %', p_run, p_pair USING ERRCODE = 'SP001';
  END IF;
  IF wk.state = 'done' THEN
    SELECT m.seq INTO prior FROM spsa.match_pairs m
     WHERE m.run_id = p_run AND m.pair = p_pair AND m.token = p_token AND m.worker = w;
    IF FOUND THEN
      RETURN QUERY SELECT prior, 0::bigint, '{0,0,0,0,0}'::bigint[], '{}'::int[];
      RETURN;
    END IF;
    RAISE EXCEPTION 'pair % of match % was already reported', p_pair, p_run USING ERRCODE = 'SP002';
  END IF;
  PERFORM spsa.check_report(wk, w, p_token, 'pair ' || p_pair, p_wins, p_draws, p_losses,
                            p_pentanomial, p_faults, p_records);
  IF wk.pairs <> 1 THEN
    RAISE EXCEPTION 'work % of run % is not a pair of a match', p_pair, p_run USING ERRCODE = 'SP001';
  END IF;
  -- The pentanomial of one pair is one 1; its index is the pair's score in half points.
  b := array_position(p_pentanomial, 1) - 1;
  IF b IS DISTINCT FROM p_wins * 2 + p_draws THEN
    RAISE EXCEPTION 'pentanomial % does not make +% =% -%', p_pentanomial, p_wins, p_draws, p_losses
      USING ERRCODE = 'SP004';
  END IF;
  -- Committed asynchronously, as spsa.report is.
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT * INTO r FROM spsa.runs x WHERE x.id = p_run FOR UPDATE;
  IF r.kind <> 'match' THEN
    RAISE EXCEPTION 'run % is not a match', p_run USING ERRCODE = 'SP001';
  END IF;
  UPDATE spsa.work x SET state = 'done', lease_expires = NULL
   WHERE x.run_id = p_run AND x.iteration = p_pair;
  UPDATE spsa.runs x SET match_reported = x.match_reported + 1, updated = now()
   WHERE x.id = p_run RETURNING x.match_reported INTO n;
  INSERT INTO spsa.match_pairs (run_id, pair, seq, token, worker, wins, draws, losses, bucket,
                                faults, records)
  VALUES (p_run, p_pair, n, p_token, w, p_wins, p_draws, p_losses, b,
          coalesce(p_faults, '{}'), coalesce(p_records, ''));
  INSERT INTO spsa.worker_runs (run_id, worker, results, faults, last_report)
  VALUES (p_run, w, 1, coalesce(array_length(p_faults, 1), 0), now())
  ON CONFLICT (run_id, worker) DO UPDATE
    SET results = spsa.worker_runs.results + 1, faults = spsa.worker_runs.faults + excluded.faults,
        last_report = excluded.last_report;
  UPDATE spsa.workers x
     SET pairs = x.pairs + 1, games = x.games + 2,
         faults = x.faults + coalesce(array_length(p_faults, 1), 0), last_seen = now()
   WHERE x.name = w;
  IF r.state NOT IN ('active', 'paused') THEN
    RETURN QUERY SELECT n, r.applied, r.pentanomial, '{}'::int[];
    RETURN;
  END IF;
  RETURN QUERY
    SELECT n, r.applied, r.pentanomial,
           coalesce((SELECT array_agg(m.bucket::int ORDER BY m.pair)
                       FROM (SELECT m.pair, m.bucket, m.pair - r.applied - row_number() OVER (ORDER BY m.pair) AS gap
                               FROM spsa.match_pairs m
                              WHERE m.run_id = p_run AND NOT m.counted AND m.pair > r.applied) m
                      WHERE m.gap = 0), '{}');
END
$$;


--
-- Name: report_track(text, bigint, bigint, uuid, integer, integer, integer, integer[], text[], text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.report_track(p_worker text, p_run bigint, p_iteration bigint, p_token uuid, p_wins integer, p_draws integer, p_losses integer, p_pentanomial integer[], p_faults text[], p_records text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
DECLARE
  w text := spsa.worker_key(p_worker);
  wk spsa.work;
  r spsa.runs;
  n bigint;
  prior bigint;
BEGIN
  IF p_iteration >= 0 THEN
    RAISE EXCEPTION 'iteration % of run % is not a measurement of the curve', p_iteration, p_run
      USING ERRCODE = 'SP001';
  END IF;
  SELECT * INTO wk FROM spsa.work WHERE run_id = p_run AND iteration = p_iteration FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'run % has no measurement %', p_run, -p_iteration - 1 USING ERRCODE = 'SP001';
  END IF;
  IF wk.state = 'done' THEN
    SELECT seq INTO prior FROM spsa.track_results
     WHERE run_id = p_run AND unit = -p_iteration - 1 AND token = p_token AND worker = w;
    IF FOUND THEN
      RETURN prior;
    END IF;
    RAISE EXCEPTION 'measurement % of run % was already reported', -p_iteration - 1, p_run
      USING ERRCODE = 'SP002';
  END IF;
  PERFORM spsa.check_report(wk, w, p_token, 'measurement ' || (-p_iteration - 1), p_wins,
                            p_draws, p_losses, p_pentanomial, p_faults, p_records);
  -- Committed asynchronously, as spsa.report is (and mirrored only once flushed).
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT * INTO r FROM spsa.runs WHERE id = p_run FOR UPDATE;
  IF r.state NOT IN ('active', 'paused') THEN
    RAISE EXCEPTION 'run % is %', p_run, r.state USING ERRCODE = 'SP005';
  END IF;
  UPDATE spsa.work SET state = 'done', lease_expires = NULL, leased_theta = NULL
   WHERE run_id = p_run AND iteration = p_iteration;
  UPDATE spsa.runs
     SET track_reported = track_reported + 1, updated = now(),
         state = CASE WHEN applied >= iterations
                       AND NOT EXISTS (SELECT FROM spsa.work x WHERE x.run_id = p_run AND x.state <> 'done')
                      THEN 'finished' ELSE state END
   WHERE id = p_run
  RETURNING track_reported INTO n;
  INSERT INTO spsa.track_results (run_id, unit, seq, token, worker, wins, draws, losses,
                                  pentanomial, faults, records)
  VALUES (p_run, -p_iteration - 1, n, p_token, w, p_wins, p_draws, p_losses, p_pentanomial,
          coalesce(p_faults, '{}'), coalesce(p_records, ''));
  UPDATE spsa.workers
     SET pairs = pairs + wk.pairs, games = games + 2 * wk.pairs,
         faults = faults + coalesce(array_length(p_faults, 1), 0), last_seen = now()
   WHERE name = w;
  RETURN n;
END
$$;


--
-- Name: status_clocks(bigint); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.status_clocks(p_run bigint) RETURNS TABLE(run_id bigint, pruned text, reference_nps double precision, workers text[], nps double precision[], scales double precision[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT r.id, to_char(r.pruned, 'YYYY-MM-DD HH24:MI TZ'), r.reference_nps,
         coalesce(array_agg(c.worker ORDER BY c.worker) FILTER (WHERE c.worker IS NOT NULL), '{}'),
         coalesce(array_agg(c.nps ORDER BY c.worker) FILTER (WHERE c.worker IS NOT NULL), '{}'),
         coalesce(array_agg(c.scale ORDER BY c.worker) FILTER (WHERE c.worker IS NOT NULL), '{}')
    FROM spsa.runs r LEFT JOIN spsa.worker_clocks c ON c.run_id = r.id
   WHERE p_run IS NULL OR r.id = p_run
   GROUP BY r.id ORDER BY r.id;
$$;


--
-- Name: status_engines(bigint); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.status_engines(p_run bigint) RETURNS TABLE(run_id bigint, worker text, side text, own_build boolean, sha256 text, signature text, refused text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT e.run_id, e.worker, e.side, e.own_build, e.sha256, e.signature, e.refused
    FROM spsa.worker_engines e
   WHERE p_run IS NULL OR e.run_id = p_run
   ORDER BY e.run_id, e.worker, e.side;
$$;


--
-- Name: status_matches(bigint); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.status_matches(p_run bigint) RETURNS TABLE(id bigint, name text, state text, planned bigint, wins bigint, draws bigint, losses bigint, pentanomial bigint[], sprt double precision[], llr double precision, decision text, reported bigint, not_counted bigint, recent bigint, leased bigint, workers text[], definition jsonb, elapsed double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT r.id, r.name, r.state, r.iterations, r.wins, r.draws, r.losses, r.pentanomial,
         r.sprt, r.llr, r.decision, r.match_reported,
         (SELECT count(*) FROM spsa.match_pairs m WHERE m.run_id = r.id AND NOT m.counted),
         (SELECT count(*) FROM spsa.match_pairs m WHERE m.run_id = r.id
             AND m.reported > now() - interval '60 seconds'),
         (SELECT count(*) FROM spsa.work w WHERE w.run_id = r.id AND w.state = 'leased'
             AND w.lease_expires >= now()),
         coalesce((SELECT array_agg(x.worker || ' ' || x.results ORDER BY x.worker)
                     FROM spsa.worker_runs x WHERE x.run_id = r.id), '{}'),
         r.definition, extract(epoch FROM r.updated - r.created)::float8
    FROM spsa.runs r
   WHERE r.kind = 'match' AND (p_run IS NULL OR r.id = p_run)
   ORDER BY r.id;
$$;


--
-- Name: status_runs(); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.status_runs() RETURNS TABLE(id bigint, name text, state text, applied bigint, iterations bigint, recent_pairs bigint, var_names text[], theta double precision[], leased bigint, wins bigint, draws bigint, losses bigint, faults bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT r.id, r.name, r.state, r.applied, r.iterations,
         (SELECT coalesce(sum(w.pairs), 0)::bigint FROM spsa.results x JOIN spsa.work w USING (run_id, iteration)
           WHERE x.run_id = r.id AND x.reported > now() - interval '60 seconds'),
         r.var_names, r.theta,
         (SELECT count(*) FROM spsa.work w WHERE w.run_id = r.id AND w.state = 'leased' AND w.lease_expires >= now()),
         r.wins, r.draws, r.losses, r.faults
    FROM spsa.runs r ORDER BY r.id;
$$;


--
-- Name: status_shares(bigint); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.status_shares(p_run bigint) RETURNS TABLE(run_id bigint, priority integer, throughput double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT r.id, r.priority, r.throughput FROM spsa.runs r
   WHERE p_run IS NULL OR r.id = p_run ORDER BY r.id;
$$;


--
-- Name: status_track(bigint); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.status_track(p_run bigint) RETURNS TABLE(run_id bigint, point bigint, against text, iteration bigint, pentanomial integer[])
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT t.run_id, t.unit / r.track_units + 1, r.track_against[t.unit % r.track_units + 1],
         least(r.iterations, (t.unit / r.track_units + 1) * r.track_interval), t.pentanomial
    FROM spsa.track_results t JOIN spsa.runs r ON r.id = t.run_id
   WHERE (p_run IS NULL OR t.run_id = p_run) AND r.track_units > 0
   ORDER BY t.run_id, t.seq;
$$;


--
-- Name: status_workers(); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.status_workers() RETURNS TABLE(name text, last_seen_seconds double precision, pairs bigint, games bigint, faults bigint, leased bigint, note text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'spsa', 'pg_temp'
    AS $$
  SELECT w.name, extract(epoch FROM now() - w.last_seen)::float8, w.pairs, w.games, w.faults,
         (SELECT count(*) FROM spsa.work k WHERE k.worker = w.name AND k.state = 'leased' AND k.lease_expires >= now()),
         w.note
    FROM spsa.workers w ORDER BY w.last_seen DESC;
$$;


--
-- Name: theta_checksum(double precision[]); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.theta_checksum(t double precision[]) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
  SELECT ('x' || encode(substr(sha256(coalesce(string_agg(float8send(x), ''::bytea ORDER BY i),
                                               ''::bytea)), 1, 8), 'hex'))::bit(64)::bigint
    FROM unnest(t) WITH ORDINALITY AS u(x, i);
$$;


--
-- Name: worker_key(text); Type: FUNCTION; Schema: spsa; Owner: -
--

CREATE FUNCTION spsa.worker_key(p_worker text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT session_user || '/' || left(p_worker, 200) $$;


--
-- Name: artifacts; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.artifacts (
    sha256 text NOT NULL,
    bytes bytea NOT NULL,
    size bigint NOT NULL,
    stored timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT artifacts_sha256_check CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT artifacts_size_check CHECK (((size >= 0) AND (size <= 268435456)))
);


--
-- Name: match_pairs; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.match_pairs (
    run_id bigint NOT NULL,
    pair bigint NOT NULL,
    seq bigint NOT NULL,
    token uuid NOT NULL,
    worker text NOT NULL,
    wins smallint NOT NULL,
    draws smallint NOT NULL,
    losses smallint NOT NULL,
    bucket smallint NOT NULL,
    counted boolean DEFAULT false NOT NULL,
    faults text[] NOT NULL,
    records text NOT NULL,
    reported timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT match_pairs_bucket_check CHECK (((bucket >= 0) AND (bucket <= 4)))
);


--
-- Name: results; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.results (
    run_id bigint NOT NULL,
    iteration bigint NOT NULL,
    seq bigint NOT NULL,
    token uuid NOT NULL,
    worker text NOT NULL,
    signal double precision NOT NULL,
    wins integer NOT NULL,
    draws integer NOT NULL,
    losses integer NOT NULL,
    pentanomial integer[] NOT NULL,
    faults text[] NOT NULL,
    records text NOT NULL,
    theta_sum bigint NOT NULL,
    reported timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: run_engines; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.run_engines (
    run_id bigint NOT NULL,
    side text NOT NULL,
    sha256 text NOT NULL
);


--
-- Name: runs; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.runs (
    id bigint NOT NULL,
    name text NOT NULL,
    state text DEFAULT 'active'::text NOT NULL,
    created timestamp with time zone DEFAULT now() NOT NULL,
    updated timestamp with time zone DEFAULT now() NOT NULL,
    definition jsonb NOT NULL,
    var_names text[] NOT NULL,
    lo double precision[] NOT NULL,
    hi double precision[] NOT NULL,
    start_theta double precision[] NOT NULL,
    theta double precision[] NOT NULL,
    iterations bigint NOT NULL,
    applied bigint DEFAULT 0 NOT NULL,
    lease_seconds double precision NOT NULL,
    wins bigint DEFAULT 0 NOT NULL,
    draws bigint DEFAULT 0 NOT NULL,
    losses bigint DEFAULT 0 NOT NULL,
    pentanomial bigint[] DEFAULT '{0,0,0,0,0}'::bigint[] NOT NULL,
    faults bigint DEFAULT 0 NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    pruned timestamp with time zone,
    reference_nps double precision,
    throughput double precision DEFAULT 100 NOT NULL,
    pass double precision DEFAULT 0 NOT NULL,
    track_interval bigint,
    track_units integer DEFAULT 0 NOT NULL,
    track_pairs integer DEFAULT 0 NOT NULL,
    track_against text[] DEFAULT '{}'::text[] NOT NULL,
    track_reported bigint DEFAULT 0 NOT NULL,
    snapshot_every bigint DEFAULT 1 NOT NULL,
    kind text DEFAULT 'tune'::text NOT NULL,
    sprt double precision[],
    llr double precision,
    decision text,
    match_window integer DEFAULT 0 NOT NULL,
    match_reported bigint DEFAULT 0 NOT NULL,
    CONSTRAINT runs_kind_check CHECK ((kind = ANY (ARRAY['tune'::text, 'match'::text]))),
    CONSTRAINT runs_lease_seconds_check CHECK ((lease_seconds > (0)::double precision)),
    CONSTRAINT runs_reference_nps_check CHECK ((reference_nps > (0)::double precision)),
    CONSTRAINT runs_snapshot_every_check CHECK ((snapshot_every > 0)),
    CONSTRAINT runs_state_check CHECK ((state = ANY (ARRAY['active'::text, 'paused'::text, 'finished'::text, 'stopped'::text]))),
    CONSTRAINT runs_throughput_check CHECK (((throughput > (0)::double precision) AND (throughput <= (1000)::double precision))),
    CONSTRAINT runs_track_interval_check CHECK ((track_interval > 0))
);


--
-- Name: runs_id_seq; Type: SEQUENCE; Schema: spsa; Owner: -
--

CREATE SEQUENCE spsa.runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: runs_id_seq; Type: SEQUENCE OWNED BY; Schema: spsa; Owner: -
--

ALTER SEQUENCE spsa.runs_id_seq OWNED BY spsa.runs.id;


--
-- Name: schema_installed; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.schema_installed (
    sha256 text NOT NULL
);


--
-- Name: schema_version; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.schema_version (
    version integer NOT NULL
);


--
-- Name: snapshots; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.snapshots (
    run_id bigint NOT NULL,
    seq bigint NOT NULL,
    theta double precision[] NOT NULL
);


--
-- Name: track_results; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.track_results (
    run_id bigint NOT NULL,
    unit bigint NOT NULL,
    seq bigint NOT NULL,
    token uuid NOT NULL,
    worker text NOT NULL,
    wins integer NOT NULL,
    draws integer NOT NULL,
    losses integer NOT NULL,
    pentanomial integer[] NOT NULL,
    faults text[] NOT NULL,
    records text NOT NULL,
    reported timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: worker_clocks; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.worker_clocks (
    run_id bigint NOT NULL,
    worker text NOT NULL,
    nps double precision NOT NULL,
    scale double precision NOT NULL,
    measured timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: worker_engines; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.worker_engines (
    run_id bigint NOT NULL,
    worker text NOT NULL,
    side text NOT NULL,
    own_build boolean NOT NULL,
    sha256 text NOT NULL,
    signature text NOT NULL,
    refused text,
    checked timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: worker_runs; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.worker_runs (
    run_id bigint NOT NULL,
    worker text NOT NULL,
    results bigint NOT NULL,
    faults bigint NOT NULL,
    last_report timestamp with time zone NOT NULL
);


--
-- Name: workers; Type: TABLE; Schema: spsa; Owner: -
--

CREATE TABLE spsa.workers (
    name text NOT NULL,
    role text NOT NULL,
    first_seen timestamp with time zone DEFAULT now() NOT NULL,
    last_seen timestamp with time zone DEFAULT now() NOT NULL,
    pairs bigint DEFAULT 0 NOT NULL,
    games bigint DEFAULT 0 NOT NULL,
    faults bigint DEFAULT 0 NOT NULL,
    refused bigint DEFAULT 0 NOT NULL,
    note text DEFAULT ''::text NOT NULL
);


--
-- Name: runs id; Type: DEFAULT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.runs ALTER COLUMN id SET DEFAULT nextval('spsa.runs_id_seq'::regclass);


--
-- Data for Name: artifacts; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.artifacts (sha256, bytes, size, stored) FROM stdin;
\.


--
-- Data for Name: match_pairs; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.match_pairs (run_id, pair, seq, token, worker, wins, draws, losses, bucket, counted, faults, records, reported) FROM stdin;
\.


--
-- Data for Name: results; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.results (run_id, iteration, seq, token, worker, signal, wins, draws, losses, pentanomial, faults, records, theta_sum, reported) FROM stdin;
1	1	1	4b7b91b8-b076-452a-b926-abf8f77b9701	fixw/w	0	1	0	1	{0,0,1,0,0}	{}		-7712708314808702904	2026-12-06 19:21:39.151181+00
1	2	2	0ef5d981-529b-4edf-b5be-f9ea307db340	fixw/w	0	1	0	1	{0,0,1,0,0}	{}		-7712708314808702904	2026-12-06 19:21:39.167635+00
1	3	3	1cb53a9f-4b03-493c-a3f3-2fbf2608280f	fixw/w	-2	0	0	2	{1,0,0,0,0}	{}		-5098065046490020662	2026-12-06 19:21:39.169073+00
1	4	4	8ad5b257-a085-4a20-9206-79c7f1dee6a9	fixw/w	0	1	0	1	{0,0,1,0,0}	{}		-5098065046490020662	2026-12-06 19:21:39.170115+00
1	5	5	859a3a55-c0e8-4f4d-a384-9769cc14cc0d	fixw/w	2	2	0	0	{0,0,0,0,1}	{}		4310071925634454184	2026-12-06 19:21:39.173096+00
1	6	6	30a8213c-c8d1-42f6-a488-f336477d858b	fixw/w	0	1	0	1	{0,0,1,0,0}	{}		4310071925634454184	2026-12-06 19:21:39.174252+00
1	7	7	5fef1075-bf66-41fd-8562-7fde96812c91	fixw/w	2	2	0	0	{0,0,0,0,1}	{}		8778269853578384815	2026-12-06 19:21:39.177213+00
1	8	8	2a27bc92-4c45-49dd-b760-09d3a8843b76	fixw/w	-2	0	0	2	{1,0,0,0,0}	{}		-7845518642691531649	2026-12-06 19:21:39.178+00
1	9	9	47ebc1c5-d0bf-4549-9e93-a3614ddb7a37	fixw/w	-2	0	0	2	{1,0,0,0,0}	{}		-1545114487927614138	2026-12-06 19:21:39.178742+00
1	10	10	c324156a-a5c2-42a6-b719-3634dd9f2692	fixw/w	0	1	0	1	{0,0,1,0,0}	{}		-1545114487927614138	2026-12-06 19:21:39.181208+00
\.


--
-- Data for Name: run_engines; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.run_engines (run_id, side, sha256) FROM stdin;
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.runs (id, name, state, created, updated, definition, var_names, lo, hi, start_theta, theta, iterations, applied, lease_seconds, wins, draws, losses, pentanomial, faults, priority, pruned, reference_nps, throughput, pass, track_interval, track_units, track_pairs, track_against, track_reported, snapshot_every, kind, sprt, llr, decision, match_window, match_reported) FROM stdin;
1	/tmp/fix3/t.toml	active	2026-12-06 19:21:30.137937+00	2026-12-06 19:21:39.181208+00	{"a": 4.0, "book": null, "seed": 7, "vars": [{"max": 1000.0, "min": -1000.0, "name": "x", "c_end": 100.0, "r_end": 0.002, "start": 100.0, "simul_elo": 1.0}, {"max": 1000.0, "min": -1000.0, "name": "y", "c_end": 100.0, "r_end": 0.002, "start": -50.0, "simul_elo": 4.0}], "alpha": 0.602, "gamma": 0.101, "pairs": 1, "engines": [], "simulate": true, "draw_rate": 0.0, "iterations": 40, "config_name": "t.toml", "config_text": "simulate = true\\nvariables = \\"t.var\\"\\nlog = \\"t.log\\"\\niterations = 40\\nA = 4\\ngamma = 0.101\\nalpha = 0.602\\nconcurrency = 1\\nseed = 7\\n", "lease_seconds": 60.0}	{x,y}	{-1000,-1000}	{1000,1000}	{100,-50}	{99.54122632473107,-50.88761647142048}	40	10	60	9	0	11	{3,0,5,0,2}	0	0	\N	\N	100	0.19999999999999998	\N	0	0	{}	0	1	tune	\N	\N	\N	0	0
\.


--
-- Data for Name: schema_installed; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.schema_installed (sha256) FROM stdin;
f301b18cedddc3e442fef38cf682338856afc33c9243f8e6d4ab6407c2a729bb
\.


--
-- Data for Name: schema_version; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.schema_version (version) FROM stdin;
3
\.


--
-- Data for Name: snapshots; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.snapshots (run_id, seq, theta) FROM stdin;
1	1	{100,-50}
1	2	{100,-50}
1	3	{100.93121651619673,-50.931216516196734}
1	4	{100.93121651619673,-50.931216516196734}
1	5	{101.77407065395509,-50.08836237843837}
1	6	{101.77407065395509,-50.08836237843837}
1	7	{101.00130653438615,-50.861126498007316}
1	8	{100.25802144285203,-51.604411589541435}
1	9	{99.54122632473107,-50.88761647142048}
1	10	{99.54122632473107,-50.88761647142048}
\.


--
-- Data for Name: track_results; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.track_results (run_id, unit, seq, token, worker, wins, draws, losses, pentanomial, faults, records, reported) FROM stdin;
\.


--
-- Data for Name: work; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.work (run_id, iteration, step, pairs, state, token, worker, leased_at, lease_expires, leased_theta, attempts) FROM stdin;
1	1	\N	1	done	4b7b91b8-b076-452a-b926-abf8f77b9701	fixw/w	2026-12-06 19:21:39.125887+00	\N	\N	1
1	2	\N	1	done	0ef5d981-529b-4edf-b5be-f9ea307db340	fixw/w	2026-12-06 19:21:39.134631+00	\N	\N	1
1	3	\N	1	done	1cb53a9f-4b03-493c-a3f3-2fbf2608280f	fixw/w	2026-12-06 19:21:39.137296+00	\N	\N	1
1	4	\N	1	done	8ad5b257-a085-4a20-9206-79c7f1dee6a9	fixw/w	2026-12-06 19:21:39.139236+00	\N	\N	1
1	5	\N	1	done	859a3a55-c0e8-4f4d-a384-9769cc14cc0d	fixw/w	2026-12-06 19:21:39.143194+00	\N	\N	1
1	6	\N	1	done	30a8213c-c8d1-42f6-a488-f336477d858b	fixw/w	2026-12-06 19:21:39.144231+00	\N	\N	1
1	7	\N	1	done	5fef1075-bf66-41fd-8562-7fde96812c91	fixw/w	2026-12-06 19:21:39.145422+00	\N	\N	1
1	8	\N	1	done	2a27bc92-4c45-49dd-b760-09d3a8843b76	fixw/w	2026-12-06 19:21:39.148352+00	\N	\N	1
1	9	\N	1	done	47ebc1c5-d0bf-4549-9e93-a3614ddb7a37	fixw/w	2026-12-06 19:21:39.149092+00	\N	\N	1
1	10	\N	1	done	c324156a-a5c2-42a6-b719-3634dd9f2692	fixw/w	2026-12-06 19:21:39.150188+00	\N	\N	1
\.


--
-- Data for Name: worker_clocks; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.worker_clocks (run_id, worker, nps, scale, measured) FROM stdin;
\.


--
-- Data for Name: worker_engines; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.worker_engines (run_id, worker, side, own_build, sha256, signature, refused, checked) FROM stdin;
\.


--
-- Data for Name: worker_runs; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.worker_runs (run_id, worker, results, faults, last_report) FROM stdin;
1	fixw/w	10	0	2026-12-06 19:21:39.181208+00
\.


--
-- Data for Name: workers; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.workers (name, role, first_seen, last_seen, pairs, games, faults, refused, note) FROM stdin;
fixw/w	fixw	2026-12-06 19:21:39.122122+00	2026-12-06 19:22:08.825438+00	10	20	0	0	serving run 1
\.


--
-- Name: runs_id_seq; Type: SEQUENCE SET; Schema: spsa; Owner: -
--

SELECT pg_catalog.setval('spsa.runs_id_seq', 1, true);


--
-- Name: artifacts artifacts_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.artifacts
    ADD CONSTRAINT artifacts_pkey PRIMARY KEY (sha256);


--
-- Name: match_pairs match_pairs_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.match_pairs
    ADD CONSTRAINT match_pairs_pkey PRIMARY KEY (run_id, pair);


--
-- Name: results results_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.results
    ADD CONSTRAINT results_pkey PRIMARY KEY (run_id, iteration);


--
-- Name: results results_run_id_seq_key; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.results
    ADD CONSTRAINT results_run_id_seq_key UNIQUE (run_id, seq);


--
-- Name: run_engines run_engines_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.run_engines
    ADD CONSTRAINT run_engines_pkey PRIMARY KEY (run_id, side);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);


--
-- Name: snapshots snapshots_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.snapshots
    ADD CONSTRAINT snapshots_pkey PRIMARY KEY (run_id, seq);


--
-- Name: track_results track_results_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.track_results
    ADD CONSTRAINT track_results_pkey PRIMARY KEY (run_id, unit);


--
-- Name: track_results track_results_run_id_seq_key; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.track_results
    ADD CONSTRAINT track_results_run_id_seq_key UNIQUE (run_id, seq);


--
-- Name: work work_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.work
    ADD CONSTRAINT work_pkey PRIMARY KEY (run_id, iteration);


--
-- Name: worker_clocks worker_clocks_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.worker_clocks
    ADD CONSTRAINT worker_clocks_pkey PRIMARY KEY (run_id, worker);


--
-- Name: worker_engines worker_engines_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.worker_engines
    ADD CONSTRAINT worker_engines_pkey PRIMARY KEY (run_id, worker, side);


--
-- Name: worker_runs worker_runs_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.worker_runs
    ADD CONSTRAINT worker_runs_pkey PRIMARY KEY (run_id, worker);


--
-- Name: workers workers_pkey; Type: CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (name);


--
-- Name: match_pairs_waiting; Type: INDEX; Schema: spsa; Owner: -
--

CREATE INDEX match_pairs_waiting ON spsa.match_pairs USING btree (run_id, pair) WHERE (NOT counted);


--
-- Name: results_recent; Type: INDEX; Schema: spsa; Owner: -
--

CREATE INDEX results_recent ON spsa.results USING btree (run_id, reported);


--
-- Name: work_todo; Type: INDEX; Schema: spsa; Owner: -
--

CREATE INDEX work_todo ON spsa.work USING btree (run_id, iteration) WHERE (state <> 'done'::text);


--
-- Name: runs runs_join_level; Type: TRIGGER; Schema: spsa; Owner: -
--

CREATE TRIGGER runs_join_level BEFORE INSERT OR UPDATE OF state, priority ON spsa.runs FOR EACH ROW EXECUTE FUNCTION spsa.join_level();


--
-- Name: match_pairs match_pairs_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.match_pairs
    ADD CONSTRAINT match_pairs_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: results results_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.results
    ADD CONSTRAINT results_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: run_engines run_engines_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.run_engines
    ADD CONSTRAINT run_engines_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: run_engines run_engines_sha256_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.run_engines
    ADD CONSTRAINT run_engines_sha256_fkey FOREIGN KEY (sha256) REFERENCES spsa.artifacts(sha256);


--
-- Name: snapshots snapshots_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.snapshots
    ADD CONSTRAINT snapshots_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: track_results track_results_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.track_results
    ADD CONSTRAINT track_results_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: work work_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.work
    ADD CONSTRAINT work_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: worker_clocks worker_clocks_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.worker_clocks
    ADD CONSTRAINT worker_clocks_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: worker_engines worker_engines_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.worker_engines
    ADD CONSTRAINT worker_engines_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- Name: worker_runs worker_runs_run_id_fkey; Type: FK CONSTRAINT; Schema: spsa; Owner: -
--

ALTER TABLE ONLY spsa.worker_runs
    ADD CONSTRAINT worker_runs_run_id_fkey FOREIGN KEY (run_id) REFERENCES spsa.runs(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict xataB5vafzNVAkFqZnj7Kvhm6fViYwerrCrOnhoNh0n5dyq8ghbNqYBcU7CpWyC

