//! How busy SQLite's one writer connection is: how many writes wait to begin, and whether writes
//! queued for it lately. Quick reads use the writer only while writes do not compete for it
//! (`Store::quick`, docs/performance-notes.md, "Quick reads").

use std::{
    sync::atomic::{AtomicU64, AtomicUsize, Ordering},
    time::{Duration, Instant},
};

/// How long after two writes last queued at once reads keep off the writer.
const CONTENDED_FOR: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub struct WriterLoad {
    waiting: AtomicUsize,
    /// When a write last found another one already waiting, as ms since `origin` plus one
    /// (0: never).
    contended_at: AtomicU64,
    origin: Instant,
}

impl Default for WriterLoad {
    fn default() -> Self {
        Self { waiting: AtomicUsize::new(0), contended_at: AtomicU64::new(0), origin: Instant::now() }
    }
}

impl WriterLoad {
    /// A write starts waiting for the writer: until the returned guard is dropped, it counts in
    /// [`Self::waiting`].
    pub fn wait(&self) -> Waiting<'_> {
        if self.waiting.fetch_add(1, Ordering::Relaxed) > 0 {
            self.contended_at.store(self.now_ms() + 1, Ordering::Relaxed);
        }
        Waiting(self)
    }

    /// How many writes wait to begin.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Whether writes queued for the writer within the last [`CONTENDED_FOR`].
    pub fn contended(&self) -> bool {
        match self.contended_at.load(Ordering::Relaxed) {
            0 => false,
            at => self.now_ms() + 1 - at < CONTENDED_FOR.as_millis() as u64,
        }
    }

    fn now_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }
}

/// A write waiting for the writer ([`WriterLoad::wait`]).
pub struct Waiting<'a>(&'a WriterLoad);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_finds_another_waiting_marks_the_writer_contended_for_a_while() {
        let load = WriterLoad::default();
        let first = load.wait();
        assert_eq!(load.waiting(), 1);
        assert!(!load.contended(), "one write alone is no contention");
        let second = load.wait();
        assert_eq!(load.waiting(), 2);
        assert!(load.contended());
        drop((first, second));
        assert_eq!(load.waiting(), 0);
        assert!(load.contended(), "still within the window");
        // A writer whose last contention was a second ago is not contended any more.
        let old = WriterLoad { origin: Instant::now() - Duration::from_secs(1), ..WriterLoad::default() };
        old.contended_at.store(1, Ordering::Relaxed);
        assert!(!old.contended());
        old.contended_at.store(old.now_ms() + 1, Ordering::Relaxed);
        assert!(old.contended());
    }
}
