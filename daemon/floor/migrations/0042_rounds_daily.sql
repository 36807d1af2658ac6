-- Rounds started per table and day (UTC), kept from `rounds_hourly` by the triggers below: the
-- page's charts beyond 48 hours are day bars, and summing a month of hourly rows (800 tables:
-- 595 k of them) took 0.3-0.7 s; a month of daily rows is 25 k (bench/bench_floor_year.py).
-- `rounds_hourly` is written only by the triggers of `rounds` (migration 0041): an INSERT ...
-- ON CONFLICT DO UPDATE (each hour's count added to) or an UPDATE (a round's start moved, a
-- round deleted); each statement's change is added here once.
CREATE TABLE rounds_daily (
    table_id text        NOT NULL,
    day      timestamptz NOT NULL,
    n        integer     NOT NULL,
    PRIMARY KEY (day, table_id)
);

CREATE FUNCTION rounds_daily_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rounds_daily AS d (table_id, day, n)
    SELECT table_id, date_trunc('day', hour, 'UTC'), sum(n) FROM new_hours GROUP BY 1, 2
    ON CONFLICT (day, table_id) DO UPDATE SET n = d.n + excluded.n;
    RETURN NULL;
END $$;

CREATE FUNCTION rounds_daily_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rounds_daily AS d (table_id, day, n)
    SELECT table_id, day, sum(n) FROM (
        SELECT table_id, date_trunc('day', hour, 'UTC') AS day, -n AS n FROM old_hours
        UNION ALL
        SELECT table_id, date_trunc('day', hour, 'UTC'), n FROM new_hours
    ) moved GROUP BY 1, 2 HAVING sum(n) <> 0
    ON CONFLICT (day, table_id) DO UPDATE SET n = d.n + excluded.n;
    RETURN NULL;
END $$;

CREATE FUNCTION rounds_daily_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rounds_daily d SET n = d.n - o.n
    FROM (SELECT table_id, date_trunc('day', hour, 'UTC') AS day, sum(n) AS n
          FROM old_hours GROUP BY 1, 2) o
    WHERE d.table_id = o.table_id AND d.day = o.day;
    RETURN NULL;
END $$;

CREATE TRIGGER rounds_daily_insert AFTER INSERT ON rounds_hourly
    REFERENCING NEW TABLE AS new_hours FOR EACH STATEMENT EXECUTE FUNCTION rounds_daily_insert();
CREATE TRIGGER rounds_daily_update AFTER UPDATE ON rounds_hourly
    REFERENCING OLD TABLE AS old_hours NEW TABLE AS new_hours
    FOR EACH STATEMENT EXECUTE FUNCTION rounds_daily_update();
CREATE TRIGGER rounds_daily_delete AFTER DELETE ON rounds_hourly
    REFERENCING OLD TABLE AS old_hours FOR EACH STATEMENT EXECUTE FUNCTION rounds_daily_delete();

INSERT INTO rounds_daily (table_id, day, n)
SELECT table_id, date_trunc('day', hour, 'UTC'), sum(n) FROM rounds_hourly GROUP BY 1, 2;
