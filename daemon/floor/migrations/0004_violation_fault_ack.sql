-- A violation or a device fault (tilt, hold) acknowledged from the floor page or API, as a chain
-- alert is (0002): who took it in hand, when, with what role, and their note. Set once; every
-- attempt, done or refused, is a row of floor_actions (action 'acknowledge', target
-- 'violation:<table>:<seq>' or 'fault:<table>:<seq>').
ALTER TABLE violations
    ADD COLUMN acknowledged_at   timestamptz,
    ADD COLUMN acknowledged_by   text,
    ADD COLUMN acknowledged_role text,
    ADD COLUMN ack_note          text,
    ADD CONSTRAINT violations_ack_whole CHECK (
        (acknowledged_at IS NULL) = (acknowledged_by IS NULL)
        AND (acknowledged_at IS NULL) = (ack_note IS NULL)
    );
ALTER TABLE device_faults
    ADD COLUMN acknowledged_at   timestamptz,
    ADD COLUMN acknowledged_by   text,
    ADD COLUMN acknowledged_role text,
    ADD COLUMN ack_note          text,
    ADD CONSTRAINT device_faults_ack_whole CHECK (
        (acknowledged_at IS NULL) = (acknowledged_by IS NULL)
        AND (acknowledged_at IS NULL) = (ack_note IS NULL)
    );
-- The page's "not yet taken in hand" filter reads the newest open ones.
CREATE INDEX violations_open ON violations (ts) WHERE acknowledged_at IS NULL;
CREATE INDEX device_faults_open ON device_faults (ts) WHERE acknowledged_at IS NULL;
