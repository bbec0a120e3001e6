//! The `countersign` command line: `serve` (the default) and the admin subcommands. Errors are
//! one line on stderr and a non-zero exit code.

use std::io::{BufRead, IsTerminal};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use engine::{
    database::{AuditKey, Database},
    reads::{ExternalAnchor, Reads},
};
use serde_json::json;

use crate::{
    auth::{password, scopes::Scopes, tokens},
    config::Config,
    people::{Accounts, Role, User},
    remote::{Remote, remote},
};

#[derive(Parser)]
#[command(name = "countersign", version, about = "Human approval for AI agents' risky tool calls")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve the web app and API (the default).
    Serve,
    /// Manage accounts (in the configured database).
    #[command(subcommand)]
    User(UserCommand),
    /// Manage personal API tokens (in the configured database).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Decide approvals on a running server, with an API token.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Check or export the audit trail (in the configured database).
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Copy the SQLite database to FILE (a new file), consistently, while the server runs. To
    /// restore, stop the server and put FILE in the data directory as countersign.db.
    Backup { file: std::path::PathBuf },
    /// Check an agent configuration file (its gates: the policy).
    #[command(subcommand, visible_alias = "config")]
    Policy(PolicyCommand),
}

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Validate FILE as the server would at start-up; prints a summary and the warnings a person
    /// who writes gates needs (overlapping gates and what they require together, gates no call
    /// reaches, self-grants, timeouts that approve), or the first problem (exit code 1).
    Check { file: std::path::PathBuf },
    /// Replay FILE, a draft, against the calls recorded in the configured database (read-only;
    /// while the server runs): per gate the calls it would stop and those its rule could not be
    /// evaluated for, the calls that ran unasked and would now be asked, those asked that would
    /// now run unasked or go to other deciders (or with other rules for them), the deciders' load,
    /// the grants it would end, and `check`'s warnings. Exit code 1 when FILE is not a valid
    /// configuration, or `--agent` names an agent neither it, the live file nor the window's calls
    /// have, or the database does not exist or has another build's schema (it is neither created
    /// nor migrated).
    Replay {
        file: std::path::PathBuf,
        /// How far back: a number and a unit, 30d, 12h or 90m; at most 365d.
        #[arg(long, default_value = "30d")]
        since: String,
        /// Only this agent's calls.
        #[arg(long)]
        agent: Option<String>,
        /// The report as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user. The password is read from stdin (first line) or asked for at a terminal.
    Add {
        name: String,
        #[arg(long)]
        admin: bool,
        /// Where email notifications reach them (a gate's `notify = ["email"]`).
        #[arg(long)]
        email: Option<String>,
    },
    /// Set (or with no address, clear) where a user's email notifications go.
    Email { name: String, address: Option<String> },
    /// List users.
    List,
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create a token for a user and print it (only this once).
    Create {
        #[arg(long)]
        user: String,
        #[arg(long)]
        name: String,
        /// What it may do: read, decide, call, separated by commas (default: all three).
        #[arg(long, conflicts_with = "gateway")]
        scopes: Option<String>,
        /// For an agent's gateway client (MCP, A2A, AG-UI): `call` only, so it cannot decide
        /// the calls it asks for.
        #[arg(long)]
        gateway: bool,
    },
    /// Revoke one of a user's tokens by id.
    Revoke {
        #[arg(long)]
        user: String,
        id: String,
    },
}

#[derive(Subcommand)]
pub enum ApprovalsCommand {
    /// List pending approvals.
    List {
        #[command(flatten)]
        remote: Remote,
    },
    /// Approve one approval.
    Approve {
        id: String,
        #[command(flatten)]
        remote: Remote,
    },
    /// Reject one approval.
    Reject {
        id: String,
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        remote: Remote,
    },
    /// Show pending approvals as they arrive and decide each with one key (a, r, s, q).
    Watch {
        #[command(flatten)]
        remote: Remote,
    },
}

#[derive(Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain and its signed anchors (with COUNTERSIGN_AUDIT_KEY); exits 1 and
    /// names the first broken entry if it does not hold.
    Verify {
        /// A checkpoint kept outside the database (`ENTRY_ID:HASH`, from the server's
        /// "audit checkpoint" log line): the chain must still hold that entry with that hash.
        #[arg(long)]
        anchor: Option<ExternalAnchor>,
    },
    /// Sign the chain's head now (the server does it every minute when a key is configured).
    Checkpoint,
    /// Delete entries older than DAYS behind a signed anchor, so the rest still verifies.
    Prune {
        #[arg(long)]
        older_than_days: u32,
    },
    /// Print every entry as JSON Lines.
    Export,
}

fn audit_key(config: &Config) -> anyhow::Result<&AuditKey> {
    config.audit_key.as_ref().context("set COUNTERSIGN_AUDIT_KEY (the key anchors are signed with) first")
}

/// The configured database, migrated as the server would (without its webhooks: the command line
/// appends no events).
async fn open_database(config: &Config) -> anyhow::Result<Database> {
    Database::open(&config.database_url, &[]).await
}

fn read_password(name: &str) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    let password = if stdin.is_terminal() {
        let first = rpassword::prompt_password(format!("Password for {name}: ")).context("cannot read the password")?;
        let second = rpassword::prompt_password("Again: ").context("cannot read the password")?;
        if first != second {
            bail!("the two passwords differ");
        }
        first
    } else {
        let mut line = String::new();
        stdin.lock().read_line(&mut line).context("cannot read the password from stdin")?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    };
    if let Some(why) = password::weakness(name, &password) {
        bail!("{why}");
    }
    Ok(password)
}

/// Creates a user; the one place accounts are made (CLI, demo seeding, tests).
pub async fn add_user(accounts: &Accounts, name: &str, password_text: String, role: Role) -> anyhow::Result<User> {
    let name = name.trim();
    if name.is_empty() || name.len() > 64 || !name.chars().all(|c| c.is_alphanumeric() || "-_.@".contains(c)) {
        bail!("a user name has 1 to 64 letters, digits or - _ . @");
    }
    let hash = password::hash(password_text).await?;
    accounts.add_user(name, &hash, role).await?.with_context(|| format!("user {name} already exists"))
}

/// An email address as notifications need it: something@somewhere, no spaces or angle brackets.
fn checked_email(address: &str) -> anyhow::Result<String> {
    let address = address.trim();
    let ok = address.split_once('@').is_some_and(|(local, domain)| !local.is_empty() && (domain.contains('.') || domain == "localhost"))
        && !address.chars().any(|c| c.is_whitespace() || "<>,;\"".contains(c));
    if !ok {
        bail!("{address:?} is not an email address (like bob@example.com)");
    }
    Ok(address.to_owned())
}

async fn user_named(reads: &Reads, name: &str) -> anyhow::Result<User> {
    let credentials = reads.credentials(name).await?.with_context(|| format!("no user {name}"))?;
    Ok(credentials.user)
}

/// `--since`'s window in ms: a positive number (digits only) and a unit, `30d`, `12h` or `90m`; at
/// most 365 days, as on the Policy page (a report lists every day of its window).
fn window_ms(since: &str) -> anyhow::Result<i64> {
    let bad = || anyhow::anyhow!("--since takes a number and a unit: 30d, 12h or 90m (got {since:?})");
    let unit_ms = match since.chars().last() {
        Some('d') => 86_400_000,
        Some('h') => 3_600_000,
        Some('m') => 60_000,
        _ => return Err(bad()),
    };
    let digits = &since[..since.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let number: i64 = digits.parse().map_err(|_| bad())?;
    if number <= 0 {
        return Err(bad());
    }
    let window = number.checked_mul(unit_ms).ok_or_else(bad)?;
    let max_days = crate::replay::MAX_WINDOW_DAYS;
    if window > i64::from(max_days) * 86_400_000 {
        bail!("--since must be between 1m and {max_days}d (got {since:?})");
    }
    Ok(window)
}

/// Runs a non-serve subcommand.
pub async fn run(command: Command, config: Config) -> anyhow::Result<()> {
    match command {
        Command::Serve => unreachable!("serve is handled by main"),
        Command::User(UserCommand::Add { name, admin, email }) => {
            let email = email.map(|e| checked_email(&e)).transpose()?;
            let password = read_password(&name)?;
            let accounts = open_database(&config).await?.accounts();
            let user = add_user(&accounts, &name, password, if admin { Role::Admin } else { Role::User }).await?;
            if let Some(email) = &email {
                accounts.set_email(&user.username, Some(email)).await?;
            }
            println!("created {} {}", user.role.as_str(), user.username);
        }
        Command::User(UserCommand::Email { name, address }) => {
            let address = address.map(|e| checked_email(&e)).transpose()?;
            let accounts = open_database(&config).await?.accounts();
            if !accounts.set_email(&name, address.as_deref()).await? {
                bail!("no user {name}");
            }
            match address {
                Some(address) => println!("{name}'s notifications go to {address}"),
                None => println!("{name} gets no email notifications"),
            }
        }
        Command::User(UserCommand::List) => {
            for user in open_database(&config).await?.reads().users().await? {
                println!("{}\t{}\t{}", user.username, user.role.as_str(), user.created_at);
            }
        }
        Command::Token(TokenCommand::Create { user, name, scopes, gateway }) => {
            let scopes = match (scopes, gateway) {
                (_, true) => Scopes::CALL,
                (Some(names), false) => Scopes::parse(&names).map_err(|e| anyhow::anyhow!("--scopes: {e}"))?,
                (None, false) => Scopes::ALL,
            };
            let database = open_database(&config).await?;
            let user = user_named(&database.reads(), &user).await?;
            let token = tokens::generate();
            let id = database.accounts().create_token(&user.id, &name, &tokens::digest(&token), &scopes.to_string()).await?;
            eprintln!("token {id} for {} (shown once; it may {}):", user.username, scopes.said().trim_start_matches("only "));
            println!("{token}");
        }
        Command::Token(TokenCommand::Revoke { user, id }) => {
            let database = open_database(&config).await?;
            let user = user_named(&database.reads(), &user).await?;
            // On PostgreSQL the running servers are told too, so the event streams it opened close
            // (engine/src/people/credentials.rs).
            if !database.accounts().revoke_token(&user.id, &id).await? {
                bail!("{} has no live token {id}", user.username);
            }
            println!("revoked {id}");
        }
        Command::Approvals(ApprovalsCommand::List { remote: r }) => {
            let list = remote(&r, reqwest::Method::GET, "/api/approvals?status=pending", None).await?;
            for a in list.as_array().into_iter().flatten() {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    a["id"].as_str().unwrap_or(""),
                    a["owner"].as_str().unwrap_or("-"),
                    a["tool"].as_str().unwrap_or(""),
                    a["risk"].as_str().unwrap_or(""),
                    a["summary"].as_str().unwrap_or("")
                );
            }
        }
        Command::Approvals(ApprovalsCommand::Approve { id, remote: r }) => {
            let out = remote(&r, reqwest::Method::POST, &format!("/api/approvals/{id}/approve"), Some(json!({}))).await?;
            println!("{}", out["outcome"].as_str().unwrap_or("approved"));
        }
        Command::Approvals(ApprovalsCommand::Reject { id, reason, remote: r }) => {
            let out = remote(&r, reqwest::Method::POST, &format!("/api/approvals/{id}/reject"), Some(json!({ "reason": reason }))).await?;
            println!("{}", out["outcome"].as_str().unwrap_or("rejected"));
        }
        Command::Approvals(ApprovalsCommand::Watch { remote: r }) => crate::console::watch(&r).await?,
        Command::Audit(AuditCommand::Verify { anchor }) => {
            let report = open_database(&config).await?.reads().audit_verify(config.audit_key.as_ref(), anchor.as_ref()).await?;
            if !report.ok {
                bail!(
                    "audit chain broken at entry {}: {} ({} entries read)",
                    report.first_broken.unwrap_or_default(),
                    report.problem.unwrap_or_default(),
                    report.entries
                );
            }
            println!("audit chain ok: {} entries", report.entries);
            if let Some(through) = report.pruned_through {
                println!("  starts after entry {through}, pruned behind a signed anchor");
            }
            match &report.checkpoint {
                Some(c) => println!(
                    "  newest checkpoint: entry {} ({}){}; {} entries after it are not anchored yet",
                    c.entry_id,
                    c.at,
                    if report.signatures_checked { ", signature checked" } else { ", signature NOT checked: no COUNTERSIGN_AUDIT_KEY" },
                    report.after_checkpoint
                ),
                None => println!("  no checkpoint yet: a cut tail or a recomputed chain would not show"),
            }
        }
        Command::Audit(AuditCommand::Checkpoint) => {
            let database = open_database(&config).await?;
            match database.audit_checkpoint(audit_key(&config)?).await? {
                Some(a) => println!("{}:{}", a.entry_id, a.hash),
                None => println!("nothing new to sign"),
            }
        }
        Command::Audit(AuditCommand::Prune { older_than_days }) => {
            let database = open_database(&config).await?;
            let before = engine::clock::now_ms() - i64::from(older_than_days) * 86_400_000;
            let n = database.audit_prune(audit_key(&config)?, before).await?;
            println!("pruned {n} entries");
        }
        Command::Policy(PolicyCommand::Check { file }) => {
            let registry = crate::tools::Registry::builtin();
            let config = crate::agents::AgentsConfig::load(&file, &registry)?;
            for agent in &config.agents {
                let gates: Vec<String> = agent.gates.iter().map(|g| g.name.clone()).collect();
                println!(
                    "agent {}: {} tool(s), gates: {}",
                    agent.name,
                    agent.tools.len(),
                    if gates.is_empty() { "none".into() } else { gates.join(", ") }
                );
            }
            let warnings = crate::policy_warnings::warnings(&config, &registry);
            for warning in &warnings {
                println!("warning: {warning}");
            }
            match warnings.len() {
                0 => println!("{} is valid", file.display()),
                n => println!("{} is valid, with {n} warning{}", file.display(), if n == 1 { "" } else { "s" }),
            }
        }
        Command::Policy(PolicyCommand::Replay { file, since, agent, json }) => {
            let window = window_ms(&since)?;
            let draft = std::fs::read_to_string(&file).with_context(|| format!("cannot read agent config {}", file.display()))?;
            // The configuration the server runs: the same file it reads (or the demo's).
            let registry = crate::tools::Registry::builtin();
            let live = match &config.agents_path {
                Some(path) => crate::agents::AgentsConfig::load(path, &registry).context("the live configuration (COUNTERSIGN_AGENTS)")?,
                None => crate::agents::AgentsConfig::demo(&registry)?,
            };
            // Read-only: a mistyped path is said, not created, and another build's database is not migrated.
            let database = Database::open_read_only(&config.database_url).await?;
            database.follow_database_clock().await?;
            // The same path as the Policy page's (engine/src/replay/service.rs); an invalid draft is
            // said as `policy check` says it.
            let report = database.reads().replay(&draft, &file.display().to_string(), &live, window, agent.as_deref()).await.map_err(
                |err| match err {
                    crate::EngineError::Invalid { details, .. } => {
                        anyhow::anyhow!("{}", details.into_iter().map(|d| d.message).collect::<Vec<_>>().join("; "))
                    }
                    other => anyhow::Error::from(other),
                },
            )?;
            match json {
                true => println!("{}", serde_json::to_string_pretty(&report).context("failed to write the report as JSON")?),
                false => print!("{}", crate::replay::render_table(&report)),
            }
        }
        Command::Backup { file } => {
            let bytes = open_database(&config).await?.backup_to(&file).await?;
            println!("backed up to {} ({} KiB)", file.display(), bytes.div_ceil(1024));
        }
        Command::Audit(AuditCommand::Export) => {
            print!("{}", open_database(&config).await?.reads().audit_export().await?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::window_ms;

    #[test]
    fn since_takes_a_number_and_a_unit() {
        assert_eq!(window_ms("30d").unwrap(), 30 * 86_400_000);
        assert_eq!(window_ms("12h").unwrap(), 12 * 3_600_000);
        assert_eq!(window_ms("90m").unwrap(), 90 * 60_000);
        for bad in ["", "d", "30", "30s", "-1d", "0h", "1.5d", "30 d", "99999999999999999d", "1é", "+5d", " 5d"] {
            let err = window_ms(bad).unwrap_err().to_string();
            assert!(err.starts_with("--since takes a number and a unit: 30d, 12h or 90m"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn since_goes_back_at_most_365_days() {
        assert_eq!(window_ms("365d").unwrap(), 365 * 86_400_000);
        assert_eq!(window_ms("8760h").unwrap(), 365 * 86_400_000);
        for far in ["366d", "8761h", "525601m", "3000000d", "106751991167d"] {
            let err = window_ms(far).unwrap_err().to_string();
            assert_eq!(err, format!("--since must be between 1m and 365d (got {far:?})"));
        }
    }
}
