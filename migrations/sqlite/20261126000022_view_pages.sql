-- The page of a conversation's view a reload shows (its last `page_items` items, waiting cards,
-- their turns; app/src/domain/page.rs) as of `last_seq`, so a reload reads one small row and folds
-- only the events after it (engine/src/store/snapshots.rs). A cache like view_snapshots: one of
-- another `fold_version` or page size is ignored and rebuilt.
-- Twin of migrations/postgres/20261126000022_view_pages.sql.
CREATE TABLE view_pages (
    conversation_id TEXT PRIMARY KEY NOT NULL REFERENCES conversations(id),
    fold_version    INTEGER NOT NULL,
    page_items      INTEGER NOT NULL,
    last_seq        INTEGER NOT NULL,
    view            TEXT NOT NULL,
    updated_at      INTEGER NOT NULL
);
