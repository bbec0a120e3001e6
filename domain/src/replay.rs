//! The report of a policy replay (docs/config.md, "The policy's life"): what a draft
//! configuration would have changed on the calls recorded in a window. The engine writes it
//! (engine/src/replay.rs); `countersign policy replay --json`, `POST /api/policy/replay` and the
//! admins' Policy page (app/src/pages/policy.rs) read the same shape.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What the draft would have changed in the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayReport))]
pub struct Report {
    pub window: Window,
    pub live_version: String,
    pub draft_version: String,
    pub summary: Summary,
    /// Each UTC day of the window, oldest first, days without calls included: the calls a human
    /// was asked about then, and those the draft would ask about (they add up to
    /// `summary.asked_recorded` and `summary.asked_draft`).
    pub per_day: Vec<DayStops>,
    /// Each gate of the draft, in the file's order: the calls it would stop.
    pub gates: Vec<GateStops>,
    /// The draft's gates whose rule could not be evaluated for some calls, in the order met.
    #[serde(default)]
    pub rule_errors: Vec<RuleErrors>,
    /// Beside `gates`: the calls each gate asked a human about, as recorded (a call asked under
    /// several gates counts for each), by the gate's name.
    pub recorded_by_gate: BTreeMap<String, u64>,
    pub new_friction: Friction,
    pub new_risk: NewRisk,
    pub load: Load,
    pub grants_ended: Vec<EndedGrant>,
    /// Calls that ran or were asked, and whose tool the draft's agent no longer has (or whose
    /// arguments its schema no longer takes), by tool.
    pub no_longer_possible: BTreeMap<String, u64>,
    /// Calls left out, by tool: their tool's metadata is not known here (an MCP tool).
    pub not_replayed: BTreeMap<String, u64>,
    /// What to keep in mind when reading the numbers.
    pub notes: Vec<String>,
    /// The draft's warnings, as `countersign policy check` gives them.
    pub warnings: Vec<String>,
}

/// One UTC day of the window: the calls asked about then and under the draft.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayDayStops))]
pub struct DayStops {
    /// `2026-12-03`.
    pub day: String,
    /// Calls a human was asked about that day.
    pub recorded: u64,
    /// Of that day's calls, those the draft would ask a human about.
    pub draft: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayWindow))]
pub struct Window {
    /// RFC 3339.
    pub since: String,
    pub until: String,
    pub days: f64,
    pub agent: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplaySummary))]
pub struct Summary {
    /// Calls recorded in the window.
    pub calls: u64,
    /// Of them, those put to the draft (the rest: `not_replayed`).
    pub replayed: u64,
    /// Calls a human was asked about.
    pub asked_recorded: u64,
    /// Calls the draft would ask a human about.
    pub asked_draft: u64,
    pub new_friction: u64,
    pub now_unasked: u64,
    /// Asked then and under the draft, with other deciders or other rules for them (four-eyes, a
    /// fresh sign-in, a reason, no edits, in the chat or on a card), or approved by the requester
    /// where the draft asks four-eyes.
    pub deciders_change: u64,
    pub no_longer_possible: u64,
    pub grants_ended: u64,
    /// Calls for which a rule of the draft's gates could not be evaluated.
    #[serde(default)]
    pub rule_errors: u64,
}

/// One gate of the draft and the calls it would stop (a shadow gate: that it would record).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayGateStops))]
pub struct GateStops {
    pub gate: String,
    /// `enforce` or `shadow`.
    pub mode: String,
    pub calls: u64,
    /// Of them, calls that ran without asking.
    pub ran_unasked: u64,
    pub by_tool: BTreeMap<String, u64>,
    pub by_agent: BTreeMap<String, u64>,
}

/// A gate of the draft whose rule could not be evaluated for some calls (a missing field, a type
/// error). As at runtime, the gate stops such a call all the same (fail-closed), unless the
/// agent is `fail_open`: then it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayRuleErrors))]
pub struct RuleErrors {
    pub gate: String,
    pub calls: u64,
    /// Of them, calls the gate stopped all the same.
    pub stopped: u64,
    /// The newest one's error, as the rule's evaluation gave it (`rule: error`).
    pub error: String,
    /// The newest one.
    pub example: Example,
}

/// Calls no human was asked about that the draft would stop.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayFriction))]
pub struct Friction {
    pub calls: u64,
    /// By the requirement that would stop them (gates that apply together joined with " + ").
    pub by_requirement: BTreeMap<String, u64>,
    pub by_tool: BTreeMap<String, u64>,
    /// The newest few.
    pub examples: Vec<Example>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayNewRisk))]
pub struct NewRisk {
    pub unasked: Unasked,
    pub deciders: DecidersChange,
}

/// Calls a human was asked about (or that were refused without asking) that would run unasked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayUnasked))]
pub struct Unasked {
    pub calls: u64,
    /// By what happened to them: approved, rejected, … or "refused again".
    pub by_outcome: BTreeMap<String, u64>,
    pub by_tool: BTreeMap<String, u64>,
    pub examples: Vec<Example>,
}

/// Calls asked then and under the draft, whose deciders would change: who may decide, how many,
/// and what the draft asks of them beyond a click.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayDecidersChange))]
pub struct DecidersChange {
    pub calls: u64,
    /// Who could decide them then and who would have to, with the rules for them ("anyone; not
    /// the requester (four-eyes)"), most calls first. A call its requester approved, where the
    /// draft asks four-eyes, says so on the recorded side ("anyone, approved by the requester").
    pub changes: Vec<Change>,
    pub examples: Vec<Example>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayChange))]
pub struct Change {
    pub recorded: String,
    pub draft: String,
    pub calls: u64,
}

/// A call, as a list of examples shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayExample))]
pub struct Example {
    /// RFC 3339.
    pub at: String,
    pub call_id: String,
    pub conversation_id: String,
    pub agent: String,
    pub tool: String,
    /// Its arguments as compact JSON, cut to 60 characters.
    pub args: String,
    /// What happened, and what the draft would do.
    pub recorded: String,
    pub draft: String,
}

/// The deciders' load: approvals asked, recorded and under the draft.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayLoad))]
pub struct Load {
    pub recorded: Rate,
    pub draft: Rate,
    /// By person (recorded: who decided; the draft: the people its gates name), group, the
    /// admins, and "anyone" (gates that name no approvers).
    pub deciders: Vec<DeciderLoad>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayDeciderLoad))]
pub struct DeciderLoad {
    pub who: String,
    /// `person`, `group`, `admins` or `anyone`.
    pub kind: String,
    pub recorded: Rate,
    pub draft: Rate,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayRate))]
pub struct Rate {
    pub approvals: u64,
    /// Over the window's days.
    pub per_day: f64,
    /// The clock hour (UTC) in which most of them were asked.
    pub busiest_hour: Option<BusyHour>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayBusyHour))]
pub struct BusyHour {
    /// RFC 3339: the hour's start.
    pub starts: String,
    pub approvals: u64,
}

/// A standing grant that would stop covering calls under the draft.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReplayEndedGrant))]
pub struct EndedGrant {
    pub id: String,
    pub conversation_id: String,
    pub agent: String,
    pub tool: String,
    pub gate: String,
    pub created_by: String,
    /// RFC 3339.
    pub created_at: String,
    pub why: String,
}
