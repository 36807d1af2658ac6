-- Months of raw lines archived out of the database (`tabled floor archive`, issue 25;
-- docs/floor-service.md "Retention and archives"): the file and the SHA-256 of the file and of
-- its manifest as written, so a restore refuses a manifest edited to agree with an edited file.
-- One row a month's partition; a restore stamps restored_at (archiving it again replaces it).
CREATE TABLE floor_archives (
    partition       text        PRIMARY KEY,
    month_from      timestamptz NOT NULL,
    month_to        timestamptz NOT NULL,
    file            text        NOT NULL,
    file_sha256     text        NOT NULL CHECK (file_sha256 ~ '^[0-9a-f]{64}$'),
    manifest_sha256 text        NOT NULL CHECK (manifest_sha256 ~ '^[0-9a-f]{64}$'),
    lines           bigint      NOT NULL,
    tables          integer     NOT NULL,
    archived_by     text        NOT NULL,
    archived_at     timestamptz NOT NULL DEFAULT now(),
    restored_by     text,
    restored_at     timestamptz
);
