-- The shared-run schema. Installed (idempotently) by the role that runs `spsa run --db`: that
-- role owns the tables and the functions. Workers belong to the group role `spsa_worker`, which
-- may only EXECUTE the SECURITY DEFINER functions below: no table rights at all.

CREATE SCHEMA IF NOT EXISTS spsa;
REVOKE ALL ON SCHEMA spsa FROM PUBLIC;

-- The layout's version (one row; `db::SCHEMA_VERSION` in Rust). 1: the first layouts, with θ in
-- every result row and a step vector in every iteration's work row, made at creation (no
-- version row). 2: results hold a checksum of θ, θ itself is kept in snapshots, work rows hold
-- a step only until their result is applied and the owner keeps a window of them ahead. 3:
-- matches (`spsa match --db`): a run of kind 'match' whose work rows are game pairs, with its
-- SPRT's state in its row and each pair's result in spsa.match_pairs. A database of version 1
-- or 2 is migrated below; one of a version this script does not know (made
-- by a newer spsa) is refused before anything is changed.
DO $$
DECLARE
  v int;
BEGIN
  IF to_regclass('spsa.schema_version') IS NOT NULL THEN
    EXECUTE 'SELECT max(version) FROM spsa.schema_version' INTO v;
    IF v > 4 THEN
      RAISE EXCEPTION 'the database''s spsa schema is version %, made by a newer spsa than this one (which knows versions up to 4): update spsa on this machine', v
        USING ERRCODE = 'SP010';
    END IF;
  END IF;
END
$$;
CREATE TABLE IF NOT EXISTS spsa.schema_version (version int NOT NULL);
-- The SHA-256 of the schema text last installed (this file, written by `install_schema` in
-- src/db/owner.rs): an owner that finds its own text installed installs nothing.
CREATE TABLE IF NOT EXISTS spsa.schema_installed (sha256 text NOT NULL);

-- The checksum of θ that result rows keep (`spsa::checksum::theta_checksum` in Rust, bit for
-- bit): the first 8 bytes of the SHA-256 of the values' IEEE 754 bytes, big-endian, as a
-- signed bigint.
CREATE OR REPLACE FUNCTION spsa.theta_checksum(t float8[]) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ('x' || encode(substr(sha256(coalesce(string_agg(float8send(x), ''::bytea ORDER BY i),
                                               ''::bytea)), 1, 8), 'hex'))::bit(64)::bigint
    FROM unnest(t) WITH ORDINALITY AS u(x, i);
$$;

-- The groups of login roles (see "Members and approvers" in docs/shared-runs.md): workers
-- (lease and report), members (create runs and matches, which wait for an approver; pause,
-- resume, stop and share their own) and approvers (members whose runs need no approval, who
-- approve or reject waiting runs and may stop any).
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'spsa_worker') THEN
    CREATE ROLE spsa_worker NOLOGIN;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'cannot create role spsa_worker; ask an administrator to create it';
WHEN unique_violation OR duplicate_object THEN
  NULL;
END
$$;
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'spsa_member') THEN
    CREATE ROLE spsa_member NOLOGIN;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'cannot create role spsa_member; ask an administrator to create it';
WHEN unique_violation OR duplicate_object THEN
  NULL;
END
$$;
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'spsa_approver') THEN
    CREATE ROLE spsa_approver NOLOGIN;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'cannot create role spsa_approver; ask an administrator to create it';
-- Roles belong to the whole cluster: the owner of another database may have created it at the
-- same moment.
WHEN unique_violation OR duplicate_object THEN
  NULL;
END
$$;

CREATE TABLE IF NOT EXISTS spsa.runs (
  id            bigserial PRIMARY KEY,
  -- The config file the run was created from (its canonical path): `--resume` finds it by this.
  name          text NOT NULL,
  state         text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'finished', 'stopped')),
  created       timestamptz NOT NULL DEFAULT now(),
  updated       timestamptz NOT NULL DEFAULT now(),
  -- Everything a worker needs to rebuild the driver and the source (see db::RunDefinition).
  definition    jsonb NOT NULL,
  var_names     text[] NOT NULL,
  lo            float8[] NOT NULL,
  hi            float8[] NOT NULL,
  start_theta   float8[] NOT NULL,
  theta         float8[] NOT NULL,
  iterations    bigint NOT NULL,
  applied       bigint NOT NULL DEFAULT 0,
  lease_seconds float8 NOT NULL CHECK (lease_seconds > 0),
  wins          bigint NOT NULL DEFAULT 0,
  draws         bigint NOT NULL DEFAULT 0,
  losses        bigint NOT NULL DEFAULT 0,
  pentanomial   bigint[] NOT NULL DEFAULT '{0,0,0,0,0}',
  faults        bigint NOT NULL DEFAULT 0
);
-- Added after the first schema: a run can be paused (`spsa serve --admin-token-file`), and a
-- worker serves the active run of highest priority first.
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS priority int NOT NULL DEFAULT 0;
-- When `spsa prune` deleted the run's results and work rows (its row, θ and counts stay).
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS pruned timestamptz;
-- A run with a clock: the engine's speed (nodes per second) its clock is meant for, given by
-- its creator or measured by its first worker. Each worker scales the clock by this over its own.
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS reference_nps float8 CHECK (reference_nps > 0);
-- Throughput shares: among active runs of equal priority, workers lease so that each run gets
-- games in proportion to its `throughput` (a weight, 100 by default). `pass` is the run's games
-- leased divided by its throughput (stride scheduling): spsa.lease_share serves the lowest pass
-- first. A run that (re)joins the competition starts level with the front (see
-- spsa.join_level), so it neither waits for nor swamps the others.
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS throughput float8 NOT NULL DEFAULT 100
  CONSTRAINT runs_throughput_check CHECK (throughput > 0 AND throughput <= 1000);
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS pass float8 NOT NULL DEFAULT 0;
ALTER TABLE spsa.runs DROP CONSTRAINT IF EXISTS runs_state_check;
ALTER TABLE spsa.runs ADD CONSTRAINT runs_state_check
  CHECK (state IN ('active', 'paused', 'finished', 'stopped'));

-- One row per iteration handed out, written by the owner: when the run is created for the first
-- `work_window` iterations, then topped up as results are applied (the owner's mirror keeps
-- that many iterations not done ahead, see db::owner). `step` is the driver's a_k/c_k·δ per
-- variable: the report multiplies it by the measured signal, nothing more, and clears it
-- (with `leased_theta`) once applied, so a done row keeps no array. (Version 1 wrote every
-- iteration's row, step included, at creation.)
CREATE TABLE IF NOT EXISTS spsa.work (
  run_id        bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  iteration     bigint NOT NULL,
  step          float8[],
  pairs         int NOT NULL,
  state         text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'leased', 'done')),
  token         uuid,
  worker        text,
  leased_at     timestamptz,
  lease_expires timestamptz,
  leased_theta  float8[],
  attempts      int NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, iteration)
);
CREATE INDEX IF NOT EXISTS work_todo ON spsa.work (run_id, iteration) WHERE state <> 'done';

-- The live Elo curve (`[track]`): every `track_interval` applied results (and at the last one)
-- spsa.report adds a measurement point, one work row per opponent, leased and played like an
-- iteration. Such a row is unit u of the curve (u = (point − 1) · track_units + opponent slot)
-- and has iteration −(u + 1): negative, so a lease takes it before the iterations, as a local
-- run plays a point first once it is due. Its `leased_theta` is the point's θ, fixed when the
-- point is added (the θ after the result that made it due), and `step` is empty. NULL
-- track_interval: the run measures no curve.
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS track_interval bigint CHECK (track_interval > 0);
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS track_units int NOT NULL DEFAULT 0;
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS track_pairs int NOT NULL DEFAULT 0;
-- The opponents in slot order ("start", "defaults"), for status and the page.
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS track_against text[] NOT NULL DEFAULT '{}';
-- Curve results recorded (their `seq` is the order, as results.seq is for iterations).
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS track_reported bigint NOT NULL DEFAULT 0;

-- One row per measured unit of the curve, reported exactly once.
CREATE TABLE IF NOT EXISTS spsa.track_results (
  run_id      bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  unit        bigint NOT NULL,
  seq         bigint NOT NULL,
  token       uuid NOT NULL,
  worker      text NOT NULL,
  wins        int NOT NULL,
  draws       int NOT NULL,
  losses      int NOT NULL,
  pentanomial int[] NOT NULL,
  faults      text[] NOT NULL,
  records     text NOT NULL,
  reported    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, unit),
  UNIQUE (run_id, seq)
);

-- One row per applied iteration; `seq` is the order of application (runs.applied after it).
-- `theta_sum` is spsa.theta_checksum of θ after it: the owner's mirror replays the results and
-- compares. θ itself is kept every `snapshot_every` results (spsa.snapshots).
CREATE TABLE IF NOT EXISTS spsa.results (
  run_id      bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  iteration   bigint NOT NULL,
  seq         bigint NOT NULL,
  token       uuid NOT NULL,
  worker      text NOT NULL,
  signal      float8 NOT NULL,
  wins        int NOT NULL,
  draws       int NOT NULL,
  losses      int NOT NULL,
  pentanomial int[] NOT NULL,
  faults      text[] NOT NULL,
  records     text NOT NULL,
  theta_sum   bigint NOT NULL,
  reported    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, iteration),
  UNIQUE (run_id, seq)
);

-- θ after result `seq`, every `runs.snapshot_every` results and after the last (the run page's
-- chart). The owner picks the interval when it creates the run so that snapshots cost about
-- 128 bytes per result: every result up to 16 variables, every 625th at 10,000.
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS snapshot_every bigint NOT NULL DEFAULT 1
  CHECK (snapshot_every > 0);
CREATE TABLE IF NOT EXISTS spsa.snapshots (
  run_id bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  seq    bigint NOT NULL,
  theta  float8[] NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- From version 1: each result's θ becomes its checksum and a snapshot (every result: the
-- interval of a run created before snapshots is 1), and done work rows lose their arrays.
-- Work rows not done keep theirs (version 1 made them all at creation).
ALTER TABLE spsa.results ADD COLUMN IF NOT EXISTS theta_sum bigint;
ALTER TABLE spsa.work ALTER COLUMN step DROP NOT NULL;
DO $$
BEGIN
  IF EXISTS (SELECT FROM information_schema.columns
              WHERE table_schema = 'spsa' AND table_name = 'results' AND column_name = 'theta') THEN
    INSERT INTO spsa.snapshots (run_id, seq, theta)
    SELECT run_id, seq, theta FROM spsa.results ON CONFLICT DO NOTHING;
    UPDATE spsa.results SET theta_sum = spsa.theta_checksum(theta);
    ALTER TABLE spsa.results DROP COLUMN theta;
    UPDATE spsa.work SET step = NULL, leased_theta = NULL WHERE state = 'done';
  END IF;
END
$$;
ALTER TABLE spsa.results ALTER COLUMN theta_sum SET NOT NULL;
-- Version 3: matches. A run of kind 'match' plays game pairs between two fixed sides (its
-- definition's `match`): work row i is pair i (1-based: opening i − 1 and seed i, as a local
-- `spsa match` plays it), `iterations` the most pairs to play, `applied` the pairs counted, and
-- W/D/L and the pentanomial are the counted pairs'. Pairs are counted in pair order: a pair
-- reported before the ones ahead of it waits in spsa.match_pairs until they are in, so the
-- counts after n pairs are those of a local match's first n pairs, whatever the order the
-- workers finish in. `sprt` is (elo0, elo1, alpha, beta) or NULL; `llr` the LLR of the counted
-- pairs and `decision` 'H0' or 'H1' once a bound is reached (the match is then finished, and
-- pairs reported after it are kept as `counted = false`). `match_window`: work rows are kept
-- this many pairs ahead of the counted ones (made by the reports, so the match goes on
-- without its creator). 4: members and approvers (login roles in `spsa_member` and
-- `spsa_approver`): every run records its author and its approval, a member's run waits for an
-- approver before any worker leases it, and spsa.audit keeps who did what to each run.
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'tune';
ALTER TABLE spsa.runs DROP CONSTRAINT IF EXISTS runs_kind_check;
ALTER TABLE spsa.runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('tune', 'match'));
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS sprt float8[];
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS llr float8;
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS decision text;
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS match_window int NOT NULL DEFAULT 0;
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS match_reported bigint NOT NULL DEFAULT 0;

-- One row per reported pair of a match, reported exactly once (its lease's token): `bucket` is
-- the pair's score for side A in half points (0-4, the pentanomial's index), `counted` whether
-- it is in the match's counts (false: waiting for the pairs ahead of it, or reported after the
-- decision). The game records go to the creator's files as a tune's do.
CREATE TABLE IF NOT EXISTS spsa.match_pairs (
  run_id   bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  pair     bigint NOT NULL,
  seq      bigint NOT NULL,
  token    uuid NOT NULL,
  worker   text NOT NULL,
  wins     smallint NOT NULL,
  draws    smallint NOT NULL,
  losses   smallint NOT NULL,
  bucket   smallint NOT NULL CHECK (bucket BETWEEN 0 AND 4),
  counted  boolean NOT NULL DEFAULT false,
  faults   text[] NOT NULL,
  records  text NOT NULL,
  reported timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, pair)
);
CREATE INDEX IF NOT EXISTS match_pairs_waiting ON spsa.match_pairs (run_id, pair) WHERE NOT counted;

-- Version 4: who made each run, and whether it may be played. `author` is the login role
-- (session_user) that created it; a run of a database from before is its schema owner's.
-- `approval`: 'waiting' (created by a member who is not an approver: no worker leases it),
-- 'approved' or 'rejected' (with the approver's `reason`; the run is stopped). `approver` is
-- who approved or rejected it (the author, for a run approved at creation).
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS author text;
UPDATE spsa.runs SET author = (SELECT pg_get_userbyid(c.relowner) FROM pg_class c
                                WHERE c.oid = 'spsa.runs'::regclass)
 WHERE author IS NULL;
ALTER TABLE spsa.runs ALTER COLUMN author SET DEFAULT session_user;
ALTER TABLE spsa.runs ALTER COLUMN author SET NOT NULL;
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS approval text NOT NULL DEFAULT 'approved';
ALTER TABLE spsa.runs DROP CONSTRAINT IF EXISTS runs_approval_check;
ALTER TABLE spsa.runs ADD CONSTRAINT runs_approval_check
  CHECK (approval IN ('waiting', 'approved', 'rejected'));
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS approver text;
ALTER TABLE spsa.runs ADD COLUMN IF NOT EXISTS reason text;

-- The audit trail: who created, approved, rejected, paused, resumed, stopped, modified or
-- changed the share of each run, and when, in order (`id`). Written by triggers on spsa.runs
-- (so in the transaction of the change, whichever function or owner's statement made it) and
-- read through spsa.audit_trail. A run of a database from before gets a `created` row at its
-- creation time, by its author.
DO $$
BEGIN
  IF to_regclass('spsa.audit') IS NULL THEN
    CREATE TABLE spsa.audit (
      id     bigserial PRIMARY KEY,
      run_id bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
      actor  text NOT NULL,
      action text NOT NULL CHECK (action IN ('created', 'approved', 'rejected', 'paused', 'resumed',
                                             'stopped', 'modified', 'share changed')),
      detail text NOT NULL DEFAULT '',
      at     timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX audit_run ON spsa.audit (run_id, id);
    INSERT INTO spsa.audit (run_id, actor, action, detail, at)
    SELECT id, author, 'created', 'before the audit trail', created FROM spsa.runs ORDER BY id;
  END IF;
END
$$;

DELETE FROM spsa.schema_version;
INSERT INTO spsa.schema_version (version) VALUES (4);

CREATE TABLE IF NOT EXISTS spsa.workers (
  name       text PRIMARY KEY,
  role       text NOT NULL,
  first_seen timestamptz NOT NULL DEFAULT now(),
  last_seen  timestamptz NOT NULL DEFAULT now(),
  pairs      bigint NOT NULL DEFAULT 0,
  games      bigint NOT NULL DEFAULT 0,
  faults     bigint NOT NULL DEFAULT 0,
  refused    bigint NOT NULL DEFAULT 0,
  note       text NOT NULL DEFAULT ''
);

-- A run's results by when they came (the rates on `spsa status` and the run page).
CREATE INDEX IF NOT EXISTS results_recent ON spsa.results (run_id, reported);

-- Per run and worker: results applied, their faults, the last one's time (the run page's
-- workers table, without reading every result). Filled from the results when first created.
DO $$
BEGIN
  IF to_regclass('spsa.worker_runs') IS NULL THEN
    CREATE TABLE spsa.worker_runs (
      run_id      bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
      worker      text NOT NULL,
      results     bigint NOT NULL,
      faults      bigint NOT NULL,
      last_report timestamptz NOT NULL,
      PRIMARY KEY (run_id, worker)
    );
    INSERT INTO spsa.worker_runs
    SELECT run_id, worker, count(*), sum(coalesce(array_length(faults, 1), 0)), max(reported)
      FROM spsa.results GROUP BY run_id, worker;
  END IF;
END
$$;

-- What each worker measured of a clock run's engine, and the scale it plays the clock at.
CREATE TABLE IF NOT EXISTS spsa.worker_clocks (
  run_id    bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  worker    text NOT NULL,
  nps       float8 NOT NULL,
  scale     float8 NOT NULL,
  measured  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, worker)
);

-- Engines stored with runs by the owner, keyed by the SHA-256 of their bytes: one row per
-- distinct content, however many runs use it. Workers read them through spsa.artifact only.
CREATE TABLE IF NOT EXISTS spsa.artifacts (
  sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes  bytea NOT NULL,
  size   bigint NOT NULL CHECK (size >= 0 AND size <= 268435456),
  stored timestamptz NOT NULL DEFAULT now()
);

-- Which stored engine each side of a run plays (the run's definition says the same, with the
-- signature; this keeps an engine a run uses from being deleted).
CREATE TABLE IF NOT EXISTS spsa.run_engines (
  run_id bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  side   text NOT NULL,
  sha256 text NOT NULL REFERENCES spsa.artifacts,
  PRIMARY KEY (run_id, side)
);

-- What each worker checked of a run's engines before playing: the engine it runs (fetched, or
-- its own build), the signature it measured, and why it refused the run (NULL: it plays).
CREATE TABLE IF NOT EXISTS spsa.worker_engines (
  run_id    bigint NOT NULL REFERENCES spsa.runs ON DELETE CASCADE,
  worker    text NOT NULL,
  side      text NOT NULL,
  own_build boolean NOT NULL,
  sha256    text NOT NULL,
  signature text NOT NULL,
  refused   text,
  checked   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, worker, side)
);

REVOKE ALL ON ALL TABLES IN SCHEMA spsa FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA spsa FROM PUBLIC;

-- A worker's name is qualified by its login role, so one role cannot pose as another's worker.
CREATE OR REPLACE FUNCTION spsa.worker_key(p_worker text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT session_user || '/' || left(p_worker, 200) $$;

-- Register a worker (or update its note: what it serves, or why it cannot).
CREATE OR REPLACE FUNCTION spsa.hello(p_worker text, p_note text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  INSERT INTO spsa.workers (name, role, note) VALUES (spsa.worker_key(p_worker), session_user, left(p_note, 2000))
  ON CONFLICT (name) DO UPDATE SET last_seen = now(), note = excluded.note;
$$;

-- The active runs and what a worker needs to play them.
CREATE OR REPLACE FUNCTION spsa.active_runs()
RETURNS TABLE (id bigint, name text, definition jsonb, iterations bigint, applied bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT id, name, definition, iterations, applied FROM spsa.runs
   WHERE state = 'active' AND approval = 'approved' ORDER BY id;
$$;

-- Where a run that joins the runs of its priority (created, approved, resumed from a pause, or
-- moved to another priority) starts: level with the front, the highest pass among the active runs it
-- joins. Starting from zero would hand it every game until it caught up with runs that have
-- been served for hours.
CREATE OR REPLACE FUNCTION spsa.join_level() RETURNS trigger
LANGUAGE plpgsql SET search_path = spsa, pg_temp AS $$
BEGIN
  IF NEW.state = 'active' AND NEW.approval = 'approved'
     AND (TG_OP = 'INSERT' OR OLD.state <> 'active' OR OLD.priority <> NEW.priority
          OR OLD.approval <> 'approved') THEN
    NEW.pass := coalesce((SELECT max(r.pass) FROM spsa.runs r
                           WHERE r.state = 'active' AND r.approval = 'approved'
                             AND r.priority = NEW.priority AND r.id <> NEW.id),
                         0);
  END IF;
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS runs_join_level ON spsa.runs;
CREATE TRIGGER runs_join_level BEFORE INSERT OR UPDATE OF state, priority, approval ON spsa.runs
  FOR EACH ROW EXECUTE FUNCTION spsa.join_level();

-- Lease iterations of the given runs until p_games games or p_count iterations are leased.
-- Each iteration goes to the run of highest priority, then lowest pass (games leased over
-- throughput), then the oldest, that has one to lease here: open, or its lease ran out (taken
-- back: the old token is replaced, so the old holder's report is refused); the lowest iteration
-- first. The pass is advanced in the same transaction, so concurrent workers share one count.
-- A run this worker refused is skipped, and so is one with nothing to lease right now, so
-- neither holds the others back. A run not approved (waiting for an approver, or rejected) is
-- never leased: every lease of every kind of work (iterations, points of the curve, pairs of a
-- match or of a ladder's step) goes through here.
CREATE OR REPLACE FUNCTION spsa.lease_within(w text, p_runs bigint[], p_games int, p_count int)
RETURNS TABLE (run_id bigint, iteration bigint, token uuid, theta float8[], pairs int)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
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
     WHERE r.id = ANY (p_runs) AND r.state = 'active' AND r.approval = 'approved'
       AND NOT r.id = ANY (skip)
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

-- Lease about p_games games (whole iterations, at least one) of the given runs, shared out by
-- priority and throughput as spsa.lease_within says.
CREATE OR REPLACE FUNCTION spsa.lease_share(p_worker text, p_runs bigint[], p_games int)
RETURNS TABLE (run_id bigint, iteration bigint, token uuid, theta float8[], pairs int)
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT * FROM spsa.lease_within(spsa.worker_key(p_worker), p_runs, greatest(p_games, 1), 256);
$$;

-- Lease up to p_count iterations of the given runs (the call of workers from before throughput
-- shares; they ask one run at a time), counted in the runs' shares like any lease.
CREATE OR REPLACE FUNCTION spsa.lease(p_worker text, p_runs bigint[], p_count int)
RETURNS TABLE (run_id bigint, iteration bigint, token uuid, theta float8[], pairs int)
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT * FROM spsa.lease_within(spsa.worker_key(p_worker), p_runs, 2147483647, greatest(p_count, 0));
$$;

-- Keep the worker's leases alive during long games; returns how many are still held.
CREATE OR REPLACE FUNCTION spsa.heartbeat(p_worker text, p_tokens uuid[]) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
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

-- Hand leases back (Ctrl-C): the iterations are open again at once.
CREATE OR REPLACE FUNCTION spsa.give_back(p_worker text, p_tokens uuid[]) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
DECLARE
  n bigint;
BEGIN
  UPDATE spsa.work SET state = 'open', token = NULL, lease_expires = NULL
   WHERE token = ANY (p_tokens) AND state = 'leased' AND worker = spsa.worker_key(p_worker);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$$;

-- Version 2 made spsa.check_report return boolean (it returned void): the script of an spsa of
-- version 1 replaces it with one returning void, which PostgreSQL refuses ("cannot change
-- return type of existing function"), so such an owner fails to install on a database of
-- version 2 and keeps nothing of its script, instead of putting back functions that write θ
-- into the result rows.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'spsa' AND p.proname = 'check_report'
                AND p.prorettype = 'void'::regtype) THEN
    DROP FUNCTION spsa.check_report(spsa.work, text, uuid, text, int, int, int, int[], text[], text);
  END IF;
END
$$;

-- The checks every report of a work row passes (spsa.report, spsa.report_track): the lease is
-- the worker's current one, and the counts make the row's pairs. Raises SQLSTATE SP003/SP004;
-- true when it passes.
CREATE OR REPLACE FUNCTION spsa.check_report(wk spsa.work, w text, p_token uuid, p_what text,
  p_wins int, p_draws int, p_losses int, p_pentanomial int[], p_faults text[], p_records text)
RETURNS boolean
LANGUAGE plpgsql SET search_path = spsa, pg_temp AS $$
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

-- Record a result and apply its update in one transaction: θ := clip(θ + step·signal). Refused
-- (SQLSTATE SP0xx) unless the lease is current, the iteration not yet applied, and the result
-- consistent and in range. A retry of a report that did commit returns the same seq.
CREATE OR REPLACE FUNCTION spsa.report(
  p_worker text, p_run bigint, p_iteration bigint, p_token uuid, p_signal float8,
  p_wins int, p_draws int, p_losses int, p_pentanomial int[], p_faults text[], p_records text)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
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

-- Record a measurement of the live Elo curve (a work row of negative iteration, see
-- spsa.track_results): refused (SQLSTATE SP0xx) unless the lease is current, the unit not yet
-- reported and the counts consistent. A retry of a report that did commit returns the same seq.
-- The run finishes with its last point once every iteration is applied.
CREATE OR REPLACE FUNCTION spsa.report_track(
  p_worker text, p_run bigint, p_iteration bigint, p_token uuid,
  p_wins int, p_draws int, p_losses int, p_pentanomial int[], p_faults text[], p_records text)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
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

-- Record a pair of a match (a work row of run kind 'match'): refused (SQLSTATE SP0xx) unless the
-- lease is current, the pair not yet reported and its counts one pair's. A retry of a report
-- that did commit returns the same seq and nothing to count. Returns the pair's seq, the
-- pairs counted so far with their pentanomial, and the buckets of the reported pairs that now
-- follow the counted ones without a gap, in pair order: the caller counts them with
-- spsa.count_pairs in the same transaction (the run's row stays locked until it commits). A
-- pair of a match that is over (decided, played out, or stopped) is kept as reported but not
-- counted, and nothing is returned to count.
CREATE OR REPLACE FUNCTION spsa.report_pair(
  p_worker text, p_run bigint, p_pair bigint, p_token uuid,
  p_wins int, p_draws int, p_losses int, p_pentanomial int[], p_faults text[], p_records text)
RETURNS TABLE (seq bigint, counted bigint, pentanomial bigint[], next int[])
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
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

-- Count the first p_count pairs that spsa.report_pair returned, in the same transaction, with
-- the LLR the caller computed of the counts after them (`stats::sprt`, in Rust: the one
-- computation a local match uses) and its decision ('H0', 'H1' or NULL). Without a decision
-- every pair that follows the counted ones must be counted. The counts themselves are the
-- database's, summed from the pairs' rows. The match finishes at a decision, or when its last
-- pair is counted; the work rows are kept `match_window` pairs ahead of the counted ones.
-- Returns the pairs counted in all.
CREATE OR REPLACE FUNCTION spsa.count_pairs(p_worker text, p_run bigint, p_token uuid,
  p_count int, p_llr float8, p_decision text)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
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

-- Every match (one, with p_run), for `spsa status` and the page: its counts, SPRT, pairs
-- reported and not counted, pairs reported in the last minute, leased now, and per worker the
-- pairs it reported.
CREATE OR REPLACE FUNCTION spsa.status_matches(p_run bigint)
RETURNS TABLE (id bigint, name text, state text, planned bigint, wins bigint, draws bigint,
               losses bigint, pentanomial bigint[], sprt float8[], llr float8, decision text,
               reported bigint, not_counted bigint, recent bigint, leased bigint,
               workers text[], definition jsonb, elapsed float8)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
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

-- Per run, the curve's measured units in their order (`spsa status` and the page): the point's
-- iteration is derived from the unit as spsa.report numbers them. One run, or every run when
-- p_run is NULL.
CREATE OR REPLACE FUNCTION spsa.status_track(p_run bigint)
RETURNS TABLE (run_id bigint, point bigint, against text, iteration bigint, pentanomial int[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT t.run_id, t.unit / r.track_units + 1, r.track_against[t.unit % r.track_units + 1],
         least(r.iterations, (t.unit / r.track_units + 1) * r.track_interval), t.pentanomial
    FROM spsa.track_results t JOIN spsa.runs r ON r.id = t.run_id
   WHERE (p_run IS NULL OR t.run_id = p_run) AND r.track_units > 0
   ORDER BY t.run_id, t.seq;
$$;

-- A clock run's reference speed, as its owner measured or set it. `p_nps` (a worker's own
-- measurement, which once became the reference) is ignored: only the owner sets the reference.
CREATE OR REPLACE FUNCTION spsa.reference_nps(p_run bigint, p_nps float8) RETURNS float8
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT reference_nps FROM spsa.runs WHERE id = p_run;
$$;

-- A stored engine's bytes (NULL when there is none with that hash).
CREATE OR REPLACE FUNCTION spsa.artifact(p_sha256 text) RETURNS bytea
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT bytes FROM spsa.artifacts WHERE sha256 = p_sha256;
$$;

-- What a worker checked of one side's engine of a run; a refusal keeps spsa.lease from giving
-- it any of the run's work, a later pass clears it.
CREATE OR REPLACE FUNCTION spsa.engine_checked(p_worker text, p_run bigint, p_side text,
  p_own boolean, p_sha256 text, p_signature text, p_refused text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  INSERT INTO spsa.worker_engines (run_id, worker, side, own_build, sha256, signature, refused)
  SELECT p_run, spsa.worker_key(p_worker), left(p_side, 20), p_own, left(p_sha256, 64),
         left(p_signature, 500), left(p_refused, 2000)
   WHERE EXISTS (SELECT FROM spsa.runs WHERE id = p_run)
  ON CONFLICT (run_id, worker, side) DO UPDATE
    SET own_build = excluded.own_build, sha256 = excluded.sha256, signature = excluded.signature,
        refused = excluded.refused, checked = now();
$$;

-- Per run and worker, the engines it checked (the run page and `spsa status`). One run, or
-- every run when p_run is NULL.
CREATE OR REPLACE FUNCTION spsa.status_engines(p_run bigint)
RETURNS TABLE (run_id bigint, worker text, side text, own_build boolean, sha256 text,
               signature text, refused text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT e.run_id, e.worker, e.side, e.own_build, e.sha256, e.signature, e.refused
    FROM spsa.worker_engines e
   WHERE p_run IS NULL OR e.run_id = p_run
   ORDER BY e.run_id, e.worker, e.side;
$$;

-- What a worker measured and the clock scale it plays `p_run` at (shown on the run's page).
CREATE OR REPLACE FUNCTION spsa.clock_scaled(p_worker text, p_run bigint, p_nps float8, p_scale float8)
RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  INSERT INTO spsa.worker_clocks (run_id, worker, nps, scale)
  VALUES (p_run, spsa.worker_key(p_worker), p_nps, least(greatest(p_scale, 0.25), 4))
  ON CONFLICT (run_id, worker) DO UPDATE SET nps = excluded.nps, scale = excluded.scale, measured = now();
$$;

-- Where every run stands: progress, pairs per second over the last minute, θ.
CREATE OR REPLACE FUNCTION spsa.status_runs()
RETURNS TABLE (id bigint, name text, state text, applied bigint, iterations bigint,
               recent_pairs bigint, var_names text[], theta float8[], leased bigint,
               wins bigint, draws bigint, losses bigint, faults bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT r.id, r.name, r.state, r.applied, r.iterations,
         (SELECT coalesce(sum(w.pairs), 0)::bigint FROM spsa.results x JOIN spsa.work w USING (run_id, iteration)
           WHERE x.run_id = r.id AND x.reported > now() - interval '60 seconds'),
         r.var_names, r.theta,
         (SELECT count(*) FROM spsa.work w WHERE w.run_id = r.id AND w.state = 'leased' AND w.lease_expires >= now()),
         r.wins, r.draws, r.losses, r.faults
    FROM spsa.runs r ORDER BY r.id;
$$;

-- Every worker seen: when, how much it played, what it said.
CREATE OR REPLACE FUNCTION spsa.status_workers()
RETURNS TABLE (name text, last_seen_seconds float8, pairs bigint, games bigint, faults bigint,
               leased bigint, note text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT w.name, extract(epoch FROM now() - w.last_seen)::float8, w.pairs, w.games, w.faults,
         (SELECT count(*) FROM spsa.work k WHERE k.worker = w.name AND k.state = 'leased' AND k.lease_expires >= now()),
         w.note
    FROM spsa.workers w ORDER BY w.last_seen DESC;
$$;

-- Per run: when `spsa prune` deleted its records, the engine speed its clock is meant for, and
-- per worker the speed it measured and the scale it plays the clock at (the run page and
-- `spsa status`). One run, or every run when p_run is NULL.
CREATE OR REPLACE FUNCTION spsa.status_clocks(p_run bigint)
RETURNS TABLE (run_id bigint, pruned text, reference_nps float8, workers text[], nps float8[],
               scales float8[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT r.id, to_char(r.pruned, 'YYYY-MM-DD HH24:MI TZ'), r.reference_nps,
         coalesce(array_agg(c.worker ORDER BY c.worker) FILTER (WHERE c.worker IS NOT NULL), '{}'),
         coalesce(array_agg(c.nps ORDER BY c.worker) FILTER (WHERE c.worker IS NOT NULL), '{}'),
         coalesce(array_agg(c.scale ORDER BY c.worker) FILTER (WHERE c.worker IS NOT NULL), '{}')
    FROM spsa.runs r LEFT JOIN spsa.worker_clocks c ON c.run_id = r.id
   WHERE p_run IS NULL OR r.id = p_run
   GROUP BY r.id ORDER BY r.id;
$$;

-- Per run: its priority and its throughput share (`spsa status`). One run, or every run when
-- p_run is NULL.
CREATE OR REPLACE FUNCTION spsa.status_shares(p_run bigint)
RETURNS TABLE (run_id bigint, priority int, throughput float8)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT r.id, r.priority, r.throughput FROM spsa.runs r
   WHERE p_run IS NULL OR r.id = p_run ORDER BY r.id;
$$;

-- Members and approvers (schema version 4). Every function below is SECURITY DEFINER and checks
-- its caller itself: the schema's owner (the role that owns spsa.runs, or one of its members, or
-- a superuser) may do everything; a member (`spsa_member`) creates runs and matches, which wait
-- for an approver, and pauses, resumes, stops and changes the share of its own runs; an
-- approver (`spsa_approver`) creates runs approved at once, approves or rejects waiting runs
-- and may stop any run. Workers get none of them. A refusal raises SQLSTATE 42501.

-- Whether the calling login role owns the schema (or is a superuser).
CREATE OR REPLACE FUNCTION spsa.caller_owns() RETURNS boolean
LANGUAGE sql STABLE SET search_path = spsa, pg_temp AS $$
  SELECT pg_has_role(session_user, c.relowner, 'MEMBER') FROM pg_class c
   WHERE c.oid = 'spsa.runs'::regclass;
$$;

-- Whether the calling login role is in group `p_group` (false when the group does not exist).
CREATE OR REPLACE FUNCTION spsa.caller_in(p_group text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = spsa, pg_temp AS $$
  SELECT CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = p_group)
              THEN pg_has_role(session_user, p_group, 'MEMBER') ELSE false END;
$$;

-- Whether the caller's runs are approved at creation, and it may approve others'.
CREATE OR REPLACE FUNCTION spsa.caller_approves() RETURNS boolean
LANGUAGE sql STABLE SET search_path = spsa, pg_temp AS $$
  SELECT spsa.caller_owns() OR spsa.caller_in('spsa_approver');
$$;

-- The run `p_run`, locked for a change by the caller, who must be its author or the owner
-- (`p_approver_too`: or an approver). Raises SP001 for no such run, 42501 for a refusal.
CREATE OR REPLACE FUNCTION spsa.run_to_change(p_run bigint, p_what text, p_approver_too boolean)
RETURNS spsa.runs
LANGUAGE plpgsql SET search_path = spsa, pg_temp AS $$
DECLARE
  r spsa.runs;
BEGIN
  SELECT * INTO r FROM spsa.runs WHERE id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'there is no run %', p_run USING ERRCODE = 'SP001';
  END IF;
  IF NOT (r.author = session_user OR spsa.caller_owns()
          OR (p_approver_too AND spsa.caller_in('spsa_approver'))) THEN
    RAISE EXCEPTION 'role % may not % run % (it is %''s: only its author%, or the schema''s owner, may)',
      session_user, p_what, p_run, r.author, CASE WHEN p_approver_too THEN ', an approver' ELSE '' END
      USING ERRCODE = '42501';
  END IF;
  RETURN r;
END
$$;

-- The audit trail's rows for a run's creation and its changes (triggers on spsa.runs): the
-- actor is the login role whose statement or function call made the change (a creation's: the
-- run's author, with who made it for them when that is another, see spsa.new_run_as).
CREATE OR REPLACE FUNCTION spsa.audit_created() RETURNS trigger
LANGUAGE plpgsql SET search_path = spsa, pg_temp AS $$
BEGIN
  INSERT INTO spsa.audit (run_id, actor, action, detail)
  VALUES (NEW.id, NEW.author, 'created',
          CASE NEW.approval WHEN 'waiting' THEN 'waits for an approver'
                            ELSE 'approved at creation' END
          || CASE WHEN NEW.author <> session_user
                  THEN format(' (made for them by %s, the schema''s owner: spsa serve''s hosted tune)', session_user)
                  ELSE '' END);
  RETURN NEW;
END
$$;
CREATE OR REPLACE FUNCTION spsa.audit_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path = spsa, pg_temp AS $$
BEGIN
  IF NEW.approval <> OLD.approval THEN
    INSERT INTO spsa.audit (run_id, actor, action, detail)
    VALUES (NEW.id, session_user, CASE NEW.approval WHEN 'waiting' THEN 'modified' ELSE NEW.approval END,
            coalesce(NEW.reason, ''));
  ELSIF NEW.state <> OLD.state
        AND (NEW.state IN ('paused', 'stopped') OR (OLD.state = 'paused' AND NEW.state = 'active')) THEN
    INSERT INTO spsa.audit (run_id, actor, action, detail)
    VALUES (NEW.id, session_user,
            CASE NEW.state WHEN 'paused' THEN 'paused' WHEN 'stopped' THEN 'stopped' ELSE 'resumed' END,
            OLD.state || ' → ' || NEW.state);
  END IF;
  IF NEW.priority <> OLD.priority OR NEW.throughput <> OLD.throughput THEN
    INSERT INTO spsa.audit (run_id, actor, action, detail)
    VALUES (NEW.id, session_user, 'share changed',
            format('priority %s → %s, throughput %s → %s', OLD.priority, NEW.priority,
                   OLD.throughput, NEW.throughput));
  END IF;
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS runs_audit_created ON spsa.runs;
CREATE TRIGGER runs_audit_created AFTER INSERT ON spsa.runs
  FOR EACH ROW EXECUTE FUNCTION spsa.audit_created();
-- Only a change of these columns runs it (a report's update of the run does not).
DROP TRIGGER IF EXISTS runs_audit_changed ON spsa.runs;
CREATE TRIGGER runs_audit_changed AFTER UPDATE OF state, priority, throughput, approval ON spsa.runs
  FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.priority IS DISTINCT FROM NEW.priority
        OR OLD.throughput IS DISTINCT FROM NEW.throughput
        OR OLD.approval IS DISTINCT FROM NEW.approval)
  EXECUTE FUNCTION spsa.audit_changed();

-- Whether login role `p_role` is in group `p_group` (false when either does not exist).
CREATE OR REPLACE FUNCTION spsa.role_in(p_role text, p_group text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = spsa, pg_temp AS $$
  SELECT CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = p_group)
                   AND EXISTS (SELECT FROM pg_roles WHERE rolname = p_role)
              THEN pg_has_role(p_role, p_group, 'MEMBER') ELSE false END;
$$;

-- The author a run is created or found for: the caller itself (`p_author` NULL or its own
-- name), or, for the schema's owner only, member or approver `p_author` (`spsa run --author
-- ROLE`: the owner process `spsa serve` starts for a tune created in the browser). A worker's
-- role, an unknown role or the owner's own group is refused (42501), and so is any other
-- caller that names someone else.
CREATE OR REPLACE FUNCTION spsa.author_for(p_author text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = spsa, pg_temp AS $$
BEGIN
  IF p_author IS NULL OR p_author = session_user THEN
    RETURN session_user;
  END IF;
  IF NOT spsa.caller_owns() THEN
    RAISE EXCEPTION 'role % may not act in the name of role %: only the schema''s owner may (spsa serve''s hosted tunes)',
      session_user, p_author USING ERRCODE = '42501';
  END IF;
  IF NOT (spsa.role_in(p_author, 'spsa_member') OR spsa.role_in(p_author, 'spsa_approver')) THEN
    RAISE EXCEPTION 'role % is in neither spsa_member nor spsa_approver: no run is created or found in its name', p_author
      USING ERRCODE = '42501';
  END IF;
  RETURN p_author;
END
$$;

-- Create a run (p_kind 'tune') or a match ('match') in the name of its author. A member's
-- waits for an approver; an approver's or the owner's is approved at once, and so is a ladder
-- step's match (`verify_of` in its definition) of an approved run of the same author. A tune's
-- iterations are handed out afterwards (spsa.hand_out); a match gets its first `p_match_window`
-- pairs here. `p_sides`/`p_shas`: the engines and files it plays, stored already
-- (spsa.store_artifact). Returns the run's id and its approval. `p_author` NULL: the caller
-- is the author (spsa.new_run, below); else the run is made in that member's or approver's
-- name (see spsa.author_for: by the schema's owner only), waits unless they approve, and its
-- audit trail's `created` row names them and says who made it for them.
CREATE OR REPLACE FUNCTION spsa.new_run_as(p_author text,
  p_kind text, p_name text, p_definition jsonb, p_var_names text[], p_lo float8[], p_hi float8[],
  p_start float8[], p_iterations bigint, p_lease_seconds float8, p_reference_nps float8,
  p_throughput float8, p_track_interval bigint, p_track_units int, p_track_pairs int,
  p_track_against text[], p_snapshot_every bigint, p_sides text[], p_shas text[],
  p_sprt float8[], p_match_window int)
RETURNS TABLE (id bigint, approval text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
#variable_conflict use_column
DECLARE
  a text;
  n bigint;
  who text := spsa.author_for(p_author);
  approves boolean;
BEGIN
  IF who = session_user THEN
    IF NOT (spsa.caller_owns() OR spsa.caller_in('spsa_member') OR spsa.caller_in('spsa_approver')) THEN
      RAISE EXCEPTION 'role % may not create runs: it is in neither spsa_member nor spsa_approver', session_user
        USING ERRCODE = '42501';
    END IF;
    approves := spsa.caller_approves();
  ELSE
    approves := spsa.role_in(who, 'spsa_approver');
  END IF;
  IF p_kind IS NULL OR p_kind NOT IN ('tune', 'match') OR p_iterations IS NULL OR p_iterations < 1
     OR p_name IS NULL OR p_definition IS NULL THEN
    RAISE EXCEPTION 'a run is a tune or a match of at least one iteration, with a name and a definition'
      USING ERRCODE = 'SP004';
  END IF;
  a := CASE WHEN approves
              OR (p_kind = 'match' AND EXISTS (
                    SELECT FROM spsa.runs x
                     WHERE x.id = (p_definition #>> '{match,verify_of,run}')::bigint
                       AND x.author = who AND x.approval = 'approved'))
            THEN 'approved' ELSE 'waiting' END;
  INSERT INTO spsa.runs (kind, name, definition, var_names, lo, hi, start_theta, theta, iterations,
                         lease_seconds, reference_nps, throughput, track_interval, track_units,
                         track_pairs, track_against, snapshot_every, sprt, match_window, author,
                         approval, approver)
  VALUES (p_kind, p_name, p_definition, coalesce(p_var_names, '{}'), coalesce(p_lo, '{}'),
          coalesce(p_hi, '{}'), coalesce(p_start, '{}'), coalesce(p_start, '{}'), p_iterations,
          p_lease_seconds, p_reference_nps, coalesce(p_throughput, 100), p_track_interval,
          coalesce(p_track_units, 0), coalesce(p_track_pairs, 0), coalesce(p_track_against, '{}'),
          coalesce(p_snapshot_every, 1), p_sprt,
          CASE WHEN p_kind = 'match' THEN greatest(coalesce(p_match_window, 64), 1) ELSE 0 END,
          who, a, CASE WHEN a = 'approved' THEN who END)
  RETURNING spsa.runs.id INTO n;
  INSERT INTO spsa.run_engines (run_id, side, sha256)
  SELECT n, s, h FROM unnest(coalesce(p_sides, '{}'), coalesce(p_shas, '{}')) AS e(s, h);
  IF p_kind = 'match' THEN
    INSERT INTO spsa.work (run_id, iteration, pairs)
    SELECT n, g, 1 FROM generate_series(1, least(p_iterations, greatest(coalesce(p_match_window, 64), 1))) g;
  END IF;
  RETURN QUERY SELECT n, a;
END
$$;

-- The caller's own (every member's and approver's `spsa run --db`, `spsa match --db`).
CREATE OR REPLACE FUNCTION spsa.new_run(
  p_kind text, p_name text, p_definition jsonb, p_var_names text[], p_lo float8[], p_hi float8[],
  p_start float8[], p_iterations bigint, p_lease_seconds float8, p_reference_nps float8,
  p_throughput float8, p_track_interval bigint, p_track_units int, p_track_pairs int,
  p_track_against text[], p_snapshot_every bigint, p_sides text[], p_shas text[],
  p_sprt float8[], p_match_window int)
RETURNS TABLE (id bigint, approval text)
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT * FROM spsa.new_run_as(NULL, p_kind, p_name, p_definition, p_var_names, p_lo, p_hi,
    p_start, p_iterations, p_lease_seconds, p_reference_nps, p_throughput, p_track_interval,
    p_track_units, p_track_pairs, p_track_against, p_snapshot_every, p_sides, p_shas, p_sprt,
    p_match_window);
$$;

-- Hand out iterations `p_iterations` of tune `p_run` (its author's or the owner's) with their
-- steps (`p_n_vars` values each, one vector after another), if the run is still in shape
-- `p_shape` (how many shapes came before, see db::RunDefinition::earlier) and not over; an
-- iteration already there is left as it is. True when the run was current. The run's row is
-- held (shared) until the caller commits, so a reshape comes before or after, not between.
CREATE OR REPLACE FUNCTION spsa.hand_out(p_run bigint, p_shape int, p_iterations bigint[],
  p_steps float8[], p_n_vars int, p_pairs int)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
DECLARE
  r spsa.runs;
BEGIN
  SELECT * INTO r FROM spsa.runs WHERE id = p_run FOR SHARE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF NOT (r.author = session_user OR spsa.caller_owns()) THEN
    RAISE EXCEPTION 'role % may not hand out iterations of run % (it is %''s)', session_user, p_run, r.author
      USING ERRCODE = '42501';
  END IF;
  IF coalesce(jsonb_array_length(r.definition->'earlier'), 0) <> p_shape
     OR r.state NOT IN ('active', 'paused') THEN
    RETURN false;
  END IF;
  IF r.kind <> 'tune' OR p_n_vars IS DISTINCT FROM cardinality(r.var_names)
     OR p_pairs IS DISTINCT FROM (r.definition->>'pairs')::int
     OR cardinality(p_steps) IS DISTINCT FROM cardinality(p_iterations) * p_n_vars
     OR EXISTS (SELECT FROM unnest(p_iterations) k WHERE k IS NULL OR k < 1 OR k > r.iterations) THEN
    RAISE EXCEPTION 'iterations of run % handed out with a wrong shape', p_run USING ERRCODE = 'SP004';
  END IF;
  INSERT INTO spsa.work (run_id, iteration, step, pairs)
  SELECT p_run, k, p_steps[(i - 1) * p_n_vars + 1 : i * p_n_vars], p_pairs
    FROM unnest(p_iterations) WITH ORDINALITY AS t(k, i)
  ON CONFLICT DO NOTHING;
  RETURN true;
END
$$;

-- Store an engine's (or an engine's file's) bytes under their SHA-256, checked here; one held
-- already is kept. For whoever creates runs.
CREATE OR REPLACE FUNCTION spsa.store_artifact(p_sha256 text, p_bytes bytea) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
BEGIN
  IF NOT (spsa.caller_owns() OR spsa.caller_in('spsa_member') OR spsa.caller_in('spsa_approver')) THEN
    RAISE EXCEPTION 'role % may not store engines', session_user USING ERRCODE = '42501';
  END IF;
  IF p_bytes IS NULL OR encode(sha256(p_bytes), 'hex') IS DISTINCT FROM p_sha256 THEN
    RAISE EXCEPTION 'the bytes are not those of SHA-256 %', p_sha256 USING ERRCODE = 'SP004';
  END IF;
  INSERT INTO spsa.artifacts (sha256, bytes, size) VALUES (p_sha256, p_bytes, length(p_bytes))
  ON CONFLICT DO NOTHING;
END
$$;

-- Whether the bytes of SHA-256 `p_sha256` are stored.
CREATE OR REPLACE FUNCTION spsa.has_artifact(p_sha256 text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT EXISTS (SELECT FROM spsa.artifacts WHERE sha256 = p_sha256);
$$;

-- A run's definition (what a worker reads of it too).
CREATE OR REPLACE FUNCTION spsa.run_definition(p_run bigint) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT definition FROM spsa.runs WHERE id = p_run;
$$;

-- The caller's newest run named `p_name` (`spsa run --db` finds its config's run by it); with
-- spsa.find_run_as, the newest of `p_author` (see spsa.author_for: the owner only, for
-- another).
CREATE OR REPLACE FUNCTION spsa.find_run_as(p_name text, p_author text)
RETURNS TABLE (id bigint, state text, pruned text, approval text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT r.id, r.state, to_char(r.pruned, 'YYYY-MM-DD HH24:MI TZ'), r.approval FROM spsa.runs r
   WHERE r.name = p_name AND r.author = spsa.author_for(p_author) ORDER BY r.id DESC LIMIT 1;
$$;
CREATE OR REPLACE FUNCTION spsa.find_run(p_name text)
RETURNS TABLE (id bigint, state text, pruned text, approval text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT * FROM spsa.find_run_as(p_name, NULL);
$$;

-- Approve waiting run `p_run` (approvers and the owner): workers lease it from now on.
CREATE OR REPLACE FUNCTION spsa.approve(p_run bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
DECLARE
  r spsa.runs;
BEGIN
  IF NOT spsa.caller_approves() THEN
    RAISE EXCEPTION 'role % may not approve runs: it is not in spsa_approver', session_user
      USING ERRCODE = '42501';
  END IF;
  SELECT * INTO r FROM spsa.runs WHERE id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'there is no run %', p_run USING ERRCODE = 'SP001';
  END IF;
  IF r.approval <> 'waiting' THEN
    RAISE EXCEPTION 'run % is % already (by %)', p_run, r.approval, r.approver USING ERRCODE = 'SP005';
  END IF;
  UPDATE spsa.runs SET approval = 'approved', approver = session_user, updated = now() WHERE id = p_run;
  RETURN r.state;
END
$$;

-- Reject waiting run `p_run` with a reason its author sees (approvers and the owner): it is
-- stopped and never played.
CREATE OR REPLACE FUNCTION spsa.reject(p_run bigint, p_reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
DECLARE
  r spsa.runs;
BEGIN
  IF NOT spsa.caller_approves() THEN
    RAISE EXCEPTION 'role % may not reject runs: it is not in spsa_approver', session_user
      USING ERRCODE = '42501';
  END IF;
  IF p_reason IS NULL OR btrim(p_reason) = '' THEN
    RAISE EXCEPTION 'a rejection needs a reason (its author reads it)' USING ERRCODE = 'SP004';
  END IF;
  SELECT * INTO r FROM spsa.runs WHERE id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'there is no run %', p_run USING ERRCODE = 'SP001';
  END IF;
  IF r.approval <> 'waiting' THEN
    RAISE EXCEPTION 'run % is % already (by %)', p_run, r.approval, r.approver USING ERRCODE = 'SP005';
  END IF;
  UPDATE spsa.runs
     SET approval = 'rejected', approver = session_user, reason = left(btrim(p_reason), 2000),
         state = CASE WHEN state IN ('active', 'paused') THEN 'stopped' ELSE state END, updated = now()
   WHERE id = p_run;
  RETURN 'stopped';
END
$$;

-- Pause an active run, resume a paused one (its author and the owner); stop an active or
-- paused run (its author, an approver or the owner): no work of it is leased any more, work in
-- flight is recorded when reported. Each returns whether the run changed (false: it was not in
-- a state to change).
CREATE OR REPLACE FUNCTION spsa.move_run(p_run bigint, p_what text, p_approver_too boolean,
  p_from text[], p_to text) RETURNS boolean
LANGUAGE plpgsql SET search_path = spsa, pg_temp AS $$
BEGIN
  PERFORM spsa.run_to_change(p_run, p_what, p_approver_too);
  UPDATE spsa.runs SET state = p_to, updated = now() WHERE id = p_run AND state = ANY (p_from);
  RETURN FOUND;
END
$$;
CREATE OR REPLACE FUNCTION spsa.pause(p_run bigint) RETURNS boolean
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT spsa.move_run(p_run, 'pause', false, '{active}', 'paused');
$$;
CREATE OR REPLACE FUNCTION spsa.resume(p_run bigint) RETURNS boolean
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT spsa.move_run(p_run, 'resume', false, '{paused}', 'active');
$$;
CREATE OR REPLACE FUNCTION spsa.stop(p_run bigint) RETURNS boolean
LANGUAGE sql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT spsa.move_run(p_run, 'stop', true, '{active,paused}', 'stopped');
$$;

-- Change a run's priority and/or throughput share (NULL: unchanged; its author and the
-- owner). The share is checked by the table (above 0, at most 1000).
CREATE OR REPLACE FUNCTION spsa.set_share(p_run bigint, p_priority int, p_throughput float8)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
BEGIN
  PERFORM spsa.run_to_change(p_run, 'change the share of', false);
  UPDATE spsa.runs SET priority = coalesce(p_priority, priority),
                       throughput = coalesce(p_throughput, throughput)
   WHERE id = p_run;
  RETURN FOUND;
END
$$;

-- Per run: its kind, author, approval, approver and a rejection's reason (`spsa status` and
-- the page). One run, or every run when p_run is NULL.
CREATE OR REPLACE FUNCTION spsa.status_authors(p_run bigint)
RETURNS TABLE (run_id bigint, kind text, author text, approval text, approver text, reason text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT r.id, r.kind, r.author, r.approval, r.approver, r.reason FROM spsa.runs r
   WHERE p_run IS NULL OR r.id = p_run ORDER BY r.id;
$$;

-- The audit trail of one run, or of every run when p_run is NULL, in order.
CREATE OR REPLACE FUNCTION spsa.audit_trail(p_run bigint)
RETURNS TABLE (id bigint, run_id bigint, at timestamptz, actor text, action text, detail text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT a.id, a.run_id, a.at, a.actor, a.action, a.detail FROM spsa.audit a
   WHERE p_run IS NULL OR a.run_id = p_run ORDER BY a.id;
$$;

-- What the creator of a run follows it by (its author, an approver, the owner): the counts a
-- crash cannot take back (see db::owner::durable_applied), the applied results after `p_after`
-- up to `p_through` (records only after `p_written`), the curve's measurements, a match's
-- counted pairs' records.
CREATE OR REPLACE FUNCTION spsa.may_follow(p_run bigint) RETURNS boolean
LANGUAGE sql STABLE SET search_path = spsa, pg_temp AS $$
  SELECT spsa.caller_approves()
      OR EXISTS (SELECT FROM spsa.runs r WHERE r.id = p_run AND r.author = session_user);
$$;
CREATE OR REPLACE FUNCTION spsa.run_progress(p_run bigint)
RETURNS TABLE (applied bigint, track_reported bigint, finished boolean, state text, approval text,
               approver text, reason text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT r.applied, r.track_reported, r.state = 'finished', r.state, r.approval, r.approver, r.reason
    FROM spsa.runs r
   WHERE r.id = p_run AND spsa.may_follow(p_run);
$$;
CREATE OR REPLACE FUNCTION spsa.run_curve(p_run bigint)
RETURNS TABLE (track_interval bigint, track_units int, track_pairs int, track_against text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT r.track_interval, r.track_units, r.track_pairs, r.track_against FROM spsa.runs r
   WHERE r.id = p_run AND spsa.may_follow(p_run);
$$;
CREATE OR REPLACE FUNCTION spsa.handed_out(p_run bigint) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT coalesce(max(w.iteration), 0) FROM spsa.work w
   WHERE w.run_id = p_run AND w.iteration > 0 AND spsa.may_follow(p_run);
$$;
CREATE OR REPLACE FUNCTION spsa.run_results(p_run bigint, p_after bigint, p_written bigint,
  p_through bigint)
RETURNS TABLE (seq bigint, iteration bigint, signal float8, wins int, draws int, losses int,
               pentanomial int[], faults text[], records text, theta_sum bigint, worker text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT x.seq, x.iteration, x.signal, x.wins, x.draws, x.losses, x.pentanomial, x.faults,
         CASE WHEN x.seq > p_written THEN x.records ELSE '' END, x.theta_sum, x.worker
    FROM spsa.results x
   WHERE x.run_id = p_run AND x.seq > p_after AND x.seq <= p_through AND spsa.may_follow(p_run)
   ORDER BY x.seq LIMIT 5000;
$$;
CREATE OR REPLACE FUNCTION spsa.run_measurements(p_run bigint, p_after bigint, p_through bigint)
RETURNS TABLE (seq bigint, unit bigint, pentanomial int[], records text, worker text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT t.seq, t.unit, t.pentanomial, t.records, t.worker FROM spsa.track_results t
   WHERE t.run_id = p_run AND t.seq > p_after AND t.seq <= p_through AND spsa.may_follow(p_run)
   ORDER BY t.seq LIMIT 1000;
$$;
CREATE OR REPLACE FUNCTION spsa.match_records(p_run bigint, p_after bigint, p_limit bigint)
RETURNS TABLE (pair bigint, records text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = spsa, pg_temp AS $$
  SELECT m.pair, m.records FROM spsa.match_pairs m
   WHERE m.run_id = p_run AND m.counted AND m.pair > p_after AND spsa.may_follow(p_run)
   ORDER BY m.pair LIMIT p_limit;
$$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA spsa FROM PUBLIC;
-- The workers' functions, to workers, and to members and approvers too: a member's `spsa run
-- --db` plays its share of its run once approved, as the owner's does.
DO $$
DECLARE
  g text;
BEGIN
  FOREACH g IN ARRAY ARRAY['spsa_worker', 'spsa_member', 'spsa_approver'] LOOP
    CONTINUE WHEN NOT EXISTS (SELECT FROM pg_roles WHERE rolname = g);
    EXECUTE format('GRANT USAGE ON SCHEMA spsa TO %I', g);
    EXECUTE format('GRANT EXECUTE ON FUNCTION spsa.hello(text, text), spsa.active_runs(),
      spsa.lease(text, bigint[], int), spsa.heartbeat(text, uuid[]), spsa.give_back(text, uuid[]),
      spsa.report(text, bigint, bigint, uuid, float8, int, int, int, int[], text[], text),
      spsa.status_runs(), spsa.status_workers(), spsa.status_clocks(bigint), spsa.worker_key(text),
      spsa.reference_nps(bigint, float8), spsa.clock_scaled(text, bigint, float8, float8),
      spsa.artifact(text), spsa.engine_checked(text, bigint, text, boolean, text, text, text),
      spsa.status_engines(bigint), spsa.lease_share(text, bigint[], int),
      spsa.status_shares(bigint),
      spsa.report_track(text, bigint, bigint, uuid, int, int, int, int[], text[], text),
      spsa.status_track(bigint),
      spsa.report_pair(text, bigint, bigint, uuid, int, int, int, int[], text[], text),
      spsa.count_pairs(text, bigint, uuid, int, float8, text),
      spsa.status_matches(bigint)
      TO %I', g);
  END LOOP;
END
$$;
-- Members and approvers: the functions above that check their caller, and the status
-- functions (no table rights).
DO $$
DECLARE
  g text;
BEGIN
  FOREACH g IN ARRAY ARRAY['spsa_member', 'spsa_approver'] LOOP
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = g) THEN
      EXECUTE format('GRANT USAGE ON SCHEMA spsa TO %I', g);
      EXECUTE format('GRANT EXECUTE ON FUNCTION
        spsa.new_run(text, text, jsonb, text[], float8[], float8[], float8[], bigint, float8, float8,
                     float8, bigint, int, int, text[], bigint, text[], text[], float8[], int),
        spsa.new_run_as(text, text, text, jsonb, text[], float8[], float8[], float8[], bigint, float8,
                        float8, float8, bigint, int, int, text[], bigint, text[], text[], float8[], int),
        spsa.find_run_as(text, text),
        spsa.hand_out(bigint, int, bigint[], float8[], int, int),
        spsa.store_artifact(text, bytea), spsa.has_artifact(text), spsa.run_definition(bigint),
        spsa.find_run(text), spsa.approve(bigint), spsa.reject(bigint, text), spsa.pause(bigint),
        spsa.resume(bigint), spsa.stop(bigint), spsa.set_share(bigint, int, float8),
        spsa.status_authors(bigint), spsa.audit_trail(bigint), spsa.run_progress(bigint), spsa.handed_out(bigint), spsa.run_curve(bigint),
        spsa.run_results(bigint, bigint, bigint, bigint), spsa.run_measurements(bigint, bigint, bigint),
        spsa.match_records(bigint, bigint, bigint),
        spsa.status_runs(), spsa.status_workers(), spsa.status_clocks(bigint),
        spsa.status_engines(bigint), spsa.status_shares(bigint), spsa.status_track(bigint),
        spsa.status_matches(bigint) TO %I', g);
    END IF;
  END LOOP;
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'spsa_worker') THEN
    GRANT EXECUTE ON FUNCTION spsa.status_authors(bigint), spsa.audit_trail(bigint) TO spsa_worker;
  END IF;
END
$$;
