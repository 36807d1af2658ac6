-- A year on the floor (issue 25, item 5; bench/bench_floor_year.py): what keeps every floor page
-- and API query within 200 ms with a year of 800 tables' derived rows.

-- A table's newest rounds (the drill-down, /api/tables/{t}/rounds) without sorting its year.
CREATE INDEX rounds_table_seq ON rounds (table_id, first_seq);
-- A table's violations, faults and overrides of a period, newest first (?table= on each list).
CREATE INDEX violations_table_ts ON violations (table_id, ts);
CREATE INDEX device_faults_table_ts ON device_faults (table_id, ts);
CREATE INDEX overrides_table_ts ON overrides (table_id, ts);
-- Faults of a device model (?model=).
CREATE INDEX device_faults_model_ts ON device_faults (model, ts);

-- Rounds started per table and hour, kept by the triggers below as `rounds` changes: the page's
-- rounds chart reads the hours wholly in its range from here, and only the two partial hours at
-- its ends from `rounds` (daemon/floor/queries.py `charts`). The ingest writes rounds with one
-- INSERT ... ON CONFLICT DO UPDATE a batch: its inserted rows and those whose started_at moved
-- (a gap filled with a round's earlier line) are counted once a statement.
CREATE TABLE rounds_hourly (
    table_id text        NOT NULL,
    hour     timestamptz NOT NULL,
    n        integer     NOT NULL,
    PRIMARY KEY (hour, table_id)
);

CREATE FUNCTION rounds_hourly_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rounds_hourly AS h (table_id, hour, n)
    SELECT table_id, date_trunc('hour', started_at, 'UTC'), count(*) FROM new_rounds GROUP BY 1, 2
    ON CONFLICT (hour, table_id) DO UPDATE SET n = h.n + excluded.n;
    RETURN NULL;
END $$;

CREATE FUNCTION rounds_hourly_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rounds_hourly AS h (table_id, hour, n)
    SELECT table_id, hour, sum(n) FROM (
        SELECT o.table_id, date_trunc('hour', o.started_at, 'UTC') AS hour, -1 AS n
        FROM old_rounds o JOIN new_rounds w USING (table_id, round)
        WHERE date_trunc('hour', o.started_at, 'UTC') <> date_trunc('hour', w.started_at, 'UTC')
        UNION ALL
        SELECT w.table_id, date_trunc('hour', w.started_at, 'UTC'), 1
        FROM old_rounds o JOIN new_rounds w USING (table_id, round)
        WHERE date_trunc('hour', o.started_at, 'UTC') <> date_trunc('hour', w.started_at, 'UTC')
    ) moved GROUP BY 1, 2
    ON CONFLICT (hour, table_id) DO UPDATE SET n = h.n + excluded.n;
    RETURN NULL;
END $$;

CREATE FUNCTION rounds_hourly_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rounds_hourly h SET n = h.n - d.n
    FROM (SELECT table_id, date_trunc('hour', started_at, 'UTC') AS hour, count(*) AS n
          FROM old_rounds GROUP BY 1, 2) d
    WHERE h.table_id = d.table_id AND h.hour = d.hour;
    RETURN NULL;
END $$;

CREATE TRIGGER rounds_hourly_insert AFTER INSERT ON rounds
    REFERENCING NEW TABLE AS new_rounds FOR EACH STATEMENT EXECUTE FUNCTION rounds_hourly_insert();
CREATE TRIGGER rounds_hourly_update AFTER UPDATE ON rounds
    REFERENCING OLD TABLE AS old_rounds NEW TABLE AS new_rounds
    FOR EACH STATEMENT EXECUTE FUNCTION rounds_hourly_update();
CREATE TRIGGER rounds_hourly_delete AFTER DELETE ON rounds
    REFERENCING OLD TABLE AS old_rounds FOR EACH STATEMENT EXECUTE FUNCTION rounds_hourly_delete();

INSERT INTO rounds_hourly (table_id, hour, n)
SELECT table_id, date_trunc('hour', started_at, 'UTC'), count(*) FROM rounds GROUP BY 1, 2;
