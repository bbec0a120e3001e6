//! A consistent copy of the SQLite database while the server runs: `VACUUM INTO` reads the
//! database in one read transaction (writers go on; they do not wait for it) and writes a new,
//! compact file that is a database on its own. PostgreSQL has its own tools (`pg_dump`), which
//! the README's "Backups" section names.

use std::path::Path;

use anyhow::{Context, bail};

use super::{NativePool, Store};

/// Copies the database to `file`, which must not exist yet. Returns the copy's size in bytes.
pub async fn to_file(store: &Store, file: &Path) -> anyhow::Result<u64> {
    let NativePool::Sqlite(pool) = store.native() else {
        bail!("countersign backup copies a SQLite database; for PostgreSQL use pg_dump (README, \"Backups\")");
    };
    if file.exists() {
        bail!("{} already exists: back up to a new file", file.display());
    }
    let parent = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        bail!("{} is not a directory", parent.display());
    }
    let target = file.to_str().with_context(|| format!("{} is not a UTF-8 path", file.display()))?;
    sqlx::query("VACUUM INTO ?").bind(target).execute(pool).await.with_context(|| format!("copying the database to {}", file.display()))?;
    Ok(std::fs::metadata(file)?.len())
}
