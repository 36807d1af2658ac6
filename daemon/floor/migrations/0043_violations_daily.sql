-- Violations per article and day (UTC), kept by the triggers below as `violations` changes: the
-- page's violations chart beyond 48 hours is day bars, and counting a month of 800 tables'
-- violations row by row (100 k of them) took 160-260 ms on the bench's machine; a month of
-- daily counts is a row an article a day (bench/bench_floor_year.py). A person's
-- acknowledgement updates a violation without moving it: the update trigger adds nothing then.
CREATE TABLE violations_daily (
    article text        NOT NULL,  -- '?' for a violation that names none
    day     timestamptz NOT NULL,
    n       integer     NOT NULL,
    PRIMARY KEY (day, article)
);

CREATE FUNCTION violations_daily_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO violations_daily AS d (article, day, n)
        SELECT coalesce(article, '?'), date_trunc('day', ts, 'UTC'), count(*) FROM new_rows
        GROUP BY 1, 2
        ON CONFLICT (day, article) DO UPDATE SET n = d.n + excluded.n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO violations_daily AS d (article, day, n)
        SELECT article, day, sum(n) FROM (
            SELECT coalesce(article, '?') AS article, date_trunc('day', ts, 'UTC') AS day,
                   -1 AS n FROM old_rows
            UNION ALL
            SELECT coalesce(article, '?'), date_trunc('day', ts, 'UTC'), 1 FROM new_rows
        ) moved GROUP BY 1, 2 HAVING sum(n) <> 0
        ON CONFLICT (day, article) DO UPDATE SET n = d.n + excluded.n;
    ELSE
        UPDATE violations_daily d SET n = d.n - o.n
        FROM (SELECT coalesce(article, '?') AS article, date_trunc('day', ts, 'UTC') AS day,
                     count(*) AS n FROM old_rows GROUP BY 1, 2) o
        WHERE d.article = o.article AND d.day = o.day;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER violations_daily_insert AFTER INSERT ON violations
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION violations_daily_change();
CREATE TRIGGER violations_daily_update AFTER UPDATE ON violations
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION violations_daily_change();
CREATE TRIGGER violations_daily_delete AFTER DELETE ON violations
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION violations_daily_change();

INSERT INTO violations_daily (article, day, n)
SELECT coalesce(article, '?'), date_trunc('day', ts, 'UTC'), count(*) FROM violations GROUP BY 1, 2;
