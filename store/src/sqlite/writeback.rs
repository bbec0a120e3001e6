//! SQLite on Linux: the kernel is asked every few milliseconds to start writing the database's
//! write-ahead log to disk, so that a checkpoint's sync (`store/sqlite/checkpoint.rs`) finds little left to write.
//!
//! Without it, the dirty pages of half a second of commits (about 13 MiB of write-ahead log at
//! the bench's sequential rate) were written out inside the checkpoint's `fdatasync`, in one burst
//! of kernel work that kept a commit off its core for up to 9–15 ms: that was the tail of the
//! sequential message → approval-required latency (docs/performance-notes.md, "Checkpoints and the log's write-back").
//! `sync_file_range(SYNC_FILE_RANGE_WRITE)` only starts the write-back of what is dirty and
//! waits for nothing: it changes no durability guarantee (the kernel may write a dirty page back
//! at any time anyway); the checkpoint's sync still makes the file durable.
//!
//! Only the log, never the database file: SQLite's locks are POSIX record locks, which a process
//! loses on a file as soon as it closes *any* descriptor of that file. Opening and closing the
//! database file here dropped this process's locks (the SQLite documentation's "how to corrupt"
//! page warns of exactly this): a test whose CLI command prunes the audit log in another process
//! then read stale rows in this one, one run in a few
//! (`audit_anchors::retention_prunes_behind_a_signed_anchor_and_the_rest_still_verifies`). SQLite
//! takes no locks on the log file itself. The database file gets its pages from the checkpoint,
//! which syncs them at once, so there is little to start early there anyway.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use crate::{NativePool, Store};

/// Starts the write-back of the database's write-ahead log every `every`, on a thread of its own,
/// until the database file is gone. A no-op on PostgreSQL and off Linux.
///
/// A thread rather than a task: it wakes on its own timer, where a task that handed the call to
/// the blocking pool woke another thread 50 times a second, and the call submits the pages'
/// writes, which is kernel work a runtime's worker should not wait for.
pub fn keep_writing_back(store: &Store, every: Duration) -> std::io::Result<()> {
    let NativePool::Sqlite(pool) = store.native() else { return Ok(()) };
    let database = pool.connect_options().get_filename().to_path_buf();
    if database.as_os_str().is_empty() || !cfg!(target_os = "linux") {
        return Ok(()); // an in-memory database has no file
    }
    let mut wal = database.clone().into_os_string();
    wal.push("-wal");
    let wal = PathBuf::from(wal);
    std::thread::Builder::new().name("sqlite-writeback".into()).spawn(move || {
        // `exists` only looks the path up: the database file is never opened here (see above).
        while database.exists() {
            std::thread::sleep(every);
            match start_writeback(&wal) {
                // The log does not exist until the first write.
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                    tracing::debug!(file = %wal.display(), error = %err, "could not start the write-back")
                }
                _ => {}
            }
        }
    })?;
    Ok(())
}

/// Starts writing `file`'s dirty pages to disk without waiting for them.
#[cfg(target_os = "linux")]
fn start_writeback(file: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let open = std::fs::File::open(file)?;
    // SAFETY: a plain syscall on a descriptor `open` owns for the call's length; it reads no memory.
    let done = unsafe { libc::sync_file_range(open.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    if done == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::Write;

    use super::start_writeback;

    #[test]
    fn the_write_back_of_a_file_with_dirty_pages_starts_and_a_missing_file_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("countersign.db-wal");
        std::fs::File::create(&file).unwrap().write_all(&[7; 64 * 1024]).unwrap();
        // Opened read-only, as the loop does: the call must accept such a descriptor.
        start_writeback(&file).unwrap();
        let missing = start_writeback(&dir.path().join("not-yet-created-wal")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }
}
