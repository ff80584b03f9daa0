-- A database in the layout of schema version 2 (before version 3 added matches), kept so that
-- tests/db_layout.rs can check it is migrated and read as it was: the run of t.toml and t.var
-- beside this file, made with spsa at commit 69eaa14 by `spsa run t.toml --db URL --no-play` and
-- one `spsa worker` (run finished, 60 of 60 results), then `pg_dump --no-owner --no-privileges -n spsa`.
--
--
-- PostgreSQL database dump
--

\restrict 2Koiqhgpc5M40XdNpVsGfRvaMkkZBwArthsoFpxcpQwrwRAsPO9raQvqvkZQl0U

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
-- Data for Name: results; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.results (run_id, iteration, seq, token, worker, signal, wins, draws, losses, pentanomial, faults, records, theta_sum, reported) FROM stdin;
1	1	1	3e462984-125d-4dd4-b7dc-5766a957d0f2	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-7712708314808702904	2026-12-02 13:59:48.986957+00
1	2	2	86408948-8ea0-4595-ac29-e62485f4233e	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-7712708314808702904	2026-12-02 13:59:49.018842+00
1	3	3	db503633-8305-47da-aa0d-e830560c1c5b	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-7594037676035001946	2026-12-02 13:59:49.026485+00
1	4	4	90392f6c-3975-4c8e-b2b2-3663d9afef56	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-7594037676035001946	2026-12-02 13:59:49.02859+00
1	5	5	37153679-ac62-4b90-a181-6e4a800d8d91	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		184705307851900595	2026-12-02 13:59:49.031022+00
1	6	6	dc7eb4bf-6371-4f88-9cd5-916f77054d4f	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		184705307851900595	2026-12-02 13:59:49.035551+00
1	7	7	28bd9cff-3179-4579-9ddb-85926d1aeed8	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		7748710850370324966	2026-12-02 13:59:49.0457+00
1	8	8	21b03a4d-9042-4c11-a986-2d38c9e2c9f6	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		9067812829066930542	2026-12-02 13:59:49.048447+00
1	9	9	c277bcf1-628a-4418-81c9-ee2c02dffae7	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-4876865679411249007	2026-12-02 13:59:49.052974+00
1	10	10	f81e5c5d-40cd-44c9-a942-39d642fe95dd	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-4876865679411249007	2026-12-02 13:59:49.054413+00
1	11	11	80b8cda8-8b8f-4cce-9ff5-5a9d4c23a3f7	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-4876865679411249007	2026-12-02 13:59:49.119783+00
1	12	12	f2187254-17b4-4131-85fb-48add4106084	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-4876865679411249007	2026-12-02 13:59:49.1245+00
1	13	13	9e910407-b627-4998-a5a1-06bfb38b0c49	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		2029388251887096659	2026-12-02 13:59:49.132742+00
1	14	14	b2950204-bc51-4e8c-b0af-3f0b52edc73d	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		2029388251887096659	2026-12-02 13:59:49.134152+00
1	15	15	1b12ffc0-36b3-4282-8fae-198575868a2d	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		2029388251887096659	2026-12-02 13:59:49.135003+00
1	16	16	d6e05fba-2c49-4db8-92d2-583e0964ce79	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		2029388251887096659	2026-12-02 13:59:49.135678+00
1	17	17	6279645f-1377-4dbb-897e-bfbf75811efe	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-4435440944352743235	2026-12-02 13:59:49.148762+00
1	18	18	7f21d39e-f679-4e85-90ef-e3ecdd74afb2	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-392200334235655291	2026-12-02 13:59:49.158918+00
1	19	19	9777bc2a-a34a-4e60-b4dd-0f612bb73c85	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-3268571344718595728	2026-12-02 13:59:49.166582+00
1	20	20	0b8bb55c-c984-4a9c-8910-d3e1129d6418	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-3268571344718595728	2026-12-02 13:59:49.171481+00
1	21	21	3999bd9c-8039-42a7-b901-5fb034dfa653	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		3588268532833915335	2026-12-02 13:59:49.178827+00
1	22	22	ff023787-ab8f-4d55-a557-8e6d40950b44	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		8384803790764361362	2026-12-02 13:59:49.181113+00
1	23	23	de04a6a4-a4e2-41d9-96f9-55bdb7a205c5	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		8384803790764361362	2026-12-02 13:59:49.182985+00
1	24	24	d3477666-f5fc-4945-8da7-a02ffe9aaa6e	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		8232861669014488553	2026-12-02 13:59:49.191882+00
1	25	25	d8fd3338-0a1e-4cb5-af23-51bf5bc06d0d	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		7698154809964966505	2026-12-02 13:59:49.19344+00
1	26	26	8c20e48a-864d-4980-a07d-e739de553d4b	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		7698154809964966505	2026-12-02 13:59:49.19473+00
1	27	27	44e0c9be-e1b3-4b88-8511-593e1ccba074	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-21583656558496970	2026-12-02 13:59:49.200374+00
1	28	28	e70313f0-d4e2-4d85-b830-522b914fbe75	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-21583656558496970	2026-12-02 13:59:49.201233+00
1	29	29	6cbc875e-3ddf-42d4-b5db-b450d142a673	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-6839035180640486338	2026-12-02 13:59:49.202474+00
1	30	30	b41d240f-aa22-44ff-9d04-6fb0f3779cc6	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-6839035180640486338	2026-12-02 13:59:49.204209+00
1	31	31	d1593486-dbb9-41a7-8c5d-0c03edd4a022	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-6839035180640486338	2026-12-02 13:59:49.206397+00
1	32	32	9e1904a2-678f-406d-b9dd-a841a44331b9	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		850547911895426610	2026-12-02 13:59:49.211352+00
1	33	33	5875a084-6e0f-4305-a108-98d34da898fc	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		850547911895426610	2026-12-02 13:59:49.283091+00
1	34	34	cfa4a286-da28-4150-bdb7-76bc7c08491f	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-2894185535492642244	2026-12-02 13:59:49.376516+00
1	35	35	b35b4e73-d2be-4e69-8319-859cda715c29	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-2894185535492642244	2026-12-02 13:59:49.377837+00
1	36	36	d6d99771-f872-4193-bec6-375718ae7587	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		9217379357055239608	2026-12-02 13:59:49.380651+00
1	37	37	3ea3eb14-95d9-46b7-b679-74e406fa9965	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-3763634139830269052	2026-12-02 13:59:49.384524+00
1	38	38	88c8206b-febc-46b1-b3d8-98668e260527	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-1294972686989375727	2026-12-02 13:59:49.393303+00
1	39	39	2140cf63-07ae-45ba-9db6-f6dd8c078802	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-4494859969002904670	2026-12-02 13:59:49.39657+00
1	40	40	6b1c5fa7-32a5-417b-8de6-68903c595014	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		5007269386568800124	2026-12-02 13:59:49.451474+00
1	41	41	4a5f7a9d-98d6-4e5d-b3c8-2dadc9f783f8	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-5355676263353508742	2026-12-02 13:59:49.461832+00
1	42	42	fd19a052-0708-4111-a031-18d7e2724329	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-5355676263353508742	2026-12-02 13:59:49.463034+00
1	43	43	a116ab5f-72c5-491a-b963-91463d7cd4e0	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-6725529207045551952	2026-12-02 13:59:49.463969+00
1	44	44	489d6f2e-d359-41ab-8b90-5f8d398bd768	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-9091839057253318552	2026-12-02 13:59:49.470338+00
1	45	45	b29e323d-8201-4693-aa2a-54fb8504f37e	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-9091839057253318552	2026-12-02 13:59:49.478791+00
1	46	46	4f88eb8c-8fd5-48e2-9b41-098a0ab9078d	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-9091839057253318552	2026-12-02 13:59:49.529593+00
1	47	47	69d5a330-bbb3-48f6-b1fc-838b487b71a0	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-8246911311129517126	2026-12-02 13:59:49.542239+00
1	48	48	5fafa1dd-973b-4a15-b0e8-dcde2f46b095	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		6337419031860518287	2026-12-02 13:59:49.558295+00
1	49	49	18dc7565-dc9b-4969-a714-ba1d4034dc6a	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-2617638585691653960	2026-12-02 13:59:49.560431+00
1	50	50	5a97492a-2767-408d-ad08-949ae144cf79	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-7866242235178321263	2026-12-02 13:59:49.562067+00
1	51	51	03fc04f0-5335-49be-85b8-e2c5c792f330	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-7866242235178321263	2026-12-02 13:59:49.566298+00
1	52	52	7949bcdf-d798-4226-8bd9-87c52d6ab9b7	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-7866242235178321263	2026-12-02 13:59:49.685757+00
1	53	53	ee2bd0f0-1737-49c7-bdb4-d7940c29376a	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-7866242235178321263	2026-12-02 13:59:49.69189+00
1	54	54	e12ee959-7294-4b9d-8696-6750f2a8d129	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-3727394677712373803	2026-12-02 13:59:49.700272+00
1	55	55	e0b91a55-991d-49cb-b6bc-7dcc93d3a130	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-6384854642018924560	2026-12-02 13:59:49.709387+00
1	56	56	71cb5474-d9a7-4bbc-a20b-ac1758ab80f8	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-6384854642018924560	2026-12-02 13:59:49.712987+00
1	57	57	a74ae6f7-2a37-4d71-b0cd-1ef6ec651a83	v2w/w	2	2	0	0	{0,0,0,0,1}	{}		-2989971719787710175	2026-12-02 13:59:49.717609+00
1	58	58	8e376850-54ce-4958-aeec-584a3d6856b6	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-2989971719787710175	2026-12-02 13:59:49.73655+00
1	59	59	0ac75e44-ebb0-4a54-b2be-ece886db0987	v2w/w	-2	0	0	2	{1,0,0,0,0}	{}		-4146328539071620771	2026-12-02 13:59:49.746855+00
1	60	60	07878dd0-8e9a-415c-87fa-8558e8e834c3	v2w/w	0	1	0	1	{0,0,1,0,0}	{}		-4146328539071620771	2026-12-02 13:59:49.767362+00
\.


--
-- Data for Name: run_engines; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.run_engines (run_id, side, sha256) FROM stdin;
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.runs (id, name, state, created, updated, definition, var_names, lo, hi, start_theta, theta, iterations, applied, lease_seconds, wins, draws, losses, pentanomial, faults, priority, pruned, reference_nps, throughput, pass, track_interval, track_units, track_pairs, track_against, track_reported, snapshot_every) FROM stdin;
1	/tmp/v2fix/t.toml	finished	2026-12-02 13:59:45.84683+00	2026-12-02 13:59:49.767362+00	{"a": 6.0, "book": null, "seed": 7, "vars": [{"max": 1000.0, "min": -1000.0, "name": "x", "c_end": 100.0, "r_end": 0.002, "start": 100.0, "simul_elo": 1.0}, {"max": 1000.0, "min": -1000.0, "name": "y", "c_end": 100.0, "r_end": 0.002, "start": -50.0, "simul_elo": 4.0}], "alpha": 0.602, "gamma": 0.101, "pairs": 1, "engines": [], "simulate": true, "draw_rate": 0.0, "iterations": 60, "config_name": "t.toml", "config_text": "simulate = true\\nvariables = \\"t.var\\"\\nlog = \\"t.log\\"\\niterations = 60\\nA = 6\\ngamma = 0.101\\nalpha = 0.602\\nconcurrency = 1\\nseed = 7\\n", "lease_seconds": 60.0}	{x,y}	{-1000,-1000}	{1000,1000}	{100,-50}	{99.33537337439994,-52.344695315893325}	60	60	60	63	0	57	{15,0,27,0,18}	0	0	\N	\N	100	1.2000000000000006	\N	0	0	{}	0	1
\.


--
-- Data for Name: schema_installed; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.schema_installed (sha256) FROM stdin;
7b69b8e00402cd5245e370926097be856788eda17f7e45008c6f8f72ab60cd79
\.


--
-- Data for Name: schema_version; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.schema_version (version) FROM stdin;
2
\.


--
-- Data for Name: snapshots; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.snapshots (run_id, seq, theta) FROM stdin;
1	1	{100,-50}
1	2	{100,-50}
1	3	{100.98077055823883,-50.98077055823883}
1	4	{100.98077055823883,-50.98077055823883}
1	5	{101.89595733857155,-50.06558377790611}
1	6	{101.89595733857155,-50.06558377790611}
1	7	{101.03972196036271,-50.92181915611494}
1	8	{100.2097275350273,-51.75181358145036}
1	9	{99.40397121665319,-50.946057263076256}
1	10	{99.40397121665319,-50.946057263076256}
1	11	{99.40397121665319,-50.946057263076256}
1	12	{99.40397121665319,-50.946057263076256}
1	13	{98.67864934250872,-51.67137913722073}
1	14	{98.67864934250872,-51.67137913722073}
1	15	{98.67864934250872,-51.67137913722073}
1	16	{98.67864934250872,-51.67137913722073}
1	17	{99.34292348587354,-52.335653280585554}
1	18	{99.99414317065323,-52.98687296536525}
1	19	{99.35525272613609,-53.625763409882396}
1	20	{99.35525272613609,-53.625763409882396}
1	21	{99.97141531637486,-53.00960081964363}
1	22	{100.57707368180631,-52.40394245421217}
1	23	{100.57707368180631,-52.40394245421217}
1	24	{99.9909267387991,-52.99008939721938}
1	25	{99.41386222905874,-53.56715390695974}
1	26	{99.41386222905874,-53.56715390695974}
1	27	{98.85377649279187,-53.00706817069286}
1	28	{98.85377649279187,-53.00706817069286}
1	29	{99.3982859151532,-52.46255874833153}
1	30	{99.3982859151532,-52.46255874833153}
1	31	{99.3982859151532,-52.46255874833153}
1	32	{98.87489933027028,-51.93917216344862}
1	33	{98.87489933027028,-51.93917216344862}
1	34	{99.38548829010745,-51.42858320361145}
1	35	{99.38548829010745,-51.42858320361145}
1	36	{98.88680749415161,-50.92990240765562}
1	37	{99.37983656549831,-51.42293147900231}
1	38	{98.8922723803875,-51.91049566411313}
1	39	{99.37454849814158,-52.39277178186721}
1	40	{98.89739291624635,-51.91561619997198}
1	41	{98.42519896089665,-52.387810155321674}
1	42	{98.42519896089665,-52.387810155321674}
1	43	{98.88791487681634,-51.925094239401986}
1	44	{99.34609995566727,-51.466909160551054}
1	45	{99.34609995566727,-51.466909160551054}
1	46	{99.34609995566727,-51.466909160551054}
1	47	{98.90075147566208,-51.91225764055625}
1	48	{99.3420540752877,-51.470955040930626}
1	49	{98.90468947465796,-51.90831964156038}
1	50	{99.33821926169541,-52.34184942859783}
1	51	{99.33821926169541,-52.34184942859783}
1	52	{99.33821926169541,-52.34184942859783}
1	53	{99.33821926169541,-52.34184942859783}
1	54	{99.7573571116288,-51.92271157866444}
1	55	{99.34159947488533,-52.338469215407926}
1	56	{99.34159947488533,-52.338469215407926}
1	57	{98.93236471607999,-52.747703974213266}
1	58	{98.93236471607999,-52.747703974213266}
1	59	{99.33537337439994,-52.344695315893325}
1	60	{99.33537337439994,-52.344695315893325}
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
1	1	\N	1	done	3e462984-125d-4dd4-b7dc-5766a957d0f2	v2w/w	2026-12-02 13:59:48.943028+00	\N	\N	1
1	2	\N	1	done	86408948-8ea0-4595-ac29-e62485f4233e	v2w/w	2026-12-02 13:59:48.964396+00	\N	\N	1
1	3	\N	1	done	db503633-8305-47da-aa0d-e830560c1c5b	v2w/w	2026-12-02 13:59:48.966967+00	\N	\N	1
1	4	\N	1	done	90392f6c-3975-4c8e-b2b2-3663d9afef56	v2w/w	2026-12-02 13:59:48.975022+00	\N	\N	1
1	5	\N	1	done	37153679-ac62-4b90-a181-6e4a800d8d91	v2w/w	2026-12-02 13:59:48.99486+00	\N	\N	1
1	6	\N	1	done	dc7eb4bf-6371-4f88-9cd5-916f77054d4f	v2w/w	2026-12-02 13:59:49.009494+00	\N	\N	1
1	7	\N	1	done	28bd9cff-3179-4579-9ddb-85926d1aeed8	v2w/w	2026-12-02 13:59:49.025567+00	\N	\N	1
1	8	\N	1	done	21b03a4d-9042-4c11-a986-2d38c9e2c9f6	v2w/w	2026-12-02 13:59:49.028076+00	\N	\N	1
1	9	\N	1	done	c277bcf1-628a-4418-81c9-ee2c02dffae7	v2w/w	2026-12-02 13:59:49.029819+00	\N	\N	1
1	10	\N	1	done	f81e5c5d-40cd-44c9-a942-39d642fe95dd	v2w/w	2026-12-02 13:59:49.030455+00	\N	\N	1
1	11	\N	1	done	80b8cda8-8b8f-4cce-9ff5-5a9d4c23a3f7	v2w/w	2026-12-02 13:59:49.034794+00	\N	\N	1
1	12	\N	1	done	f2187254-17b4-4131-85fb-48add4106084	v2w/w	2026-12-02 13:59:49.038862+00	\N	\N	1
1	13	\N	1	done	9e910407-b627-4998-a5a1-06bfb38b0c49	v2w/w	2026-12-02 13:59:49.047041+00	\N	\N	1
1	14	\N	1	done	b2950204-bc51-4e8c-b0af-3f0b52edc73d	v2w/w	2026-12-02 13:59:49.053667+00	\N	\N	1
1	15	\N	1	done	1b12ffc0-36b3-4282-8fae-198575868a2d	v2w/w	2026-12-02 13:59:49.056727+00	\N	\N	1
1	16	\N	1	done	d6e05fba-2c49-4db8-92d2-583e0964ce79	v2w/w	2026-12-02 13:59:49.12112+00	\N	\N	1
1	17	\N	1	done	6279645f-1377-4dbb-897e-bfbf75811efe	v2w/w	2026-12-02 13:59:49.123861+00	\N	\N	1
1	18	\N	1	done	7f21d39e-f679-4e85-90ef-e3ecdd74afb2	v2w/w	2026-12-02 13:59:49.131936+00	\N	\N	1
1	19	\N	1	done	9777bc2a-a34a-4e60-b4dd-0f612bb73c85	v2w/w	2026-12-02 13:59:49.133661+00	\N	\N	1
1	20	\N	1	done	0b8bb55c-c984-4a9c-8910-d3e1129d6418	v2w/w	2026-12-02 13:59:49.147821+00	\N	\N	1
1	21	\N	1	done	3999bd9c-8039-42a7-b901-5fb034dfa653	v2w/w	2026-12-02 13:59:49.155249+00	\N	\N	1
1	22	\N	1	done	ff023787-ab8f-4d55-a557-8e6d40950b44	v2w/w	2026-12-02 13:59:49.169498+00	\N	\N	1
1	23	\N	1	done	de04a6a4-a4e2-41d9-96f9-55bdb7a205c5	v2w/w	2026-12-02 13:59:49.176119+00	\N	\N	1
1	24	\N	1	done	d3477666-f5fc-4945-8da7-a02ffe9aaa6e	v2w/w	2026-12-02 13:59:49.180497+00	\N	\N	1
1	25	\N	1	done	d8fd3338-0a1e-4cb5-af23-51bf5bc06d0d	v2w/w	2026-12-02 13:59:49.182329+00	\N	\N	1
1	26	\N	1	done	8c20e48a-864d-4980-a07d-e739de553d4b	v2w/w	2026-12-02 13:59:49.183759+00	\N	\N	1
1	27	\N	1	done	44e0c9be-e1b3-4b88-8511-593e1ccba074	v2w/w	2026-12-02 13:59:49.19125+00	\N	\N	1
1	28	\N	1	done	e70313f0-d4e2-4d85-b830-522b914fbe75	v2w/w	2026-12-02 13:59:49.19296+00	\N	\N	1
1	29	\N	1	done	6cbc875e-3ddf-42d4-b5db-b450d142a673	v2w/w	2026-12-02 13:59:49.194311+00	\N	\N	1
1	30	\N	1	done	b41d240f-aa22-44ff-9d04-6fb0f3779cc6	v2w/w	2026-12-02 13:59:49.19973+00	\N	\N	1
1	31	\N	1	done	d1593486-dbb9-41a7-8c5d-0c03edd4a022	v2w/w	2026-12-02 13:59:49.20186+00	\N	\N	1
1	32	\N	1	done	9e1904a2-678f-406d-b9dd-a841a44331b9	v2w/w	2026-12-02 13:59:49.203233+00	\N	\N	1
1	33	\N	1	done	5875a084-6e0f-4305-a108-98d34da898fc	v2w/w	2026-12-02 13:59:49.203781+00	\N	\N	1
1	34	\N	1	done	cfa4a286-da28-4150-bdb7-76bc7c08491f	v2w/w	2026-12-02 13:59:49.204856+00	\N	\N	1
1	35	\N	1	done	b35b4e73-d2be-4e69-8319-859cda715c29	v2w/w	2026-12-02 13:59:49.205375+00	\N	\N	1
1	36	\N	1	done	d6d99771-f872-4193-bec6-375718ae7587	v2w/w	2026-12-02 13:59:49.205986+00	\N	\N	1
1	37	\N	1	done	3ea3eb14-95d9-46b7-b679-74e406fa9965	v2w/w	2026-12-02 13:59:49.210824+00	\N	\N	1
1	38	\N	1	done	88c8206b-febc-46b1-b3d8-98668e260527	v2w/w	2026-12-02 13:59:49.284342+00	\N	\N	1
1	39	\N	1	done	2140cf63-07ae-45ba-9db6-f6dd8c078802	v2w/w	2026-12-02 13:59:49.382969+00	\N	\N	1
1	40	\N	1	done	6b1c5fa7-32a5-417b-8de6-68903c595014	v2w/w	2026-12-02 13:59:49.385554+00	\N	\N	1
1	41	\N	1	done	4a5f7a9d-98d6-4e5d-b3c8-2dadc9f783f8	v2w/w	2026-12-02 13:59:49.394407+00	\N	\N	1
1	42	\N	1	done	fd19a052-0708-4111-a031-18d7e2724329	v2w/w	2026-12-02 13:59:49.454132+00	\N	\N	1
1	43	\N	1	done	a116ab5f-72c5-491a-b963-91463d7cd4e0	v2w/w	2026-12-02 13:59:49.461688+00	\N	\N	1
1	44	\N	1	done	489d6f2e-d359-41ab-8b90-5f8d398bd768	v2w/w	2026-12-02 13:59:49.464154+00	\N	\N	1
1	45	\N	1	done	b29e323d-8201-4693-aa2a-54fb8504f37e	v2w/w	2026-12-02 13:59:49.470336+00	\N	\N	1
1	46	\N	1	done	4f88eb8c-8fd5-48e2-9b41-098a0ab9078d	v2w/w	2026-12-02 13:59:49.525462+00	\N	\N	1
1	47	\N	1	done	69d5a330-bbb3-48f6-b1fc-838b487b71a0	v2w/w	2026-12-02 13:59:49.52899+00	\N	\N	1
1	48	\N	1	done	5fafa1dd-973b-4a15-b0e8-dcde2f46b095	v2w/w	2026-12-02 13:59:49.557117+00	\N	\N	1
1	49	\N	1	done	18dc7565-dc9b-4969-a714-ba1d4034dc6a	v2w/w	2026-12-02 13:59:49.559138+00	\N	\N	1
1	50	\N	1	done	5a97492a-2767-408d-ad08-949ae144cf79	v2w/w	2026-12-02 13:59:49.559955+00	\N	\N	1
1	51	\N	1	done	03fc04f0-5335-49be-85b8-e2c5c792f330	v2w/w	2026-12-02 13:59:49.561454+00	\N	\N	1
1	52	\N	1	done	7949bcdf-d798-4226-8bd9-87c52d6ab9b7	v2w/w	2026-12-02 13:59:49.562895+00	\N	\N	1
1	53	\N	1	done	ee2bd0f0-1737-49c7-bdb4-d7940c29376a	v2w/w	2026-12-02 13:59:49.56714+00	\N	\N	1
1	54	\N	1	done	e12ee959-7294-4b9d-8696-6750f2a8d129	v2w/w	2026-12-02 13:59:49.686955+00	\N	\N	1
1	55	\N	1	done	e0b91a55-991d-49cb-b6bc-7dcc93d3a130	v2w/w	2026-12-02 13:59:49.692788+00	\N	\N	1
1	56	\N	1	done	71cb5474-d9a7-4bbc-a20b-ac1758ab80f8	v2w/w	2026-12-02 13:59:49.699194+00	\N	\N	1
1	57	\N	1	done	a74ae6f7-2a37-4d71-b0cd-1ef6ec651a83	v2w/w	2026-12-02 13:59:49.703891+00	\N	\N	1
1	58	\N	1	done	8e376850-54ce-4958-aeec-584a3d6856b6	v2w/w	2026-12-02 13:59:49.710872+00	\N	\N	1
1	59	\N	1	done	0ac75e44-ebb0-4a54-b2be-ece886db0987	v2w/w	2026-12-02 13:59:49.712485+00	\N	\N	1
1	60	\N	1	done	07878dd0-8e9a-415c-87fa-8558e8e834c3	v2w/w	2026-12-02 13:59:49.716093+00	\N	\N	1
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
1	v2w/w	60	0	2026-12-02 13:59:49.767362+00
\.


--
-- Data for Name: workers; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.workers (name, role, first_seen, last_seen, pairs, games, faults, refused, note) FROM stdin;
v2w/w	v2w	2026-12-02 13:59:48.796348+00	2026-12-02 13:59:49.767362+00	60	120	0	0	serving run 1
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

\unrestrict 2Koiqhgpc5M40XdNpVsGfRvaMkkZBwArthsoFpxcpQwrwRAsPO9raQvqvkZQl0U

