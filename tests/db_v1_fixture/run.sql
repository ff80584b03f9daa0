-- A database in the layout of schema version 1 (before version 2 took θ out of the result
-- rows), kept so that tests/db_migrate.rs can check it is migrated and read bit for bit: the
-- run of t.toml and t.var beside this file, made with spsa at commit cd13a17 by `spsa run t.toml --db
-- URL --no-play` and one `spsa worker` killed with SIGKILL after 37 of 60 results (its lease
-- handed back), then `pg_dump --no-owner --no-privileges -n spsa`.
--
-- PostgreSQL database dump
--



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
    step double precision[] NOT NULL,
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

CREATE FUNCTION spsa.check_report(wk spsa.work, w text, p_token uuid, p_what text, p_wins integer, p_draws integer, p_losses integer, p_pentanomial integer[], p_faults text[], p_records text) RETURNS void
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
           -- A point of the curve measures the θ it was added with.
           leased_theta = CASE WHEN wk.iteration < 0 THEN wk.leased_theta ELSE r.theta END,
           attempts = wk.attempts + 1
      FROM spsa.runs r
     WHERE wk.run_id = pick_run AND wk.iteration = pick_iteration AND r.id = wk.run_id
    RETURNING wk.run_id, wk.iteration, wk.token, wk.leased_theta, wk.pairs
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
  new_theta := ARRAY(
    SELECT least(r.hi[i], greatest(r.lo[i], r.theta[i] + wk.step[i] * p_signal))
      FROM generate_subscripts(r.theta, 1) AS i ORDER BY i);
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
  UPDATE spsa.work SET state = 'done', lease_expires = NULL WHERE run_id = p_run AND iteration = p_iteration;
  -- The curve's point this result makes due, at the θ it leaves (see spsa.track_results).
  IF r.track_interval IS NOT NULL AND (n % r.track_interval = 0 OR n >= r.iterations) THEN
    INSERT INTO spsa.work (run_id, iteration, step, pairs, leased_theta)
    SELECT p_run, -(((n + r.track_interval - 1) / r.track_interval - 1) * r.track_units + s + 1),
           '{}', r.track_pairs, new_theta
      FROM generate_series(0, r.track_units - 1) AS s
    ON CONFLICT DO NOTHING;
  END IF;
  INSERT INTO spsa.results (run_id, iteration, seq, token, worker, signal, wins, draws, losses,
                            pentanomial, faults, records, theta)
  VALUES (p_run, p_iteration, n, p_token, w, p_signal, p_wins, p_draws, p_losses,
          p_pentanomial, coalesce(p_faults, '{}'), coalesce(p_records, ''), new_theta);
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
  UPDATE spsa.work SET state = 'done', lease_expires = NULL WHERE run_id = p_run AND iteration = p_iteration;
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
    theta double precision[] NOT NULL,
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
    CONSTRAINT runs_lease_seconds_check CHECK ((lease_seconds > (0)::double precision)),
    CONSTRAINT runs_reference_nps_check CHECK ((reference_nps > (0)::double precision)),
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

COPY spsa.results (run_id, iteration, seq, token, worker, signal, wins, draws, losses, pentanomial, faults, records, theta, reported) FROM stdin;
1	1	1	80151a4b-f087-42bb-8aa5-b92df95579d9	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{100,-50}	2026-11-29 04:48:39.667367+00
1	2	2	ee4dba0f-2d4d-40d8-9d48-ee4805f9328a	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{100,-50}	2026-11-29 04:48:39.686437+00
1	3	3	d31027f2-e3e5-4799-8800-8b6f28f8ed83	spsa_admin/vm-26773	-2	0	0	2	{1,0,0,0,0}	{}		{100.98077055823883,-50.98077055823883}	2026-11-29 04:48:39.690564+00
1	4	4	5213052c-3e51-4021-83db-4dc0b9b90595	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{100.98077055823883,-50.98077055823883}	2026-11-29 04:48:39.692812+00
1	5	5	48ff3f9d-00a8-4fdf-81ea-efc1e353e4f0	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{101.89595733857155,-50.06558377790611}	2026-11-29 04:48:39.700457+00
1	6	6	90e37ed9-d48c-4398-9943-d00bd287989a	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{101.89595733857155,-50.06558377790611}	2026-11-29 04:48:39.701568+00
1	7	7	79601f40-ccad-4340-9862-cf19eeca3abb	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{101.03972196036271,-50.92181915611494}	2026-11-29 04:48:39.705992+00
1	8	8	15118f65-6b22-4d86-873b-396c136ef1c6	spsa_admin/vm-26773	-2	0	0	2	{1,0,0,0,0}	{}		{100.2097275350273,-51.75181358145036}	2026-11-29 04:48:39.711138+00
1	9	9	765b136c-77a4-4fc9-b670-60a542206061	spsa_admin/vm-26773	-2	0	0	2	{1,0,0,0,0}	{}		{99.40397121665319,-50.946057263076256}	2026-11-29 04:48:39.713203+00
1	10	10	322be2ca-8b7d-48a3-8ca1-93e3ee2fa4e4	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.40397121665319,-50.946057263076256}	2026-11-29 04:48:39.714375+00
1	11	11	47a26b69-7317-49cd-9ff7-6346de13a2a9	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.40397121665319,-50.946057263076256}	2026-11-29 04:48:39.715532+00
1	12	12	b64b1f83-f77a-4471-92eb-5acc92bb4bf5	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.40397121665319,-50.946057263076256}	2026-11-29 04:48:39.716063+00
1	13	13	4865a990-1af2-48e8-9874-1d41f458d93a	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{98.67864934250872,-51.67137913722073}	2026-11-29 04:48:39.716509+00
1	14	14	d7da456e-b3bb-4dce-aa5a-d5dc60553741	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{98.67864934250872,-51.67137913722073}	2026-11-29 04:48:39.716943+00
1	15	15	5d8c3ba6-d7e6-4bc0-b18a-4b67fa1a82b4	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{98.67864934250872,-51.67137913722073}	2026-11-29 04:48:39.720778+00
1	16	16	08ca607f-e8ba-44b0-80bc-e3ed727644ea	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{98.67864934250872,-51.67137913722073}	2026-11-29 04:48:39.722724+00
1	17	17	b3780a13-4937-409e-a032-61042005983e	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{99.34292348587354,-52.335653280585554}	2026-11-29 04:48:39.724719+00
1	18	18	70169eb1-55ef-4d84-bc5e-2cf29de1ffd0	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{99.99414317065323,-52.98687296536525}	2026-11-29 04:48:39.726307+00
1	19	19	57635c95-e67b-4049-b0a0-bc40866aa949	spsa_admin/vm-26773	-2	0	0	2	{1,0,0,0,0}	{}		{99.35525272613609,-53.625763409882396}	2026-11-29 04:48:39.726948+00
1	20	20	5a29c72e-4875-4997-8802-dc16ab6c66b8	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.35525272613609,-53.625763409882396}	2026-11-29 04:48:39.727461+00
1	21	21	5fb02d7c-a45e-42e2-a4d9-736e5ed61d28	spsa_admin/vm-26773	-2	0	0	2	{1,0,0,0,0}	{}		{99.97141531637486,-53.00960081964363}	2026-11-29 04:48:39.739646+00
1	22	22	20b41ff5-f1a0-4196-9b6c-6b42efc09f4d	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{100.57707368180631,-52.40394245421217}	2026-11-29 04:48:39.743314+00
1	23	23	455c9760-aed3-445d-9b41-50acffbe43fc	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{100.57707368180631,-52.40394245421217}	2026-11-29 04:48:39.75004+00
1	24	24	b8138544-41a7-4487-adca-b5389192eeeb	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{99.9909267387991,-52.99008939721938}	2026-11-29 04:48:39.751458+00
1	25	25	fb19eda4-0672-4f9b-b05b-6436cf1021e8	spsa_admin/vm-26773	-2	0	0	2	{1,0,0,0,0}	{}		{99.41386222905874,-53.56715390695974}	2026-11-29 04:48:39.757922+00
1	26	26	fde85a03-4301-4227-af9d-c17d3a3c197f	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.41386222905874,-53.56715390695974}	2026-11-29 04:48:39.759078+00
1	27	27	16e9c556-56ab-4468-9edc-5c81be31ac5d	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{98.85377649279187,-53.00706817069286}	2026-11-29 04:48:39.762589+00
1	28	28	061071fd-2516-482f-b127-65b65c01cc3a	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{98.85377649279187,-53.00706817069286}	2026-11-29 04:48:39.763774+00
1	29	29	15292666-cefb-4ea5-b817-3153b84fe705	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{99.3982859151532,-52.46255874833153}	2026-11-29 04:48:39.764825+00
1	30	30	8d0c80a6-7d6a-42a4-84f6-1edcf02c038c	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.3982859151532,-52.46255874833153}	2026-11-29 04:48:39.766548+00
1	31	31	b9ed8a5d-842a-47a0-9896-a9d46ae19114	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.3982859151532,-52.46255874833153}	2026-11-29 04:48:39.770497+00
1	32	32	2972f59f-f74c-427b-b758-a8be7e5cd403	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{98.87489933027028,-51.93917216344862}	2026-11-29 04:48:39.771661+00
1	33	33	baf6f892-7992-414b-8078-ae62b27423de	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{98.87489933027028,-51.93917216344862}	2026-11-29 04:48:39.772863+00
1	34	34	999ea07c-b652-42bc-b5af-e6e4e05f0a29	spsa_admin/vm-26773	-2	0	0	2	{1,0,0,0,0}	{}		{99.38548829010745,-51.42858320361145}	2026-11-29 04:48:39.77449+00
1	35	35	30e38813-9111-4373-bb0b-44e14b9f29d5	spsa_admin/vm-26773	0	1	0	1	{0,0,1,0,0}	{}		{99.38548829010745,-51.42858320361145}	2026-11-29 04:48:39.775214+00
1	36	36	a7ef7043-5b7e-42bb-94e1-84533207a831	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{98.88680749415161,-50.92990240765562}	2026-11-29 04:48:39.777621+00
1	37	37	c62cf1e1-1f82-419b-8bfd-be7904b80707	spsa_admin/vm-26773	2	2	0	0	{0,0,0,0,1}	{}		{99.37983656549831,-51.42293147900231}	2026-11-29 04:48:39.785746+00
\.


--
-- Data for Name: run_engines; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.run_engines (run_id, side, sha256) FROM stdin;
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.runs (id, name, state, created, updated, definition, var_names, lo, hi, start_theta, theta, iterations, applied, lease_seconds, wins, draws, losses, pentanomial, faults, priority, pruned, reference_nps, throughput, pass, track_interval, track_units, track_pairs, track_against, track_reported) FROM stdin;
1	/tmp/dbw/old/t.toml	active	2026-11-29 04:48:39.479089+00	2026-11-29 04:48:39.785746+00	{"a": 6.0, "book": null, "seed": 7, "vars": [{"max": 1000.0, "min": -1000.0, "name": "x", "c_end": 100.0, "r_end": 0.002, "start": 100.0, "simul_elo": 1.0}, {"max": 1000.0, "min": -1000.0, "name": "y", "c_end": 100.0, "r_end": 0.002, "start": -50.0, "simul_elo": 4.0}], "alpha": 0.602, "gamma": 0.101, "pairs": 1, "engines": [], "simulate": true, "draw_rate": 0.0, "iterations": 60, "config_name": "t.toml", "config_text": "simulate = true\\nvariables = \\"t.var\\"\\nlog = \\"t.log\\"\\niterations = 60\\nA = 6\\ngamma = 0.101\\nalpha = 0.602\\nconcurrency = 1\\nseed = 7\\n", "lease_seconds": 60.0}	{x,y}	{-1000,-1000}	{1000,1000}	{100,-50}	{99.37983656549831,-51.42293147900231}	60	37	60	42	0	32	{7,0,18,0,12}	0	0	\N	\N	100	0.7600000000000003	\N	0	0	{}	0
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
1	39	{0.24113805887704173,-0.24113805887704173}	1	open	\N	\N	\N	\N	\N	0
1	40	{-0.23857779094761541,0.23857779094761541}	1	open	\N	\N	\N	\N	\N	0
1	41	{0.2360969776748477,0.2360969776748477}	1	open	\N	\N	\N	\N	\N	0
1	42	{-0.23369161074095313,0.23369161074095313}	1	open	\N	\N	\N	\N	\N	0
1	43	{-0.23135795795984498,-0.23135795795984498}	1	open	\N	\N	\N	\N	\N	0
1	44	{-0.229092539425467,-0.229092539425467}	1	open	\N	\N	\N	\N	\N	0
1	45	{0.22689210611488922,0.22689210611488922}	1	open	\N	\N	\N	\N	\N	0
1	46	{-0.22475362065528223,0.22475362065528223}	1	open	\N	\N	\N	\N	\N	0
1	47	{0.22267424000259667,0.22267424000259667}	1	open	\N	\N	\N	\N	\N	0
1	48	{-0.2206512998128114,-0.2206512998128114}	1	open	\N	\N	\N	\N	\N	0
1	49	{-0.21868230031487787,-0.21868230031487787}	1	open	\N	\N	\N	\N	\N	0
1	50	{-0.21676489351872688,0.21676489351872688}	1	open	\N	\N	\N	\N	\N	0
1	51	{-0.21489687161254062,0.21489687161254062}	1	open	\N	\N	\N	\N	\N	0
1	52	{0.21307615642144861,0.21307615642144861}	1	open	\N	\N	\N	\N	\N	0
1	53	{0.21130078981531358,0.21130078981531358}	1	open	\N	\N	\N	\N	\N	0
1	54	{0.20956892496669732,0.20956892496669732}	1	open	\N	\N	\N	\N	\N	0
1	55	{-0.20787881837174124,-0.20787881837174124}	1	open	\N	\N	\N	\N	\N	0
1	56	{0.20622882255682295,-0.20622882255682295}	1	open	\N	\N	\N	\N	\N	0
1	57	{-0.20461737940266894,-0.20461737940266894}	1	open	\N	\N	\N	\N	\N	0
1	58	{-0.20304301402530633,-0.20304301402530633}	1	open	\N	\N	\N	\N	\N	0
1	59	{-0.20150432915997152,-0.20150432915997152}	1	open	\N	\N	\N	\N	\N	0
1	60	{0.19999999999999993,-0.19999999999999993}	1	open	\N	\N	\N	\N	\N	0
1	1	{0.510567478840932,-0.510567478840932}	1	done	80151a4b-f087-42bb-8aa5-b92df95579d9	spsa_admin/vm-26773	2026-11-29 04:48:39.632364+00	\N	{100,-50}	1
1	2	{-0.5052961927359627,-0.5052961927359627}	1	done	ee4dba0f-2d4d-40d8-9d48-ee4805f9328a	spsa_admin/vm-26773	2026-11-29 04:48:39.647021+00	\N	{100,-50}	1
1	3	{-0.4903852791194142,0.4903852791194142}	1	done	d31027f2-e3e5-4799-8800-8b6f28f8ed83	spsa_admin/vm-26773	2026-11-29 04:48:39.651548+00	\N	{100,-50}	1
1	4	{-0.4738165516532467,-0.4738165516532467}	1	done	5213052c-3e51-4021-83db-4dc0b9b90595	spsa_admin/vm-26773	2026-11-29 04:48:39.662694+00	\N	{100,-50}	1
1	5	{0.4575933901663573,0.4575933901663573}	1	done	48ff3f9d-00a8-4fdf-81ea-efc1e353e4f0	spsa_admin/vm-26773	2026-11-29 04:48:39.666643+00	\N	{100,-50}	1
1	6	{-0.44231160557742905,-0.44231160557742905}	1	done	90e37ed9-d48c-4398-9943-d00bd287989a	spsa_admin/vm-26773	2026-11-29 04:48:39.6701+00	\N	{100,-50}	1
1	8	{0.4149972126677087,0.4149972126677087}	1	done	15118f65-6b22-4d86-873b-396c136ef1c6	spsa_admin/vm-26773	2026-11-29 04:48:39.685773+00	\N	{100,-50}	1
1	9	{0.4028781591870509,-0.4028781591870509}	1	done	765b136c-77a4-4fc9-b670-60a542206061	spsa_admin/vm-26773	2026-11-29 04:48:39.687568+00	\N	{100,-50}	1
1	15	{0.3464267107480658,-0.3464267107480658}	1	done	5d8c3ba6-d7e6-4bc0-b18a-4b67fa1a82b4	spsa_admin/vm-26773	2026-11-29 04:48:39.709958+00	\N	{101.03972196036271,-50.92181915611494}	1
1	16	{0.339062557070715,-0.339062557070715}	1	done	08ca607f-e8ba-44b0-80bc-e3ed727644ea	spsa_admin/vm-26773	2026-11-29 04:48:39.712106+00	\N	{100.2097275350273,-51.75181358145036}	1
1	17	{0.3321370716824093,-0.3321370716824093}	1	done	b3780a13-4937-409e-a032-61042005983e	spsa_admin/vm-26773	2026-11-29 04:48:39.71428+00	\N	{99.40397121665319,-50.946057263076256}	1
1	18	{0.32560984238984747,-0.32560984238984747}	1	done	70169eb1-55ef-4d84-bc5e-2cf29de1ffd0	spsa_admin/vm-26773	2026-11-29 04:48:39.722208+00	\N	{98.67864934250872,-51.67137913722073}	1
1	19	{0.31944522225857197,0.31944522225857197}	1	done	57635c95-e67b-4049-b0a0-bc40866aa949	spsa_admin/vm-26773	2026-11-29 04:48:39.723601+00	\N	{98.67864934250872,-51.67137913722073}	1
1	20	{0.3136116898859484,0.3136116898859484}	1	done	5a29c72e-4875-4997-8802-dc16ab6c66b8	spsa_admin/vm-26773	2026-11-29 04:48:39.726081+00	\N	{99.34292348587354,-52.335653280585554}	1
1	21	{-0.308081295119383,-0.308081295119383}	1	done	5fb02d7c-a45e-42e2-a4d9-736e5ed61d28	spsa_admin/vm-26773	2026-11-29 04:48:39.737549+00	\N	{99.35525272613609,-53.625763409882396}	1
1	22	{0.30282918271572923,0.30282918271572923}	1	done	20b41ff5-f1a0-4196-9b6c-6b42efc09f4d	spsa_admin/vm-26773	2026-11-29 04:48:39.742468+00	\N	{99.97141531637486,-53.00960081964363}	1
1	23	{0.2978331846219485,0.2978331846219485}	1	done	455c9760-aed3-445d-9b41-50acffbe43fc	spsa_admin/vm-26773	2026-11-29 04:48:39.74399+00	\N	{100.57707368180631,-52.40394245421217}	1
1	24	{-0.29307347150360424,-0.29307347150360424}	1	done	b8138544-41a7-4487-adca-b5389192eeeb	spsa_admin/vm-26773	2026-11-29 04:48:39.750722+00	\N	{100.57707368180631,-52.40394245421217}	1
1	25	{0.28853225487018086,0.28853225487018086}	1	done	fb19eda4-0672-4f9b-b05b-6436cf1021e8	spsa_admin/vm-26773	2026-11-29 04:48:39.752083+00	\N	{99.9909267387991,-52.99008939721938}	1
1	26	{-0.2841935321520201,-0.2841935321520201}	1	done	fde85a03-4301-4227-af9d-c17d3a3c197f	spsa_admin/vm-26773	2026-11-29 04:48:39.758481+00	\N	{99.41386222905874,-53.56715390695974}	1
1	27	{-0.28004286813343704,0.28004286813343704}	1	done	16e9c556-56ab-4468-9edc-5c81be31ac5d	spsa_admin/vm-26773	2026-11-29 04:48:39.761922+00	\N	{99.41386222905874,-53.56715390695974}	1
1	29	{0.272254711180664,0.272254711180664}	1	done	15292666-cefb-4ea5-b817-3153b84fe705	spsa_admin/vm-26773	2026-11-29 04:48:39.764309+00	\N	{98.85377649279187,-53.00706817069286}	1
1	32	{-0.2616932924414587,0.2616932924414587}	1	done	2972f59f-f74c-427b-b758-a8be7e5cd403	spsa_admin/vm-26773	2026-11-29 04:48:39.771067+00	\N	{99.3982859151532,-52.46255874833153}	1
1	33	{-0.25843491253245665,0.25843491253245665}	1	done	baf6f892-7992-414b-8078-ae62b27423de	spsa_admin/vm-26773	2026-11-29 04:48:39.772218+00	\N	{98.87489933027028,-51.93917216344862}	1
1	35	{-0.2522650928929565,-0.2522650928929565}	1	done	30e38813-9111-4373-bb0b-44e14b9f29d5	spsa_admin/vm-26773	2026-11-29 04:48:39.774054+00	\N	{98.87489933027028,-51.93917216344862}	1
1	37	{0.24651453567334614,-0.24651453567334614}	1	done	c62cf1e1-1f82-419b-8bfd-be7904b80707	spsa_admin/vm-26773	2026-11-29 04:48:39.778186+00	\N	{98.88680749415161,-50.92990240765562}	1
1	38	{0.2437820925554082,0.2437820925554082}	1	open	\N	spsa_admin/vm-26773	2026-11-29 04:48:39.782896+00	\N	{98.88680749415161,-50.92990240765562}	1
1	7	{-0.42811768910441594,-0.42811768910441594}	1	done	79601f40-ccad-4340-9862-cf19eeca3abb	spsa_admin/vm-26773	2026-11-29 04:48:39.672973+00	\N	{100,-50}	1
1	10	{-0.3916714709411184,-0.3916714709411184}	1	done	322be2ca-8b7d-48a3-8ca1-93e3ee2fa4e4	spsa_admin/vm-26773	2026-11-29 04:48:39.688479+00	\N	{100,-50}	1
1	11	{-0.3812875099722083,0.3812875099722083}	1	done	47a26b69-7317-49cd-9ff7-6346de13a2a9	spsa_admin/vm-26773	2026-11-29 04:48:39.690797+00	\N	{100,-50}	1
1	12	{-0.3716425457670609,0.3716425457670609}	1	done	b64b1f83-f77a-4471-92eb-5acc92bb4bf5	spsa_admin/vm-26773	2026-11-29 04:48:39.693626+00	\N	{100.98077055823883,-50.98077055823883}	1
1	13	{-0.3626609370722379,-0.3626609370722379}	1	done	4865a990-1af2-48e8-9874-1d41f458d93a	spsa_admin/vm-26773	2026-11-29 04:48:39.699339+00	\N	{100.98077055823883,-50.98077055823883}	1
1	14	{0.35427543730465283,-0.35427543730465283}	1	done	d7da456e-b3bb-4dce-aa5a-d5dc60553741	spsa_admin/vm-26773	2026-11-29 04:48:39.701941+00	\N	{101.89595733857155,-50.06558377790611}	1
1	28	{0.2760672071308934,-0.2760672071308934}	1	done	061071fd-2516-482f-b127-65b65c01cc3a	spsa_admin/vm-26773	2026-11-29 04:48:39.763223+00	\N	{98.85377649279187,-53.00706817069286}	1
1	30	{0.26859462025686753,-0.26859462025686753}	1	done	8d0c80a6-7d6a-42a4-84f6-1edcf02c038c	spsa_admin/vm-26773	2026-11-29 04:48:39.765428+00	\N	{99.3982859151532,-52.46255874833153}	1
1	31	{-0.26507713118315845,0.26507713118315845}	1	done	b9ed8a5d-842a-47a0-9896-a9d46ae19114	spsa_admin/vm-26773	2026-11-29 04:48:39.766087+00	\N	{99.3982859151532,-52.46255874833153}	1
1	34	{-0.25529447991858384,-0.25529447991858384}	1	done	999ea07c-b652-42bc-b5af-e6e4e05f0a29	spsa_admin/vm-26773	2026-11-29 04:48:39.773398+00	\N	{98.87489933027028,-51.93917216344862}	1
1	36	{-0.2493403979779164,0.2493403979779164}	1	done	a7ef7043-5b7e-42bb-94e1-84533207a831	spsa_admin/vm-26773	2026-11-29 04:48:39.775766+00	\N	{99.38548829010745,-51.42858320361145}	1
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
1	spsa_admin/vm-26773	37	0	2026-11-29 04:48:39.785746+00
\.


--
-- Data for Name: workers; Type: TABLE DATA; Schema: spsa; Owner: -
--

COPY spsa.workers (name, role, first_seen, last_seen, pairs, games, faults, refused, note) FROM stdin;
spsa_admin/vm-26773	spsa_admin	2026-11-29 04:48:39.627102+00	2026-11-29 04:48:39.785746+00	37	74	0	0	serving run 1
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


