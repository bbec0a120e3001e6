//! Configuration from environment variables, with defaults that run the demo offline.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::Context;

#[derive(Clone, Debug)]
pub struct Config {
    /// Address to listen on; port 0 picks a free port (tests use it).
    pub addr: SocketAddr,
    /// `sqlite://…` URL of the database.
    pub database_url: String,
    /// `tracing` filter directives, e.g. `info,countersign=debug,engine=debug` (`countersign`: the web layer, `engine`: the core).
    pub log_filter: String,
    /// Log one JSON object per line instead of human-readable text.
    pub log_json: bool,
    /// Where scripts/build-site.sh (or cargo-leptos) wrote the site (`pkg/` with the WASM, JS and CSS).
    pub site_root: PathBuf,
    /// Agent configuration file (TOML); `None` uses the built-in demo configuration.
    pub agents_path: Option<PathBuf>,
    /// A draft agent configuration (`COUNTERSIGN_AGENTS_DRAFT`) every call is also put to, its
    /// differences recorded as shadow hits (engine/src/draft.rs); `None`: no draft.
    pub agents_draft_path: Option<PathBuf>,
    /// Largest request body accepted, in bytes (larger ones get 413).
    pub body_limit: usize,
    /// How often overdue approvals are looked for.
    pub sweep_interval: Duration,
    /// How long a process's claim on a task lasts without renewal: after a crash, another
    /// process (or the restarted one) resumes the task within this time.
    pub task_lease: Duration,
    /// Decision requests each user may make per minute (more get 429).
    pub decisions_per_minute: u32,
    /// Failed logins allowed per user name, and per client address, in each login window.
    pub login_failures_per_name: u32,
    pub login_failures_per_address: u32,
    pub login_window: Duration,
    /// Event streams one user may hold open on one process (more get 429).
    pub streams_per_user: usize,
    /// How long an event stream stays open before the client must reconnect (and be checked again).
    pub stream_lifetime: Duration,
    /// A connection whose client takes none of what is written to it for this long is closed
    /// (a stalled event stream would otherwise hold its buffers and task for good).
    pub write_stall_limit: Duration,
    /// Mark the session cookie `Secure` (serve over https).
    pub secure_cookies: bool,
    /// Create the documented demo accounts at start-up (only with the built-in demo agents).
    pub demo_accounts: bool,
    /// The key audit anchors are signed with (`None`: no checkpoints, no pruning).
    pub audit_key: Option<crate::store::audit_anchors::AuditKey>,
    /// How often the audit chain's head is signed.
    pub audit_checkpoint_every: Duration,
    /// Audit entries older than this are pruned behind a signed anchor (`None`: kept forever).
    pub audit_retention: Option<Duration>,
    /// Reverse proxies whose `X-Forwarded-For` is believed for the audit trail's client address.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Items a chat shows before "Show earlier" (`COUNTERSIGN_PAGE_ITEMS`, default 50).
    pub page_items: usize,
    /// The key signed decision links are signed with (`COUNTERSIGN_LINK_KEY`, at least 32
    /// characters); `None`: one the server makes once and keeps in the database.
    pub link_key: Option<String>,
    /// The key before it (`COUNTERSIGN_LINK_KEY_PREVIOUS`): links it signed keep working until
    /// they expire (at most 7 days), so the key can be rotated.
    pub link_key_previous: Option<String>,
    /// Where people reach this server (`COUNTERSIGN_PUBLIC_URL`, e.g. `https://approvals.example.com`):
    /// the start of the links it hands out. `None`: links are paths (`/decide/…`).
    pub public_url: Option<String>,
    /// Where email notifications are sent (`COUNTERSIGN_SMTP_URL`, e.g. `smtp://127.0.0.1:25`,
    /// `smtp://user:pass@mail.example.com:587?tls=required`, `smtps://…`); `None`: no email.
    pub smtp_url: Option<String>,
    /// The sender of email notifications (`COUNTERSIGN_MAIL_FROM`).
    pub mail_from: String,
}

impl Config {
    /// Reads `COUNTERSIGN_*` variables (and the `LEPTOS_*` ones cargo-leptos sets when it runs
    /// the server).
    pub fn from_env() -> anyhow::Result<Self> {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let addr_text = get("COUNTERSIGN_ADDR").or_else(|| get("LEPTOS_SITE_ADDR")).unwrap_or_else(|| "127.0.0.1:3000".to_owned());
        let addr =
            addr_text.parse().with_context(|| format!("COUNTERSIGN_ADDR={addr_text:?} is not a socket address like 127.0.0.1:3000"))?;
        let data_dir = PathBuf::from(get("COUNTERSIGN_DATA_DIR").unwrap_or_else(|| "data".to_owned()));
        let database_url = get("DATABASE_URL").unwrap_or_else(|| format!("sqlite://{}", data_dir.join("countersign.db").display()));
        if !["sqlite:", "postgres://", "postgresql://"].iter().any(|scheme| database_url.starts_with(scheme)) {
            anyhow::bail!("DATABASE_URL={database_url:?}: use a sqlite:// (the default) or postgres:// URL");
        }
        let log_filter = get("RUST_LOG").unwrap_or_else(|| "info,countersign=debug,engine=debug".to_owned());
        let log_json = matches!(get("COUNTERSIGN_LOG_JSON").as_deref(), Some("1" | "true"));
        let site_root =
            PathBuf::from(get("COUNTERSIGN_SITE_ROOT").or_else(|| get("LEPTOS_SITE_ROOT")).unwrap_or_else(|| "target/site".to_owned()));
        let agents_path = get("COUNTERSIGN_AGENTS").filter(|p| !p.is_empty()).map(PathBuf::from);
        let agents_draft_path = get("COUNTERSIGN_AGENTS_DRAFT").filter(|p| !p.is_empty()).map(PathBuf::from);
        let body_limit = number(&get, "COUNTERSIGN_BODY_LIMIT", 64 * 1024)?;
        let sweep_interval = Duration::from_millis(number(&get, "COUNTERSIGN_SWEEP_MS", 250)?.max(10) as u64);
        let task_lease = Duration::from_millis(number(&get, "COUNTERSIGN_TASK_LEASE_MS", 10_000)?.max(100) as u64);
        let decisions_per_minute = number(&get, "COUNTERSIGN_DECISIONS_PER_MINUTE", 120)?.clamp(1, u32::MAX as usize) as u32;
        let login_failures_per_name = number(&get, "COUNTERSIGN_LOGIN_FAILURES", 10)?.clamp(1, u32::MAX as usize) as u32;
        let login_failures_per_address = number(&get, "COUNTERSIGN_LOGIN_FAILURES_PER_ADDRESS", 100)?.clamp(1, u32::MAX as usize) as u32;
        let login_window = Duration::from_millis(number(&get, "COUNTERSIGN_LOGIN_WINDOW_MS", 600_000)?.max(100) as u64);
        let streams_per_user = number(&get, "COUNTERSIGN_STREAMS_PER_USER", 32)?.max(1);
        let stream_lifetime = Duration::from_millis(number(&get, "COUNTERSIGN_STREAM_LIFETIME_MS", 900_000)?.max(100) as u64);
        let write_stall_limit = Duration::from_millis(number(&get, "COUNTERSIGN_WRITE_STALL_MS", 30_000)?.max(100) as u64);
        let audit_key =
            get("COUNTERSIGN_AUDIT_KEY").filter(|k| !k.is_empty()).map(|k| crate::store::audit_anchors::AuditKey::new(&k)).transpose()?;
        let audit_checkpoint_every = Duration::from_millis(number(&get, "COUNTERSIGN_AUDIT_CHECKPOINT_MS", 60_000)?.max(100) as u64);
        let audit_retention = match get("COUNTERSIGN_AUDIT_RETENTION_DAYS").filter(|d| !d.is_empty()) {
            None => None,
            Some(_) => Some(Duration::from_secs(number(&get, "COUNTERSIGN_AUDIT_RETENTION_DAYS", 0)?.max(1) as u64 * 86_400)),
        };
        if audit_retention.is_some() && audit_key.is_none() {
            anyhow::bail!("COUNTERSIGN_AUDIT_RETENTION_DAYS needs COUNTERSIGN_AUDIT_KEY: pruned entries are replaced by a signed anchor");
        }
        let page_items = number(&get, "COUNTERSIGN_PAGE_ITEMS", domain::page::DEFAULT_PAGE_ITEMS)?.max(1);
        let secure_cookies = matches!(get("COUNTERSIGN_SECURE_COOKIES").as_deref(), Some("1" | "true"));
        let demo_accounts = agents_path.is_none() && matches!(get("COUNTERSIGN_DEMO_ACCOUNTS").as_deref(), Some("1" | "true"));
        let trusted_proxies = get("COUNTERSIGN_TRUSTED_PROXIES")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().with_context(|| format!("COUNTERSIGN_TRUSTED_PROXIES: {p:?} is not an IP address")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let link_key = get("COUNTERSIGN_LINK_KEY").filter(|k| !k.is_empty());
        if link_key.as_ref().is_some_and(|k| k.len() < 32) {
            anyhow::bail!("COUNTERSIGN_LINK_KEY must have at least 32 characters (e.g. `openssl rand -hex 32`)");
        }
        let link_key_previous = get("COUNTERSIGN_LINK_KEY_PREVIOUS").filter(|k| !k.is_empty());
        if link_key_previous.is_some() && link_key.is_none() {
            anyhow::bail!("COUNTERSIGN_LINK_KEY_PREVIOUS goes with COUNTERSIGN_LINK_KEY (the new key that replaces it)");
        }
        if link_key_previous.as_ref().is_some_and(|k| k.len() < 32) {
            anyhow::bail!("COUNTERSIGN_LINK_KEY_PREVIOUS must have at least 32 characters, like the key it was");
        }
        let public_url = get("COUNTERSIGN_PUBLIC_URL").filter(|u| !u.is_empty()).map(|u| u.trim_end_matches('/').to_owned());
        if let Some(url) = &public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            anyhow::bail!("COUNTERSIGN_PUBLIC_URL must start with http:// or https://, got {url:?}");
        }
        let smtp_url = get("COUNTERSIGN_SMTP_URL").filter(|u| !u.is_empty());
        if let Some(url) = &smtp_url
            && !(url.starts_with("smtp://") || url.starts_with("smtps://"))
        {
            anyhow::bail!("COUNTERSIGN_SMTP_URL must start with smtp:// or smtps://");
        }
        let mail_from =
            get("COUNTERSIGN_MAIL_FROM").filter(|f| !f.is_empty()).unwrap_or_else(|| "Countersign <countersign@localhost>".to_owned());
        Ok(Self {
            smtp_url,
            mail_from,
            link_key,
            link_key_previous,
            public_url,
            addr,
            database_url,
            log_filter,
            log_json,
            site_root,
            agents_path,
            agents_draft_path,
            body_limit,
            sweep_interval,
            task_lease,
            decisions_per_minute,
            login_failures_per_name,
            login_failures_per_address,
            login_window,
            streams_per_user,
            stream_lifetime,
            write_stall_limit,
            secure_cookies,
            demo_accounts,
            trusted_proxies,
            audit_key,
            audit_checkpoint_every,
            audit_retention,
            page_items,
        })
    }
}

fn number(get: &impl Fn(&str) -> Option<String>, key: &str, default: usize) -> anyhow::Result<usize> {
    match get(key) {
        None => Ok(default),
        Some(text) => text.trim().parse().with_context(|| format!("{key}={text:?} is not a whole number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> anyhow::Result<Config> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_run_the_demo_on_a_local_sqlite_file() {
        let c = config(&[]).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:3000");
        assert_eq!(c.database_url, "sqlite://data/countersign.db");
    }

    #[test]
    fn the_data_dir_moves_the_default_database() {
        let c = config(&[("COUNTERSIGN_DATA_DIR", "/var/lib/cs")]).unwrap();
        assert_eq!(c.database_url, "sqlite:///var/lib/cs/countersign.db");
    }

    #[test]
    fn a_bad_address_is_reported_with_its_variable() {
        let err = config(&[("COUNTERSIGN_ADDR", "nope")]).unwrap_err().to_string();
        assert!(err.contains("COUNTERSIGN_ADDR"), "{err}");
    }

    #[test]
    fn a_bad_number_is_reported_with_its_variable() {
        let err = config(&[("COUNTERSIGN_BODY_LIMIT", "lots")]).unwrap_err().to_string();
        assert!(err.contains("COUNTERSIGN_BODY_LIMIT"), "{err}");
    }

    #[test]
    fn a_short_link_key_and_a_public_url_without_a_scheme_are_refused() {
        let err = config(&[("COUNTERSIGN_LINK_KEY_PREVIOUS", &"p".repeat(32))]).unwrap_err().to_string();
        assert!(err.contains("goes with COUNTERSIGN_LINK_KEY"), "{err}");
        let err = config(&[("COUNTERSIGN_LINK_KEY", "short")]).unwrap_err().to_string();
        assert!(err.contains("COUNTERSIGN_LINK_KEY") && err.contains("32"), "{err}");
        let err = config(&[("COUNTERSIGN_PUBLIC_URL", "approvals.example.com")]).unwrap_err().to_string();
        assert!(err.contains("COUNTERSIGN_PUBLIC_URL"), "{err}");
        assert_eq!(config(&[("COUNTERSIGN_PUBLIC_URL", "https://a.example/")]).unwrap().public_url.as_deref(), Some("https://a.example"));
    }

    #[test]
    fn only_sqlite_and_postgres_urls_are_accepted() {
        let err = config(&[("DATABASE_URL", "mysql://x")]).unwrap_err().to_string();
        assert!(err.contains("DATABASE_URL") && err.contains("postgres://"), "{err}");
        assert_eq!(config(&[("DATABASE_URL", "postgres://cs@db/cs")]).unwrap().database_url, "postgres://cs@db/cs");
    }
}
