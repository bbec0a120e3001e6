//! SQLite on Linux: the kernel is asked every few milliseconds to start writing the database's
//! files to disk, so that a checkpoint's sync (`store/checkpoint.rs`) finds little left to write.
//!
//! Without it, the dirty pages of half a second of commits (about 13 MiB of write-ahead log at
//! the bench's sequential rate) were written out inside the checkpoint's `fdatasync`, in one burst
//! of kernel work that kept a commit off its core for up to 9–15 ms: that was the tail of the
//! sequential message → approval-required latency (docs/performance-notes.md, "stop 37").
//! `sync_file_range(SYNC_FILE_RANGE_WRITE)` only starts the write-back of what is dirty and
//! waits for nothing: it changes no durability guarantee (the kernel may write a dirty page back
//! at any time anyway); the checkpoint's sync still makes the file durable.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use super::{NativePool, Store};

/// Starts the write-back of the database file and its write-ahead log every `every` while the
/// process runs. A no-op on PostgreSQL and off Linux.
pub async fn keep_writing_back(store: Store, every: Duration) {
    let NativePool::Sqlite(pool) = store.native() else { return };
    let database = pool.connect_options().get_filename().to_path_buf();
    if database.as_os_str().is_empty() || !cfg!(target_os = "linux") {
        return; // an in-memory database has no file
    }
    let mut wal = database.clone().into_os_string();
    wal.push("-wal");
    let files = [database, PathBuf::from(wal)];
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let files = files.clone();
        // The call submits the dirty pages' writes: kernel work, kept off the runtime's workers.
        let started = tokio::task::spawn_blocking(move || {
            for file in &files {
                match start_writeback(file) {
                    // The log does not exist until the first write.
                    Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                        tracing::debug!(file = %file.display(), error = %err, "could not start the write-back")
                    }
                    _ => {}
                }
            }
        });
        if started.await.is_err() {
            return; // the runtime is shutting down
        }
    }
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
