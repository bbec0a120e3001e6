//! Holds a process to a share of one core with a cgroup's CPU quota (v2 `cpu.max`, or v1
//! `cpu.cfs_quota_us`): the bench's stand-in for a replica on a small machine of its own, on a
//! machine whose cores PostgreSQL, the replicas and the clients otherwise share. Needs a writable
//! cgroup file system (root); without one, the section that uses it says why it was skipped.

use std::path::{Path, PathBuf};

/// The quota's period: short, so a held process waits at most a few milliseconds at a time.
const PERIOD_US: u64 = 10_000;

/// A cgroup of its own, removed when dropped (once the processes in it are gone).
pub struct CpuCap {
    dir: PathBuf,
}

impl CpuCap {
    /// A new group named `name` allowing `share` of one core (0.25: a quarter), or why there can be
    /// none on this machine.
    pub fn new(name: &str, share: f64) -> Result<Self, String> {
        let quota = ((share * PERIOD_US as f64) as u64).max(1000);
        let v2 = Path::new("/sys/fs/cgroup");
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let (dir, settings) = if v2.join("cgroup.controllers").exists() {
            let controllers = std::fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
            if !controllers.split_whitespace().any(|c| c == "cpu") {
                return Err("the cgroup v2 hierarchy has no cpu controller".into());
            }
            // Children of the root get the cpu controller only when the root hands it down.
            write(&v2.join("cgroup.subtree_control"), "+cpu")?;
            (v2.join(name), vec![("cpu.max", format!("{quota} {PERIOD_US}"))])
        } else if v1.join("cpu.cfs_quota_us").exists() {
            (v1.join(name), vec![("cpu.cfs_period_us", PERIOD_US.to_string()), ("cpu.cfs_quota_us", quota.to_string())])
        } else {
            return Err("no cgroup cpu controller is mounted at /sys/fs/cgroup".into());
        };
        if !dir.exists() {
            std::fs::create_dir(&dir).map_err(|e| format!("cannot create the cgroup {} ({e}; it needs root)", dir.display()))?;
        }
        let cap = Self { dir };
        for (file, value) in settings {
            write(&cap.dir.join(file), &value)?;
        }
        Ok(cap)
    }

    /// Moves the process `pid` (all its threads) into the group.
    pub fn add(&self, pid: u32) -> Result<(), String> {
        write(&self.dir.join("cgroup.procs"), &pid.to_string())
    }
}

impl Drop for CpuCap {
    fn drop(&mut self) {
        // A group can only be removed empty: what still runs in it goes back to the parent first
        // (a process just killed may take a moment to leave).
        for _ in 0..40 {
            if let (Ok(procs), Some(parent)) = (std::fs::read_to_string(self.dir.join("cgroup.procs")), self.dir.parent()) {
                for pid in procs.split_whitespace() {
                    let _ = std::fs::write(parent.join("cgroup.procs"), pid);
                }
            }
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        eprintln!("could not remove the cgroup {}", self.dir.display());
    }
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("cannot write {value:?} to {} ({e})", path.display()))
}
