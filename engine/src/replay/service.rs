//! The replay as its doors ask for it — `countersign policy replay` and the admins' Policy page
//! (`POST /api/policy/replay`, `GET /api/policy`): the draft's text validated as start-up validates
//! a file, the recorded calls and the standing grants read, and the report made off the async
//! runtime; and the configuration in force as the page shows it beside its form.

use std::path::Path;

use anyhow::Context;
use domain::wire::{DraftInShadow, FieldProblem, LivePolicy};

use super::{Directory, RecordedCall, Replay, Report, replay};
use crate::{
    Error, Result,
    agents::AgentsConfig,
    clock::{now_ms, rfc3339},
    store::{Store, grants, groups, recorded, shadow_hits, users},
    tools::Registry,
};

/// Replays `draft`, a configuration's text (`origin` names it in its problems), against the calls
/// recorded in the last `window_ms` (only `agent`'s, when given), with `live` as the configuration
/// in force. A draft that is not a valid configuration is [`Error::Invalid`] with its problem at
/// `/draft`, as `countersign policy check` says it; an agent neither configuration has and no
/// call in the window was made by, at `/agent`. Reads only; on the database's clock, which the
/// caller follows (the server always does; the command line asks it first).
pub async fn run(store: &Store, draft: &str, origin: &str, live: &AgentsConfig, window_ms: i64, agent: Option<&str>) -> Result<Report> {
    let draft = read_draft(draft, origin).await?;
    let mut registry = Registry::builtin();
    // The `ask_<worker>` tools of both, so that a delegated call is judged under either.
    for tool in live.delegate_tools().into_iter().chain(draft.delegate_tools()) {
        registry.register(tool);
    }
    let until_ms = now_ms();
    let since_ms = until_ms.saturating_sub(window_ms);
    let calls = recorded::calls(store, since_ms, agent).await?;
    if let Some(name) = agent {
        known_agent(name, &draft, live, &calls)?;
    }
    let standing = grants::standing(store).await?;
    let directory = directory(store).await?;
    let (live, agent) = (live.clone(), agent.map(str::to_owned));
    // Pure and bound by the processor (100,000 calls take a few tenths of a second on one core,
    // docs/benchmarks.md §10): on a blocking thread, not on the runtime's workers.
    let report = tokio::task::spawn_blocking(move || {
        replay(&Replay {
            draft: &draft,
            live: &live,
            registry: &registry,
            calls: &calls,
            grants: &standing,
            directory: &directory,
            since_ms,
            until_ms,
            agent: agent.as_deref(),
        })
    })
    .await
    .context("the replay stopped by panicking")?;
    Ok(report)
}

/// `text` read as a configuration, as start-up reads a file, off the runtime's workers: a large
/// draft's rules take a while to compile (each on a thread of its own with a large stack,
/// engine/src/agents/rule_limits.rs). One that is not valid is [`Error::Invalid`] at `/draft`.
async fn read_draft(text: &str, origin: &str) -> Result<AgentsConfig> {
    let (text, origin) = (text.to_owned(), origin.to_owned());
    let read = tokio::task::spawn_blocking(move || AgentsConfig::parse(&text, &origin, &Registry::builtin()))
        .await
        .context("reading the draft stopped by panicking")?;
    read.map_err(|err| Error::Invalid {
        message: "the draft is not a valid agent configuration".to_owned(),
        details: vec![FieldProblem::new("/draft", format!("{err:#}"))],
    })
}

/// An agent to replay is one the draft or the configuration in force has, or that made calls in
/// the window (`calls`, read for it alone): another name is a mistake, not a report of nothing
/// under another agent's gates.
fn known_agent(name: &str, draft: &AgentsConfig, live: &AgentsConfig, calls: &[RecordedCall]) -> Result<()> {
    if draft.get(name).is_some() || live.get(name).is_some() || !calls.is_empty() {
        return Ok(());
    }
    Err(Error::invalid(
        "/agent",
        format!("no agent {name:?} in the draft, in the configuration in force or among the calls recorded in the window"),
    ))
}

/// Who approver names stand for in the database: the accounts that may sign in and the groups
/// kept there, as the server reads them when it resolves a gate's approvers.
async fn directory(store: &Store) -> anyhow::Result<Directory> {
    let users = users::enabled_names(store).await?;
    let groups = groups::list(store).await?.into_iter().map(|g| (g.name, g.members)).collect();
    Ok(Directory { users, groups })
}

/// The configuration in force (`config`, read from `path` at start-up; none: the built-in demo
/// one) as the Policy page shows it: its text, version and agents, and `policy check`'s warnings.
pub fn in_force(config: &AgentsConfig, path: Option<&Path>) -> LivePolicy {
    LivePolicy {
        path: path.map(|p| p.display().to_string()),
        version: config.version.clone(),
        text: config.text.clone(),
        agents: config.agents.iter().map(|a| a.name.clone()).collect(),
        // With the built-in tools' metadata, as start-up and `policy check` give them.
        warnings: crate::policy_warnings::warnings(config, &Registry::builtin()),
        draft_in_shadow: None,
    }
}

/// The draft in shadow (`draft`, read from `path` at start-up; engine/src/draft.rs) as the Policy
/// page shows it beside the configuration in force, its hits not counted yet
/// ([`count_draft_hits`]): they are counted from `started_ms`, when the server started with it.
pub fn draft_in_shadow(draft: &AgentsConfig, path: &Path, started_ms: i64) -> DraftInShadow {
    DraftInShadow {
        path: path.display().to_string(),
        version: draft.version.clone(),
        text: draft.text.clone(),
        since: rfc3339(started_ms),
        hits: 0,
        by_gate: Default::default(),
    }
}

/// `live` with its draft in shadow's hits counted, if it has one: the `draft:…` shadow hits this
/// draft (by its version) recorded since `started_ms` (when the server started with it), by gate.
pub async fn count_draft_hits(store: &Store, mut live: LivePolicy, started_ms: i64) -> anyhow::Result<LivePolicy> {
    if let Some(draft) = live.draft_in_shadow.as_mut() {
        let counts = shadow_hits::draft_counts(store, started_ms, &draft.version).await?;
        draft.by_gate = counts.into_iter().map(|(gate, n)| (gate, u64::try_from(n).unwrap_or(0))).collect();
        draft.hits = draft.by_gate.values().sum();
    }
    Ok(live)
}
