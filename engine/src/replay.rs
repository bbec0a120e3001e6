//! Trying a policy on the past (`countersign policy replay DRAFT.toml`, docs/config.md, "The
//! policy's life"): every call recorded in a window is put to the draft configuration with the
//! engine's own functions — [`policy::check`] for what the call requires and [`policy::classify`]
//! for the verdict, as the task driver does (orchestrator/task_driver/model_step.rs) — and compared
//! with what happened: whether a human was asked, who decided, who could have. Pure: the calls come
//! loaded (store/recorded.rs), no model is asked, no tool runs, nothing is written, and the
//! window's times are the caller's. Its two doors, `countersign policy replay` and the admins'
//! Policy page (`POST /api/policy/replay`), both go through [`run`] (replay/service.rs), which
//! reads them.

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Write as _,
};

use domain::{
    rules::{Approvers, DecisionRules, Share},
    wire::FieldProblem,
};

pub use crate::store::{
    grants::StandingGrant,
    recorded::{Asked, Granted, RecordedCall, Then},
};
use crate::{
    agents::{Agent, AgentsConfig, Gate, GateRule},
    approver_names::{ApproverName, parse_approver},
    clock::rfc3339,
    policy::{self, Requirement, RuleError, Spent, Verdict},
    tools::{self, Registry},
};

mod people;
mod service;

pub use people::Directory;
pub use service::{count_draft_hits, draft_in_shadow, in_force, run};

/// What to replay: the draft, the configuration in force, and what was recorded in the window.
pub struct Replay<'a> {
    pub draft: &'a AgentsConfig,
    pub live: &'a AgentsConfig,
    /// The tools' metadata (the built-in tools and the configurations' `ask_<worker>` tools).
    pub registry: &'a Registry,
    pub calls: &'a [RecordedCall],
    /// The standing grants in force now.
    pub grants: &'a [StandingGrant],
    /// Who approver names stand for in the database (accounts, stored groups).
    pub directory: &'a Directory,
    /// The window (Unix ms), and the one agent it is about, if any.
    pub since_ms: i64,
    pub until_ms: i64,
    pub agent: Option<&'a str>,
}

// What the draft would have changed: the report's shape is the domain's (domain/src/replay.rs),
// which the browser reads too.
pub use domain::replay::{
    BusyHour, Change, DayStops, DeciderLoad, DecidersChange, EndedGrant, Example, Friction, GateStops, Load, NewRisk, Rate, Report,
    RuleErrors, Summary, Unasked, Window,
};

/// The longest window a replay looks back over, in days, at both doors: a report lists every day
/// of its window, so a window without bound would be a report without bound.
pub const MAX_WINDOW_DAYS: u32 = 365;

/// How many examples each list keeps.
const EXAMPLES: usize = 5;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

/// Puts every recorded call to the draft and says what would change.
pub fn replay(input: &Replay<'_>) -> Report {
    let mut tally = Tally::new(input);
    for (index, call) in input.calls.iter().enumerate() {
        tally.add(index, call);
    }
    tally.report()
}

/// What a configuration does with a recorded call.
enum Now<'a> {
    /// Its tool is not in the registry (an MCP tool: its metadata is known only once its server
    /// is connected, and replaying connects to nothing).
    Unknown,
    /// Fails the checks before any gate: its agent lacks the tool, or the arguments break its schema.
    Invalid,
    /// Runs unasked; the shadow gates that would record it (each of them, whatever their order).
    Runs { shadows: Vec<&'a Gate> },
    /// A human decides.
    Asks(Requirement<'a>),
    /// Refused without asking: a human refused the same call before.
    RefusedAgain(Requirement<'a>),
}

/// The agent that drives a call under `config`: its own, or the default one for a conversation
/// whose agent the configuration does not have (as the task driver does).
fn agent_of<'a>(config: &'a AgentsConfig, name: &str) -> &'a Agent {
    config.get(name).unwrap_or_else(|| config.default_agent())
}

/// A plan's steps must be tools of its agent too (orchestrator/task_driver/model_step.rs).
fn violations(agent: &Agent, registry: &Registry, call: &RecordedCall, schema: &[FieldProblem]) -> Vec<FieldProblem> {
    let mut violations = schema.to_vec();
    if call.tool == tools::plan::NAME {
        violations.extend(tools::plan::step_violations(&call.args, &agent.tools, registry));
    }
    violations
}

/// What `config` does with `call`, by the task driver's steps
/// (orchestrator/task_driver/model_step.rs) less the grants: each configuration version has its
/// own. `schema`: how the arguments break their tool's schema (the same under every configuration).
/// With it, the enforcing gates' rules that could not be evaluated for the call, which
/// `policy::check` has already treated as the engine does (fail-closed: the gate stops the call; a
/// `fail_open` agent lets it run).
fn judge<'a>(config: &'a AgentsConfig, registry: &Registry, call: &RecordedCall, schema: &[FieldProblem]) -> (Now<'a>, Vec<RuleError<'a>>) {
    let agent = agent_of(config, &call.agent);
    // An answer is a call only while a final_response gate holds it; otherwise it is shown as written.
    if call.tool == tools::answer::NAME {
        let now = match agent.final_response_gate() {
            Some(gate) => Now::Asks(Requirement::one(gate)),
            None => Now::Runs { shadows: Vec::new() },
        };
        return (now, Vec::new());
    }
    let Some(tool) = registry.get(&call.tool) else { return (Now::Unknown, Vec::new()) };
    let known_tool = agent.tools.contains(&call.tool);
    let spent = Spent { task: call.spent_task, conversation: call.spent_conversation };
    let facts = policy::Call {
        tool: tool.spec(),
        args: &call.args,
        user: call.requester.as_deref().unwrap_or_default(),
        confidence: call.confidence,
        spent: &spent,
    };
    let policy::Gating { requirement, shadows, rule_errors } = match known_tool {
        true => policy::check(agent, &facts),
        false => policy::Gating { requirement: None, shadows: Vec::new(), rule_errors: Vec::new() },
    };
    let refused_again = match policy::classify(policy::Facts {
        tool: &call.tool,
        known_tool,
        violations: violations(agent, registry, call, schema),
        gate: requirement.as_ref().map(|r| &r.gate),
        // The refusal is the recorded one: the call was refused again then, so a human had refused it.
        refused_before: matches!(call.then, Then::RefusedAgain).then(String::new),
        grant: None,
    }) {
        Verdict::Invalid { .. } => return (Now::Invalid, Vec::new()),
        Verdict::Run { .. } => return (Now::Runs { shadows }, rule_errors),
        Verdict::RepeatRefused { .. } => true,
        Verdict::Ask { .. } => false,
    };
    let requirement = requirement.expect("BUG: a gate stops the call");
    let now = match refused_again {
        true => Now::RefusedAgain(requirement),
        false => Now::Asks(requirement),
    };
    (now, rule_errors)
}

/// Whether `call` passes the checks before any gate under `config` (its agent has the tool and
/// its arguments fit): `classify` with no gate runs it unless it is invalid.
fn passes(config: &AgentsConfig, registry: &Registry, call: &RecordedCall, schema: &[FieldProblem]) -> bool {
    let agent = agent_of(config, &call.agent);
    if call.tool == tools::answer::NAME {
        return true;
    }
    let verdict = policy::classify(policy::Facts {
        tool: &call.tool,
        known_tool: registry.get(&call.tool).is_some() && agent.tools.contains(&call.tool),
        violations: violations(agent, registry, call, schema),
        gate: None,
        refused_before: None,
        grant: None,
    });
    !matches!(verdict, Verdict::Invalid { .. })
}

/// "anyone", "root", "2 of finance", "finance and root": who must decide, as the gates name them
/// ([`Approvers::label`]; `approvers`: `None` when they name none, with each gate's share when
/// several apply). `resolved`: each set of names is followed by who it stands for where that is
/// not plain from the names ([`stands_for`]), so that a group whose members change, or a name
/// that stands for no one, changes the label too.
fn who_decides(approvers: Option<&Approvers>, quorum: u32, resolved: bool) -> String {
    let Some(approvers) = approvers.filter(|a| !a.names.is_empty() || !a.each.is_empty()) else { return anyone(quorum) };
    let set = |names: &[String], people: &[String], admins: bool| match resolved {
        true => stands_for(names, people, admins),
        false => names_label(names),
    };
    let shares: Vec<String> = approvers
        .each
        .iter()
        .map(|s| if s.names.is_empty() { anyone(s.quorum) } else { of(s.quorum, set(&s.names, &s.people, s.admins)) })
        .collect();
    match shares.as_slice() {
        [] => of(quorum, set(&approvers.names, &approvers.people, approvers.admins)),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "anyone", "2 people": a gate that names no approvers.
fn anyone(quorum: u32) -> String {
    if quorum > 1 { format!("{quorum} people") } else { "anyone".to_owned() }
}

/// "2 of finance".
fn of(quorum: u32, who: String) -> String {
    if quorum > 1 { format!("{quorum} of {who}") } else { who }
}

/// "finance, root or an admin": approver names as a card says them.
fn names_label(names: &[String]) -> String {
    let admins = names.iter().any(|n| n == "role:admin");
    Approvers { names: names.to_vec(), people: Vec::new(), admins, each: Vec::new() }.label()
}

/// Approver names, and who they stand for where that is not plain from them (a group, a user
/// without an account): "root", "finance (bob, dora)", "nobody (no one, so an admin)".
fn stands_for(names: &[String], people: &[String], admins: bool) -> String {
    let label = names_label(names);
    let users: Vec<&str> = names.iter().filter_map(|n| n.strip_prefix("user:")).collect();
    let plain = !names.iter().any(|n| n.starts_with("group:"))
        && users.len() == people.len()
        && users.iter().all(|u| people.iter().any(|p| p.eq_ignore_ascii_case(u)));
    if plain {
        return label;
    }
    let mut who: Vec<&str> = people.iter().map(String::as_str).collect();
    who.sort_by_key(|p| p.to_lowercase());
    // The admins named as such are in the label already; these are those no one else left.
    let fell_to_admins = admins && !names.iter().any(|n| n == "role:admin");
    let who = match (who.is_empty(), fell_to_admins) {
        (false, _) => who.join(", "),
        (true, true) => "no one, so an admin".to_owned(),
        (true, false) => "no one".to_owned(),
    };
    format!("{label} ({who})")
}

/// What deciding a call requires, as the report compares it: `who` ([`who_decides`]), then each
/// rule a decider must meet beyond that — four-eyes, a fresh sign-in, a reason to reject, no
/// edits. A call asked in the chat is the requester's to answer there (such a gate names no
/// approvers and no quorum, agents/validate.rs).
fn needs(who: String, rules: &DecisionRules, in_chat: bool) -> String {
    let mut parts = vec![if in_chat { "the requester, in the chat".to_owned() } else { who }];
    if rules.separate_requester {
        parts.push("not the requester (four-eyes)".to_owned());
    }
    if let Some(secs) = rules.reauthenticate_secs {
        parts.push(format!("a sign-in within {secs} s"));
    }
    if rules.require_reason {
        parts.push("a reason to reject".to_owned());
    }
    if !rules.allow_modification {
        parts.push("no edits".to_owned());
    }
    parts.join("; ")
}

/// A requirement's approvers as its gates name them, not resolved: their union and, when several
/// gates name some, each gate's share.
fn named_approvers(requirement: &Requirement<'_>) -> Option<Approvers> {
    let names = &requirement.gate.approvers;
    let share = |(gate, names, quorum): (&str, &[String], u32)| Share {
        gate: gate.to_owned(),
        quorum,
        names: names.to_vec(),
        people: Vec::new(),
        admins: false,
    };
    let each: Vec<Share> = requirement.shares().into_iter().map(share).collect();
    (!names.is_empty()).then(|| Approvers { names: names.clone(), people: Vec::new(), admins: false, each })
}

/// What deciding a call `requirement` stops needs, its approvers as the gates name them: for a
/// draft's shadow hits, where both configurations' requirements are compared as the call is
/// proposed (engine/src/draft.rs).
pub(crate) fn decides(requirement: &Requirement<'_>) -> String {
    let gate = &requirement.gate;
    needs(who_decides(named_approvers(requirement).as_ref(), gate.rules.quorum, false), &gate.rules, gate.in_chat)
}

/// What deciding a call needed when it was asked, its approvers as they stood then.
fn recorded_needs(asked: &Asked) -> String {
    needs(who_decides(asked.approvers.as_ref(), asked.rules.quorum, true), &asked.rules, asked.in_chat)
}

/// Whether the requester's own approval counted toward the call's: one that four-eyes refuses.
fn approved_by_requester(call: &RecordedCall, asked: &Asked) -> bool {
    let Some(requester) = call.requester.as_deref() else { return false };
    asked.outcome == "approved" && asked.deciders.iter().any(|d| d.eq_ignore_ascii_case(requester))
}

/// Whose load an approval is: a person, a group, the admins, or anyone who sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    Person,
    Group,
    Admins,
    Anyone,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Person => "person",
            Self::Group => "group",
            Self::Admins => "admins",
            Self::Anyone => "anyone",
        }
    }
}

/// An approver as a gate names it (`user:bob`, `group:finance`, `role:admin`).
fn named(name: &str) -> (Kind, &str) {
    match name.split_once(':') {
        Some(("user", user)) => (Kind::Person, user),
        Some(("group", group)) => (Kind::Group, group),
        _ => (Kind::Admins, "admins"),
    }
}

/// Approvals asked, and by the hour.
#[derive(Default)]
struct Busy {
    approvals: u64,
    hours: HashMap<i64, u64>,
}

impl Busy {
    fn add(&mut self, at_ms: i64) {
        self.approvals += 1;
        *self.hours.entry(at_ms.div_euclid(HOUR_MS)).or_default() += 1;
    }

    fn rate(&self, days: f64) -> Rate {
        // The earliest of the busiest hours.
        let busiest = self.hours.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
        Rate {
            approvals: self.approvals,
            per_day: per_day(self.approvals, days),
            busiest_hour: busiest.map(|(hour, n)| BusyHour { starts: rfc3339(hour * HOUR_MS), approvals: *n }),
        }
    }
}

fn per_day(n: u64, days: f64) -> f64 {
    if days > 0.0 { (n as f64 / days * 100.0).round() / 100.0 } else { 0.0 }
}

#[derive(Default)]
struct Deciders {
    recorded: Busy,
    draft: Busy,
}

struct GateRow<'a> {
    name: &'a str,
    shadow: bool,
    calls: u64,
    ran_unasked: u64,
    by_tool: HashMap<&'a str, u64>,
    by_agent: HashMap<&'a str, u64>,
}

/// A gate of the draft whose rule could not be evaluated for some calls.
struct Unevaluated<'a> {
    gate: &'a str,
    calls: u64,
    /// Of them, calls the gate stopped all the same (fail-closed).
    stopped: u64,
    /// The newest such call (its index) and its error.
    example: usize,
    error: String,
}

/// Calls of one list (by their index), counted by a key and by tool.
#[derive(Default)]
struct Listed<'a, K> {
    calls: Vec<usize>,
    by: HashMap<K, u64>,
    by_tool: HashMap<&'a str, u64>,
}

impl<'a, K: std::hash::Hash + Eq> Listed<'a, K> {
    fn add(&mut self, index: usize, key: K, tool: &'a str) {
        self.calls.push(index);
        *self.by.entry(key).or_default() += 1;
        *self.by_tool.entry(tool).or_default() += 1;
    }
}

/// The counts, as the calls go by.
struct Tally<'a, 'r> {
    input: &'r Replay<'a>,
    summary: Summary,
    gates: Vec<GateRow<'a>>,
    /// By requirement.
    friction: Listed<'a, String>,
    /// By what happened.
    unasked: Listed<'a, &'a str>,
    /// By who could decide then and who would have to.
    deciders: Listed<'a, (String, String)>,
    asked_recorded: Busy,
    asked_draft: Busy,
    by_who: HashMap<(Kind, &'a str), Deciders>,
    no_longer_possible: HashMap<&'a str, u64>,
    not_replayed: HashMap<&'a str, u64>,
    agents_gone: HashMap<&'a str, u64>,
    without_confidence: u64,
    /// Calls asked, by the gates that asked them then.
    recorded_by_gate: HashMap<&'a str, u64>,
    /// By UTC day (days since 1970): calls asked then, and under the draft.
    days: HashMap<i64, (u64, u64)>,
    /// Per gate, in the order met: calls its rule could not be evaluated for.
    unevaluated: Vec<Unevaluated<'a>>,
    /// Calls that ran under a grant the draft keeps (made under its version).
    granted_still: u64,
}

impl<'a, 'r> Tally<'a, 'r> {
    fn new(input: &'r Replay<'a>) -> Self {
        let agents: Vec<&'a Agent> = match input.agent {
            Some(name) => vec![agent_of(input.draft, name)],
            None => input.draft.agents.iter().collect(),
        };
        let mut gates: Vec<GateRow<'a>> = Vec::new();
        for gate in agents.into_iter().flat_map(|a| &a.gates).filter(|g| g.rule != GateRule::Disabled) {
            if !gates.iter().any(|g| g.name == gate.name) {
                let (by_tool, by_agent) = (HashMap::new(), HashMap::new());
                gates.push(GateRow { name: &gate.name, shadow: gate.shadow, calls: 0, ran_unasked: 0, by_tool, by_agent });
            }
        }
        Self {
            input,
            summary: Summary::default(),
            gates,
            friction: Listed::default(),
            unasked: Listed::default(),
            deciders: Listed::default(),
            asked_recorded: Busy::default(),
            asked_draft: Busy::default(),
            by_who: HashMap::new(),
            no_longer_possible: HashMap::new(),
            not_replayed: HashMap::new(),
            agents_gone: HashMap::new(),
            without_confidence: 0,
            recorded_by_gate: HashMap::new(),
            days: HashMap::new(),
            unevaluated: Vec::new(),
            granted_still: 0,
        }
    }

    fn stopped_by(&mut self, gate: &'a Gate, call: &'a RecordedCall, ran_unasked: bool) {
        let index = match self.gates.iter().position(|g| g.name == gate.name) {
            Some(index) => index,
            None => {
                // A gate of an agent the window's agent filter left out.
                let (by_tool, by_agent) = (HashMap::new(), HashMap::new());
                self.gates.push(GateRow { name: &gate.name, shadow: gate.shadow, calls: 0, ran_unasked: 0, by_tool, by_agent });
                self.gates.len() - 1
            }
        };
        let row = &mut self.gates[index];
        row.calls += 1;
        row.ran_unasked += u64::from(ran_unasked);
        *row.by_tool.entry(&call.tool).or_default() += 1;
        *row.by_agent.entry(&call.agent).or_default() += 1;
    }

    fn add(&mut self, index: usize, call: &'a RecordedCall) {
        let (draft, live, registry) = (self.input.draft, self.input.live, self.input.registry);
        self.summary.calls += 1;
        // Arguments that broke the schema failed without asking anyone; others were checked when asked.
        let schema = match (&call.then, registry.get(&call.tool)) {
            (Then::NotAsked, Some(tool)) => tools::schema::violations(&tool.spec().input_schema, &call.args),
            _ => Vec::new(),
        };
        let (now, rule_errors) = judge(draft, registry, call, &schema);
        if matches!(now, Now::Unknown) {
            *self.not_replayed.entry(&call.tool).or_default() += 1;
            return;
        }
        self.summary.replayed += 1;
        if !rule_errors.is_empty() {
            self.unevaluated(index, call, &now, rule_errors);
        }
        if draft.get(&call.agent).is_none() {
            *self.agents_gone.entry(&call.agent).or_default() += 1;
        }
        if call.confidence.is_none() && agent_of(draft, &call.agent).wants_confidence() {
            self.without_confidence += 1;
        }
        let ran_then = match &call.then {
            Then::NotAsked => passes(live, registry, call, &schema),
            Then::RefusedAgain | Then::Asked(_) => true,
        };
        // An agent's question is answered by whoever asked the agent: no decider's load.
        let question = call.tool == tools::ask::NAME;
        let day = call.at_ms.div_euclid(DAY_MS);
        if let Then::Asked(asked) = &call.then {
            self.summary.asked_recorded += 1;
            self.days.entry(day).or_default().0 += 1;
            for gate in asked.gate.split(" + ").filter(|g| !g.is_empty()) {
                *self.recorded_by_gate.entry(gate).or_default() += 1;
            }
        }
        if let Then::Asked(asked) = &call.then
            && !question
        {
            self.asked_recorded.add(call.at_ms);
            for person in &asked.deciders {
                self.by_who.entry((Kind::Person, person.as_str())).or_default().recorded.add(call.at_ms);
            }
            // Groups and the admins as its gates named them; the people are who decided, above.
            let names = asked.approvers.as_ref().map(|a| a.names.as_slice()).unwrap_or_default();
            for name in names.iter().map(|n| named(n.as_str())).filter(|(kind, _)| *kind != Kind::Person) {
                self.by_who.entry(name).or_default().recorded.add(call.at_ms);
            }
            if names.is_empty() {
                self.by_who.entry((Kind::Anyone, "anyone")).or_default().recorded.add(call.at_ms);
            }
        }
        let ran_unasked = matches!(call.then, Then::NotAsked);
        match (&call.then, now) {
            (_, Now::Unknown) => {}
            (then, Now::Invalid) => {
                if ran_then && !matches!(then, Then::RefusedAgain) {
                    self.summary.no_longer_possible += 1;
                    *self.no_longer_possible.entry(&call.tool).or_default() += 1;
                }
            }
            (then, Now::Runs { shadows }) => {
                for gate in shadows {
                    self.stopped_by(gate, call, ran_unasked);
                }
                let outcome = match then {
                    Then::NotAsked => return,
                    Then::RefusedAgain => "refused again",
                    Then::Asked(asked) => asked.outcome.as_str(),
                };
                self.summary.now_unasked += 1;
                self.unasked.add(index, outcome, &call.tool);
            }
            (_, Now::RefusedAgain(requirement)) => {
                for &gate in &requirement.gates {
                    self.stopped_by(gate, call, ran_unasked);
                }
            }
            (Then::NotAsked, Now::Asks(requirement)) if call.granted.as_ref().is_some_and(|g| self.keeps(g)) => {
                // The grant that let it run would let it run under the draft too: no one is asked.
                self.granted_still += 1;
                for &gate in &requirement.gates {
                    self.stopped_by(gate, call, ran_unasked);
                }
            }
            (then, Now::Asks(requirement)) => {
                self.summary.asked_draft += 1;
                self.days.entry(day).or_default().1 += 1;
                for &gate in &requirement.gates {
                    self.stopped_by(gate, call, ran_unasked);
                }
                if !question {
                    self.asked_draft.add(call.at_ms);
                    for who in self.draft_load(&requirement) {
                        self.by_who.entry(who).or_default().draft.add(call.at_ms);
                    }
                }
                match then {
                    Then::NotAsked => {
                        self.summary.new_friction += 1;
                        self.friction.add(index, requirement.gate.name.clone(), &call.tool);
                    }
                    Then::Asked(asked) => {
                        let (then_who, draft_who) = (recorded_needs(asked), self.draft_needs(&requirement));
                        // Four-eyes in the draft refuses the approval the requester gave then.
                        let own = requirement.gate.rules.separate_requester && approved_by_requester(call, asked);
                        if then_who != draft_who || own {
                            let then_who = if own { format!("{then_who}, approved by the requester") } else { then_who };
                            self.summary.deciders_change += 1;
                            self.deciders.add(index, (then_who, draft_who), &call.tool);
                        }
                    }
                    // `classify` refuses a call refused before whenever a gate stops it.
                    Then::RefusedAgain => {}
                }
            }
        }
    }

    /// Whether the draft keeps the grant that let a call run: a grant covers calls only under the
    /// configuration version it was made under (engine/src/grant_cover.rs).
    fn keeps(&self, granted: &Granted) -> bool {
        granted.policy_version.as_deref() == Some(self.input.draft.version.as_str())
    }

    /// What deciding a call `requirement` stops needs under the draft, its approvers resolved as
    /// the server would resolve them (the draft's groups first, then the database's).
    fn draft_needs(&self, requirement: &Requirement<'_>) -> String {
        let gate = &requirement.gate;
        let approvers = self.input.directory.resolve_requirement(&self.input.draft.groups, requirement);
        needs(who_decides(approvers.as_ref(), gate.rules.quorum, true), &gate.rules, gate.in_chat)
    }

    /// Whose load a call the draft would ask is: each approver its gates name who stands for
    /// someone, the admins for a gate whose names all stand for no one (the server hands such a
    /// call to them), and "anyone" when its gates name none.
    fn draft_load(&self, requirement: &Requirement<'a>) -> Vec<(Kind, &'a str)> {
        let (directory, groups): (&'a Directory, _) = (self.input.directory, &self.input.draft.groups);
        let mut whose: Vec<(Kind, &'a str)> = Vec::new();
        for &gate in &requirement.gates {
            let mut someone = gate.approvers.is_empty();
            for name in &gate.approvers {
                let who = match parse_approver(name) {
                    Some(ApproverName::Admins) => Some((Kind::Admins, "admins")),
                    Some(ApproverName::User(user)) => directory.account(user).map(|person| (Kind::Person, person)),
                    Some(ApproverName::Group(group)) => (!directory.group_people(groups, group).is_empty()).then_some((Kind::Group, group)),
                    None => None,
                };
                let Some(who) = who else { continue };
                someone = true;
                if !whose.contains(&who) {
                    whose.push(who);
                }
            }
            if !someone && !whose.contains(&(Kind::Admins, "admins")) {
                whose.push((Kind::Admins, "admins"));
            }
        }
        if whose.is_empty() {
            whose.push((Kind::Anyone, "anyone"));
        }
        whose
    }

    /// Counts, per gate, a call whose rule could not be evaluated, and whether the gate stopped
    /// it all the same (fail-closed) or let it run (`fail_open`), as `now` says the engine would.
    fn unevaluated(&mut self, index: usize, call: &'a RecordedCall, now: &Now<'a>, errors: Vec<RuleError<'a>>) {
        self.summary.rule_errors += 1;
        let stopping: &[&Gate] = match now {
            Now::Asks(r) | Now::RefusedAgain(r) => r.gates.as_slice(),
            _ => &[],
        };
        // A gate whose rule has several failing parts (`any`) counts the call once.
        let mut by_gate: Vec<(&'a str, String)> = Vec::new();
        for RuleError { gate, error } in errors {
            match by_gate.iter_mut().find(|(name, _)| *name == gate.name) {
                Some((_, all)) => *all = format!("{all}; {error}"),
                None => by_gate.push((&gate.name, error)),
            }
        }
        let calls = self.input.calls;
        for (gate, error) in by_gate {
            let stopped = u64::from(stopping.iter().any(|g| g.name == gate));
            match self.unevaluated.iter_mut().find(|u| u.gate == gate) {
                Some(row) => {
                    row.calls += 1;
                    row.stopped += stopped;
                    if calls[row.example].at_ms <= call.at_ms {
                        (row.example, row.error) = (index, error);
                    }
                }
                None => self.unevaluated.push(Unevaluated { gate, calls: 1, stopped, example: index, error }),
            }
        }
    }

    /// The newest [`EXAMPLES`] of `indices`, as lists show them.
    fn examples(&self, mut indices: Vec<usize>) -> Vec<Example> {
        let calls = self.input.calls;
        indices.sort_by_key(|i| std::cmp::Reverse((calls[*i].at_ms, *i)));
        indices.truncate(EXAMPLES);
        indices.into_iter().map(|i| self.example(&calls[i])).collect()
    }

    fn example(&self, call: &RecordedCall) -> Example {
        let (draft, live, registry) = (self.input.draft, self.input.live, self.input.registry);
        let schema = match (&call.then, registry.get(&call.tool)) {
            (Then::NotAsked, Some(tool)) => tools::schema::violations(&tool.spec().input_schema, &call.args),
            _ => Vec::new(),
        };
        let recorded = match (&call.then, &call.granted) {
            (Then::NotAsked, _) if !passes(live, registry, call, &schema) => "failed its checks".to_owned(),
            (Then::NotAsked, Some(grant)) => format!("ran unasked under {}'s grant {}", grant.created_by, grant.id),
            (Then::NotAsked, None) => "ran unasked".to_owned(),
            (Then::RefusedAgain, _) => "refused again unasked".to_owned(),
            (Then::Asked(asked), _) => {
                let by = match asked.deciders.as_slice() {
                    [] => String::new(),
                    people => format!(" by {}", people.join(", ")),
                };
                format!("{}{by} under {} ({})", asked.outcome, asked.gate, recorded_needs(asked))
            }
        };
        let draft = match judge(draft, registry, call, &schema).0 {
            Now::Unknown => "not replayed".to_owned(),
            Now::Invalid => "fails its checks".to_owned(),
            Now::Runs { .. } => "runs unasked".to_owned(),
            Now::Asks(r) => format!("asked under {} ({}){}", r.gate.name, self.draft_needs(&r), self.why_asked(call, &r)),
            Now::RefusedAgain(r) => format!("refused again unasked under {}", r.gate.name),
        };
        let mut args = call.args.to_string();
        if args.chars().count() > 60 {
            args = args.chars().take(59).chain(['…']).collect();
        }
        Example {
            at: rfc3339(call.at_ms),
            call_id: call.call_id.clone(),
            conversation_id: call.conversation_id.clone(),
            agent: call.agent.clone(),
            tool: call.tool.clone(),
            args,
            recorded,
            draft,
        }
    }

    /// What an example of a change adds to "asked under …": why the grant that let the call run
    /// would not cover it, or that four-eyes refuses the approval its requester gave.
    fn why_asked(&self, call: &RecordedCall, requirement: &Requirement<'_>) -> String {
        match (&call.then, &call.granted) {
            (Then::NotAsked, Some(grant)) if !self.keeps(grant) => {
                format!("; the grant would not cover it: {}", lapses(self.input, call, grant))
            }
            (Then::Asked(asked), _) if requirement.gate.rules.separate_requester && approved_by_requester(call, asked) => {
                format!("; {}, the requester, could not approve it", call.requester.as_deref().unwrap_or_default())
            }
            _ => String::new(),
        }
    }

    fn report(mut self) -> Report {
        let input = self.input;
        let days = (input.until_ms - input.since_ms).max(0) as f64 / DAY_MS as f64;
        let grants_ended = ended_grants(input);
        self.summary.grants_ended = grants_ended.len() as u64;
        let owned = |map: HashMap<&str, u64>| map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<BTreeMap<_, _>>();
        let gates = std::mem::take(&mut self.gates)
            .into_iter()
            .map(|g| GateStops {
                gate: g.name.to_owned(),
                mode: if g.shadow { "shadow" } else { "enforce" }.to_owned(),
                calls: g.calls,
                ran_unasked: g.ran_unasked,
                by_tool: owned(g.by_tool),
                by_agent: owned(g.by_agent),
            })
            .collect();
        let friction = std::mem::take(&mut self.friction);
        let new_friction = Friction {
            calls: friction.calls.len() as u64,
            by_requirement: friction.by.into_iter().collect(),
            by_tool: owned(friction.by_tool),
            examples: self.examples(friction.calls),
        };
        let unasked = std::mem::take(&mut self.unasked);
        let unasked = Unasked {
            calls: unasked.calls.len() as u64,
            by_outcome: owned(unasked.by),
            by_tool: owned(unasked.by_tool),
            examples: self.examples(unasked.calls),
        };
        let changed = std::mem::take(&mut self.deciders);
        let mut changes: Vec<Change> = changed.by.into_iter().map(|((recorded, draft), calls)| Change { recorded, draft, calls }).collect();
        changes.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| (&a.recorded, &a.draft).cmp(&(&b.recorded, &b.draft))));
        let deciders = DecidersChange { calls: changed.calls.len() as u64, changes, examples: self.examples(changed.calls) };
        let mut by_who: Vec<((Kind, &str), Deciders)> = std::mem::take(&mut self.by_who).into_iter().collect();
        by_who.sort_by_key(|(who, _)| *who);
        let load = Load {
            recorded: self.asked_recorded.rate(days),
            draft: self.asked_draft.rate(days),
            deciders: by_who
                .into_iter()
                .map(|((kind, who), d)| DeciderLoad {
                    who: who.to_owned(),
                    kind: kind.as_str().to_owned(),
                    recorded: d.recorded.rate(days),
                    draft: d.draft.rate(days),
                })
                .collect(),
        };
        let rule_errors = std::mem::take(&mut self.unevaluated)
            .into_iter()
            .map(|u| RuleErrors {
                gate: u.gate.to_owned(),
                calls: u.calls,
                stopped: u.stopped,
                error: u.error,
                example: self.example(&input.calls[u.example]),
            })
            .collect();
        let notes = self.notes();
        let per_day = self.by_day();
        Report {
            window: Window {
                since: rfc3339(input.since_ms),
                until: rfc3339(input.until_ms),
                days: (days * 100.0).round() / 100.0,
                agent: input.agent.map(str::to_owned),
            },
            live_version: input.live.version.clone(),
            draft_version: input.draft.version.clone(),
            summary: self.summary,
            per_day,
            gates,
            rule_errors,
            recorded_by_gate: owned(self.recorded_by_gate),
            new_friction,
            new_risk: NewRisk { unasked, deciders },
            load,
            grants_ended,
            no_longer_possible: owned(self.no_longer_possible),
            not_replayed: owned(self.not_replayed),
            notes,
            warnings: crate::policy_warnings::warnings(input.draft, input.registry),
        }
    }

    /// Every UTC day of the window, oldest first, those without calls too (a call recorded just
    /// after the window's end, while it was read, stretches it to its day).
    fn by_day(&self) -> Vec<DayStops> {
        let input = self.input;
        let first = input.since_ms.div_euclid(DAY_MS);
        let last = (input.until_ms - 1).div_euclid(DAY_MS).max(first);
        let (first, last) = self.days.keys().fold((first, last), |(lo, hi), day| (lo.min(*day), hi.max(*day)));
        (first..=last)
            .map(|day| {
                let (recorded, draft) = self.days.get(&day).copied().unwrap_or_default();
                let date = rfc3339(day * DAY_MS);
                DayStops { day: date.get(..10).unwrap_or(&date).to_owned(), recorded, draft }
            })
            .collect()
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let listed = |map: &HashMap<&str, u64>| {
            let mut pairs: Vec<(&str, u64)> = map.iter().map(|(k, v)| (*k, *v)).collect();
            pairs.sort();
            pairs.iter().map(|(k, v)| format!("{k} ({v})")).collect::<Vec<_>>().join(", ")
        };
        if !self.not_replayed.is_empty() {
            notes.push(format!(
                "left out, their tools' metadata being unknown here (MCP tools: replay connects to no MCP server): {}",
                listed(&self.not_replayed)
            ));
        }
        if !self.agents_gone.is_empty() {
            notes.push(format!(
                "calls of agents the draft does not have were replayed under its default agent {:?}, as the server would drive them: {}",
                self.input.draft.default_agent().name,
                listed(&self.agents_gone)
            ));
        }
        if self.without_confidence > 0 {
            notes.push(format!(
                "calls with no recorded confidence (only asked calls keep it): {}; the draft's confidence gates count them as unsure, as the engine does a call whose model does not say",
                self.without_confidence
            ));
        }
        let no_one = self.standing_for_no_one();
        if !no_one.is_empty() {
            notes.push(format!(
                "approvers the draft names that stand for no one here (no account that may sign in, or a group none of whose members has one): {}; the server leaves them out, and a call whose gate names no one else goes to the admins, as the load counts it",
                no_one.join(", ")
            ));
        }
        if self.granted_still > 0 {
            notes.push(format!(
                "calls that ran under a standing grant made under the draft's own version: {}; it would let them run under the draft too, so they are not counted as friction",
                self.granted_still
            ));
        }
        notes.push(
            "the draft's load is an estimate: each call it would stop counts for every approver its gates name who stands for someone (the admins for a gate whose approvers stand for no one, \"anyone\" when they name none)"
                .to_owned(),
        );
        notes
    }

    /// The draft's approver names that stand for no one, as the server would resolve them.
    fn standing_for_no_one(&self) -> Vec<&'a str> {
        let (draft, directory) = (self.input.draft, self.input.directory);
        let mut names: Vec<&'a str> = Vec::new();
        for name in draft.agents.iter().flat_map(|a| &a.gates).flat_map(|g| &g.approvers) {
            if !directory.stands_for_someone(&draft.groups, name) && !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        names
    }
}

/// The standing grants made under the live configuration that would stop covering calls under
/// the draft. A grant covers calls only under the configuration version it was made under
/// (engine/src/grant_cover.rs), so a draft of another version ends every one of them; `why` names
/// the most telling reason.
fn ended_grants(input: &Replay<'_>) -> Vec<EndedGrant> {
    let (draft, live) = (input.draft, input.live);
    if draft.version == live.version {
        return Vec::new();
    }
    input
        .grants
        .iter()
        // Made under another version already, or before grants named their gate: they cover nothing now.
        .filter(|g| g.policy_version.as_deref() == Some(live.version.as_str()))
        .filter(|g| input.agent.is_none_or(|a| g.agent.as_deref() == Some(a)))
        .filter_map(|g| {
            let (agent, gate) = (g.agent.as_deref()?, g.gate.as_deref()?);
            Some(EndedGrant {
                id: g.id.clone(),
                conversation_id: g.conversation_id.clone(),
                agent: agent.to_owned(),
                tool: g.tool.clone(),
                gate: gate.to_owned(),
                created_by: g.created_by.clone(),
                created_at: rfc3339(g.created_at_ms),
                why: why_ended(draft, live, agent, gate),
            })
        })
        .collect()
}

fn why_ended(draft: &AgentsConfig, live: &AgentsConfig, agent: &str, gate: &str) -> String {
    let Some(draft_agent) = draft.get(agent) else { return format!("agent {agent:?} is not in the draft") };
    // A grant given under several gates names them joined with " + ".
    for name in gate.split(" + ") {
        let Some(new) = draft_agent.gates.iter().find(|g| g.name == name) else {
            return format!("gate {name:?} is not in the draft");
        };
        if !new.rules.grantable {
            return format!("gate {name:?} asks each call on its own in the draft (it is not grantable)");
        }
        if live.get(agent).and_then(|a| a.gates.iter().find(|g| g.name == name)) != Some(new) {
            return format!("gate {name:?} changes in the draft");
        }
    }
    "the draft is another version of the configuration, and a grant covers calls only under the version it was made under".to_owned()
}

/// Why the grant that let `call` run would not cover it under the draft: a grant made under the
/// live version ends as [`ended_grants`] says; one made under another, older version covered
/// calls only under that one.
fn lapses(input: &Replay<'_>, call: &RecordedCall, grant: &Granted) -> String {
    match (grant.policy_version.as_deref() == Some(input.live.version.as_str()), grant.gate.as_deref()) {
        (true, Some(gate)) => why_ended(input.draft, input.live, &call.agent, gate),
        _ => "it was made under another version of the configuration, and covers calls only under that one".to_owned(),
    }
}

/// The report for a terminal: plain text, aligned columns.
pub fn render_table(report: &Report) -> String {
    let mut out = String::new();
    let w = &report.window;
    let agent = w.agent.as_ref().map(|a| format!(" of agent {a}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "Draft {} against the live configuration {}: {} calls{agent} from {} to {} UTC ({} days)",
        report.draft_version,
        report.live_version,
        report.summary.calls,
        minute(&w.since),
        minute(&w.until),
        w.days
    );
    let s = &report.summary;
    heading(&mut out, "Summary");
    let rows = [
        ("calls replayed", s.replayed),
        ("asked a human (recorded)", s.asked_recorded),
        ("asked a human (draft)", s.asked_draft),
        ("new friction: ran unasked, would be asked", s.new_friction),
        ("new risk: asked, would run unasked", s.now_unasked),
        ("new risk: asked, other deciders", s.deciders_change),
        ("no longer possible under the draft", s.no_longer_possible),
        ("grants the draft would end", s.grants_ended),
        ("a gate's rule could not be evaluated", s.rule_errors),
    ];
    table(&mut out, &[], &[false, true], rows.iter().map(|(label, n)| vec![(*label).to_owned(), n.to_string()]).collect());

    heading(&mut out, "Gates of the draft: the calls each would stop");
    let rows = report
        .gates
        .iter()
        .map(|g| {
            let mode = g.mode.clone();
            vec![g.gate.clone(), mode, g.calls.to_string(), g.ran_unasked.to_string(), counts(&g.by_tool), counts(&g.by_agent)]
        })
        .collect();
    table(&mut out, &["gate", "mode", "calls", "ran unasked", "by tool", "by agent"], &[false, false, true, true, false, false], rows);
    if !report.rule_errors.is_empty() {
        heading(
            &mut out,
            "Rules that could not be evaluated: the gate stops the call all the same (fail-closed) unless its agent is fail_open",
        );
        let rows =
            report.rule_errors.iter().map(|r| vec![r.gate.clone(), r.calls.to_string(), r.stopped.to_string(), r.error.clone()]).collect();
        table(&mut out, &["gate", "calls", "stopped", "error (the newest call's)"], &[false, true, true, false], rows);
        examples(&mut out, &report.rule_errors.iter().map(|r| r.example.clone()).collect::<Vec<_>>());
    }

    let f = &report.new_friction;
    heading(&mut out, &format!("New friction: {} calls ran without asking and would now be stopped", f.calls));
    if f.calls > 0 {
        let _ = writeln!(out, "  by requirement: {}", counts(&f.by_requirement));
        let _ = writeln!(out, "  by tool: {}", counts(&f.by_tool));
        examples(&mut out, &f.examples);
    }
    let u = &report.new_risk.unasked;
    heading(&mut out, &format!("New risk: {} calls were asked and would now run unasked", u.calls));
    if u.calls > 0 {
        let _ = writeln!(out, "  recorded: {}", counts(&u.by_outcome));
        let _ = writeln!(out, "  by tool: {}", counts(&u.by_tool));
        examples(&mut out, &u.examples);
    }
    let d = &report.new_risk.deciders;
    heading(&mut out, &format!("New risk: {} asked calls would have other deciders, or other rules for them", d.calls));
    if d.calls > 0 {
        let rows = d.changes.iter().map(|c| vec![c.recorded.clone(), c.draft.clone(), c.calls.to_string()]).collect();
        table(&mut out, &["recorded", "draft", "calls"], &[false, false, true], rows);
        examples(&mut out, &d.examples);
    }

    heading(&mut out, &format!("Deciders' load: approvals asked, per day over {} days, and the busiest hour (UTC)", w.days));
    let rate = |r: &Rate| {
        let busiest = r.busiest_hour.as_ref().map_or("-".to_owned(), |h| format!("{} ({})", minute(&h.starts), h.approvals));
        [r.approvals.to_string(), format!("{:.1}", r.per_day), busiest]
    };
    let mut rows: Vec<Vec<String>> = report
        .load
        .deciders
        .iter()
        .map(|l| {
            let who = match l.kind.as_str() {
                "group" => format!("{} (group)", l.who),
                "anyone" => "anyone (no approvers named)".to_owned(),
                _ => l.who.clone(),
            };
            std::iter::once(who).chain(rate(&l.recorded)).chain(rate(&l.draft)).collect()
        })
        .collect();
    rows.push(std::iter::once("all".to_owned()).chain(rate(&report.load.recorded)).chain(rate(&report.load.draft)).collect());
    table(
        &mut out,
        &["who", "recorded", "per day", "busiest hour", "draft", "per day", "busiest hour"],
        &[false, true, true, false, true, true, false],
        rows,
    );

    heading(&mut out, &format!("Grants the draft would end: {}", report.grants_ended.len()));
    if !report.grants_ended.is_empty() {
        let rows = report
            .grants_ended
            .iter()
            .map(|g| {
                vec![
                    g.id.clone(),
                    g.conversation_id.clone(),
                    g.agent.clone(),
                    g.tool.clone(),
                    g.gate.clone(),
                    g.created_by.clone(),
                    g.why.clone(),
                ]
            })
            .collect();
        table(&mut out, &["grant", "conversation", "agent", "tool", "gate", "given by", "why"], &[false; 7], rows);
    }
    if !report.no_longer_possible.is_empty() {
        heading(&mut out, "No longer possible under the draft (the agent lacks the tool, or its schema refuses the arguments)");
        let _ = writeln!(out, "  {}", counts(&report.no_longer_possible));
    }
    if !report.warnings.is_empty() {
        heading(&mut out, "Warnings of the draft (as `countersign policy check` gives them)");
        for warning in &report.warnings {
            let _ = writeln!(out, "  warning: {warning}");
        }
    }
    heading(&mut out, "Notes");
    for note in &report.notes {
        let _ = writeln!(out, "  - {note}");
    }
    out
}

/// "2026-12-03 14:05" from an RFC 3339 time.
fn minute(rfc3339: &str) -> String {
    rfc3339.get(..16).unwrap_or(rfc3339).replace('T', " ")
}

fn heading(out: &mut String, title: &str) {
    let _ = write!(out, "\n{title}\n");
}

/// "process_refund 10, get_order 2", most first.
fn counts(map: &BTreeMap<String, u64>) -> String {
    let mut pairs: Vec<(&String, &u64)> = map.iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    pairs.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

fn examples(out: &mut String, examples: &[Example]) {
    let rows = examples
        .iter()
        .map(|e| {
            let at = e.at.get(..19).unwrap_or(&e.at).replace('T', " ");
            vec![
                at,
                e.call_id.clone(),
                e.conversation_id.clone(),
                e.agent.clone(),
                e.tool.clone(),
                e.args.clone(),
                e.recorded.clone(),
                e.draft.clone(),
            ]
        })
        .collect();
    table(out, &["at (UTC)", "call", "conversation", "agent", "tool", "args", "recorded", "draft"], &[false; 8], rows);
}

/// Rows under a header (none: no header line), each column as wide as its widest cell, two
/// spaces apart; `numeric` columns aligned right. Indented by two spaces.
fn table(out: &mut String, header: &[&str], numeric: &[bool], rows: Vec<Vec<String>>) {
    let columns = numeric.len();
    let mut widths = vec![0; columns];
    let head: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&head).filter(|h| !h.is_empty()).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&head).filter(|h| !h.is_empty()).chain(&rows) {
        let mut line = String::from(" ");
        for ((cell, width), right) in row.iter().zip(&widths).zip(numeric) {
            let pad = " ".repeat(width - cell.chars().count());
            line.push(' ');
            match *right {
                true => line.extend([pad.as_str(), cell.as_str()]),
                false => line.extend([cell.as_str(), pad.as_str()]),
            }
            line.push(' ');
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::wire::Usage;
    use serde_json::{Value, json};

    fn config(text: &str) -> AgentsConfig {
        AgentsConfig::parse(text, "test.toml", &Registry::builtin()).unwrap()
    }

    const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n";

    fn live() -> AgentsConfig {
        config(&format!(
            "[[agents]]\nname = \"support\"\n{TOOLS}\
             [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n\
             [[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\n"
        ))
    }

    /// Adds a stricter gate (lookups), a rule gate with a group (big refunds), names who decides
    /// refunds, and removes the cancellations gate.
    fn draft() -> AgentsConfig {
        config(&format!(
            "[[groups]]\nname = \"finance\"\nmembers = [\"bob\", \"root\"]\n\
             [[agents]]\nname = \"support\"\n{TOOLS}\
             [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"user:root\"]\n\
             [[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"tool == 'process_refund' && args.amount > 100\"\n\
             approvers = [\"group:finance\"]\n\
             [[agents.gates]]\nname = \"lookups\"\nkind = \"tools\"\ntools = [\"get_order\"]\n"
        ))
    }

    const HOUR: i64 = 3_600_000;

    fn call(n: usize, tool: &str, args: Value, then: Then) -> RecordedCall {
        RecordedCall {
            call_id: format!("call_{n}"),
            conversation_id: format!("c{}", n / 3),
            agent: "support".into(),
            tool: tool.into(),
            args,
            requester: Some("alice".into()),
            at_ms: 10 * HOUR + n as i64 * 1000,
            confidence: None,
            spent_task: Usage::default(),
            spent_conversation: Usage::default(),
            then,
            granted: None,
        }
    }

    fn asked(gate: &str, outcome: &str, by: &str) -> Then {
        let (gate, outcome, deciders) = (gate.into(), outcome.into(), vec![by.into()]);
        Then::Asked(Asked { gate, outcome, deciders, approvers: None, rules: DecisionRules::default(), in_chat: false })
    }

    /// The test app's accounts (server/tests/api/helpers.rs); no group is kept in the database.
    fn directory() -> Directory {
        Directory { users: ["alice", "bob", "root"].map(str::to_owned).to_vec(), groups: BTreeMap::new() }
    }

    fn run(draft: &AgentsConfig, live: &AgentsConfig, calls: &[RecordedCall], grants: &[StandingGrant]) -> Report {
        let registry = Registry::builtin();
        let directory = directory();
        let directory = &directory;
        replay(&Replay { draft, live, registry: &registry, calls, grants, directory, since_ms: 0, until_ms: 24 * HOUR, agent: None })
    }

    /// The integration test's recorded calls (server/tests/api/policy_replay.rs), as rows.
    fn recorded() -> Vec<RecordedCall> {
        let mut calls = Vec::new();
        for _ in 0..12 {
            calls.push(call(calls.len(), "get_order", json!({ "order_id": 1001 }), Then::NotAsked));
        }
        for _ in 0..8 {
            calls.push(call(
                calls.len(),
                "process_refund",
                json!({ "order_id": 1001, "amount": 2.0 }),
                asked("refunds", "approved", "alice"),
            ));
        }
        calls.push(call(calls.len(), "process_refund", json!({ "order_id": 1004, "amount": 150.0 }), asked("refunds", "approved", "root")));
        calls.push(call(calls.len(), "process_refund", json!({ "order_id": 1002, "amount": 3.0 }), asked("refunds", "rejected", "alice")));
        calls.push(call(calls.len(), "cancel_order", json!({ "order_id": 1003 }), asked("cancellations", "approved", "alice")));
        calls.push(call(calls.len(), "cancel_order", json!({ "order_id": 1005 }), asked("cancellations", "rejected", "root")));
        calls
    }

    #[test]
    fn a_draft_is_put_to_every_recorded_call_and_each_change_is_counted() {
        let (draft, live) = (draft(), live());
        let report = run(&draft, &live, &recorded(), &[]);
        let s = &report.summary;
        assert_eq!((s.calls, s.replayed, s.asked_recorded, s.asked_draft), (24, 24, 12, 22));
        assert_eq!((s.new_friction, s.now_unasked, s.deciders_change, s.no_longer_possible), (12, 2, 10, 0));
        let gates: Vec<(&str, u64, u64)> = report.gates.iter().map(|g| (g.gate.as_str(), g.calls, g.ran_unasked)).collect();
        assert_eq!(gates, [("refunds", 10, 0), ("big-refunds", 1, 0), ("lookups", 12, 12)], "in the file's order");
        assert_eq!(report.gates[2].by_tool, BTreeMap::from([("get_order".to_owned(), 12)]));
        assert_eq!(report.gates[0].by_agent, BTreeMap::from([("support".to_owned(), 10)]));
        assert_eq!(report.new_friction.by_requirement, BTreeMap::from([("lookups".to_owned(), 12)]));
        let examples = &report.new_friction.examples;
        assert_eq!(examples.len(), EXAMPLES);
        assert_eq!(examples[0].call_id, "call_11", "the newest first");
        assert_eq!((examples[0].recorded.as_str(), examples[0].draft.as_str()), ("ran unasked", "asked under lookups (anyone)"));
        let unasked = &report.new_risk.unasked;
        assert_eq!(unasked.by_outcome, BTreeMap::from([("approved".to_owned(), 1), ("rejected".to_owned(), 1)]));
        assert_eq!(unasked.examples[0].recorded, "rejected by root under cancellations (anyone)");
        let changes: Vec<(&str, &str, u64)> =
            report.new_risk.deciders.changes.iter().map(|c| (c.recorded.as_str(), c.draft.as_str(), c.calls)).collect();
        assert_eq!(changes, [("anyone", "root", 9), ("anyone", "finance (bob, root) and root", 1)], "a group with its people");
        let load: Vec<(&str, &str, u64, u64)> =
            report.load.deciders.iter().map(|l| (l.kind.as_str(), l.who.as_str(), l.recorded.approvals, l.draft.approvals)).collect();
        assert_eq!(load, [("person", "alice", 10, 0), ("person", "root", 2, 10), ("group", "finance", 0, 1), ("anyone", "anyone", 12, 12)]);
        assert_eq!((report.load.recorded.approvals, report.load.draft.approvals), (12, 22));
        assert_eq!(report.load.recorded.per_day, 12.0, "a window of one day");
        let busiest = report.load.draft.busiest_hour.as_ref().unwrap();
        assert_eq!((busiest.starts.as_str(), busiest.approvals), ("1970-01-01T10:00:00.000Z", 22));
        assert!(report.warnings.iter().any(|w| w.contains("may apply together to process_refund")), "{:?}", report.warnings);
    }

    #[test]
    fn each_day_of_the_window_counts_the_calls_asked_then_and_under_the_draft() {
        let (draft, live) = (draft(), live());
        // The refunds stay on the window's first day, the lookups move to its second, the
        // cancellations to its third; the fourth is quiet.
        let mut calls = recorded();
        for call in &mut calls {
            call.at_ms += match call.tool.as_str() {
                "get_order" => 24 * HOUR,
                "cancel_order" => 48 * HOUR,
                _ => 0,
            };
        }
        let registry = Registry::builtin();
        let input = Replay {
            draft: &draft,
            live: &live,
            registry: &registry,
            calls: &calls,
            grants: &[],
            directory: &directory(),
            since_ms: 0,
            until_ms: 96 * HOUR,
            agent: None,
        };
        let report = replay(&input);
        let days: Vec<(&str, u64, u64)> = report.per_day.iter().map(|d| (d.day.as_str(), d.recorded, d.draft)).collect();
        assert_eq!(
            days,
            [("1970-01-01", 10, 10), ("1970-01-02", 0, 12), ("1970-01-03", 2, 0), ("1970-01-04", 0, 0)],
            "every day of the window, oldest first, quiet ones too"
        );
        let sums = report.per_day.iter().fold((0, 0), |(r, d), day| (r + day.recorded, d + day.draft));
        assert_eq!(sums, (report.summary.asked_recorded, report.summary.asked_draft));
        assert_eq!(report.recorded_by_gate, BTreeMap::from([("cancellations".to_owned(), 2), ("refunds".to_owned(), 10)]));
        // The browser reads what the engine writes (domain::replay).
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(serde_json::from_value::<Report>(json).unwrap(), report);
    }

    #[test]
    fn the_same_configuration_changes_nothing() {
        let live = live();
        let report = run(&live, &live, &recorded(), &[]);
        let s = &report.summary;
        assert_eq!((s.asked_recorded, s.asked_draft, s.new_friction, s.now_unasked, s.deciders_change), (12, 12, 0, 0, 0));
        assert!(report.new_friction.examples.is_empty() && report.new_risk.deciders.changes.is_empty());
    }

    #[test]
    fn budgets_read_the_recorded_spend_and_confidence_gates_the_recorded_confidence() {
        let draft = config(&format!(
            "[[agents]]\nname = \"support\"\n{TOOLS}\
             [[agents.gates]]\nname = \"spend\"\nkind = \"budget\"\ntoken_threshold = 1000\nper = \"conversation\"\n\
             [[agents.gates]]\nname = \"unsure\"\nkind = \"confidence\"\nconfidence_threshold = 0.8\n"
        ));
        let usage = |tokens| Usage { input_tokens: tokens, output_tokens: 0, cost_usd: None };
        let mut calls = Vec::new();
        for (tokens, confidence) in [(900, Some(0.9)), (1001, Some(0.9)), (10, Some(0.5)), (10, None)] {
            let mut c = call(calls.len(), "list_orders", json!({}), Then::NotAsked);
            (c.spent_task, c.spent_conversation) = (usage(tokens), usage(tokens));
            c.confidence = confidence;
            calls.push(c);
        }
        let report = run(&draft, &live(), &calls, &[]);
        let gates: Vec<(&str, u64)> = report.gates.iter().map(|g| (g.gate.as_str(), g.calls)).collect();
        assert_eq!(gates, [("spend", 1), ("unsure", 2)], "over the budget; unsure or not saying");
        assert!(
            report.notes.iter().any(|n| n.starts_with("calls with no recorded confidence (only asked calls keep it): 1;")),
            "{:?}",
            report.notes
        );
    }

    #[test]
    fn refusals_unknown_tools_removed_tools_and_missing_agents_are_told_apart() {
        let draft = config("[[agents]]\nname = \"support\"\ntools = [\"get_order\", \"process_refund\"]\n");
        let mut calls = vec![
            call(0, "process_refund", json!({ "order_id": 1001, "amount": 5 }), Then::RefusedAgain),
            call(1, "search_web", json!({ "q": "x" }), Then::NotAsked),
            call(2, "cancel_order", json!({ "order_id": 1003 }), Then::NotAsked),
            call(3, "cancel_order", json!({ "order_id": 1003 }), asked("cancellations", "approved", "alice")),
            call(4, "get_order", json!({ "order_id": "not a number" }), Then::NotAsked),
            call(5, "get_order", json!({ "order_id": 1001 }), Then::NotAsked),
        ];
        calls[5].agent = "gone".into();
        let report = run(&draft, &live(), &calls, &[]);
        let s = &report.summary;
        assert_eq!((s.calls, s.replayed), (6, 5));
        assert_eq!(report.not_replayed, BTreeMap::from([("search_web".to_owned(), 1)]));
        assert_eq!(report.new_risk.unasked.by_outcome, BTreeMap::from([("refused again".to_owned(), 1)]), "no gate: it would run");
        assert_eq!(
            report.no_longer_possible,
            BTreeMap::from([("cancel_order".to_owned(), 2)]),
            "ran, or was asked; the bad lookup never ran"
        );
        assert!(report.notes.iter().any(|n| n.contains("default agent \"support\"") && n.contains("gone (1)")), "{:?}", report.notes);
        assert!(report.notes.iter().any(|n| n.contains("search_web (1)")), "{:?}", report.notes);
        // Gated in the draft too: refused again, as then; nothing changes.
        let gated = config(&format!("[[agents]]\nname = \"support\"\n{TOOLS}[[agents.gates]]\nname = \"all\"\nkind = \"all\"\n"));
        let report = run(&gated, &live(), &calls[..1], &[]);
        assert_eq!((report.summary.now_unasked, report.summary.new_friction, report.gates[0].calls), (0, 0, 1));
    }

    #[test]
    fn grants_made_under_the_live_version_end_with_the_most_telling_reason() {
        let (draft, live) = (draft(), live());
        let grant = |id: &str, gate: &str, version: &str| StandingGrant {
            id: id.into(),
            conversation_id: "c1".into(),
            tool: "process_refund".into(),
            gate: Some(gate.into()),
            agent: Some("support".into()),
            policy_version: Some(version.into()),
            created_by: "alice".into(),
            created_at_ms: HOUR,
        };
        let grants = [
            grant("g1", "refunds", &live.version),
            grant("g2", "cancellations", &live.version),
            grant("g3", "refunds", "older"),
            StandingGrant { gate: None, ..grant("g4", "refunds", &live.version) },
        ];
        let report = run(&draft, &live, &[], &grants);
        let ended: Vec<(&str, &str)> = report.grants_ended.iter().map(|g| (g.id.as_str(), g.why.as_str())).collect();
        assert_eq!(
            ended,
            [
                ("g1", "gate \"refunds\" asks each call on its own in the draft (it is not grantable)"),
                ("g2", "gate \"cancellations\" is not in the draft"),
            ],
            "another version's grants and unbound ones cover nothing already"
        );
        assert_eq!(report.summary.grants_ended, 2);
        assert!(run(&live, &live, &[], &grants).grants_ended.is_empty(), "the same version ends none");
        let reworded = config(&format!(
            "[[agents]]\nname = \"support\"\n{TOOLS}[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n\
             [[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\ntimeout_secs = 60\n"
        ));
        let ended = run(&reworded, &live, &[], &grants).grants_ended;
        assert!(ended[0].why.starts_with("the draft is another version"), "{}", ended[0].why);
        assert_eq!(ended[1].why, "gate \"cancellations\" changes in the draft");
    }

    #[test]
    fn the_table_aligns_its_columns() {
        let report = run(&draft(), &live(), &recorded(), &[]);
        let text = render_table(&report);
        assert!(
            text.starts_with(&format!("Draft {} against the live configuration {}: 24 calls", report.draft_version, report.live_version))
        );
        let gates: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("Gates of the draft")).skip(1).take(4).collect();
        assert_eq!(gates[0], "  gate         mode     calls  ran unasked  by tool            by agent");
        assert_eq!(gates[1], "  refunds      enforce     10            0  process_refund 10  support 10");
        assert_eq!(gates[3], "  lookups      enforce     12           12  get_order 12       support 12");
        // The draft column is as wide as "finance (bob, root) and root".
        assert!(text.contains(&format!("\n  anyone    root{}9\n", " ".repeat(30))), "{text}");
        assert!(text.contains("\n  all                                12     12.0  1970-01-01 10:00 (12)     22     22.0"), "{text}");
    }

    /// The live configuration with `extra` added to the cancellations gate.
    fn cancellations_with(extra: &str) -> AgentsConfig {
        config(&format!("{}{extra}", live().text))
    }

    #[test]
    fn four_eyes_changes_the_requirement_and_refuses_the_requesters_own_approval() {
        let draft = cancellations_with("separate_requester = true\n");
        let report = run(&draft, &live(), &recorded(), &[]);
        assert_eq!(report.summary.deciders_change, 2, "both cancellations; the refunds are as they were");
        let changes: Vec<(&str, &str, u64)> =
            report.new_risk.deciders.changes.iter().map(|c| (c.recorded.as_str(), c.draft.as_str(), c.calls)).collect();
        assert_eq!(
            changes,
            [
                ("anyone", "anyone; not the requester (four-eyes)", 1),
                ("anyone, approved by the requester", "anyone; not the requester (four-eyes)", 1),
            ]
        );
        let own = report.new_risk.deciders.examples.iter().find(|e| e.call_id == "call_22").unwrap();
        assert_eq!(own.recorded, "approved by alice under cancellations (anyone)");
        assert_eq!(
            own.draft,
            "asked under cancellations (anyone; not the requester (four-eyes)); alice, the requester, could not approve it"
        );
        // Asked in the chat then, on a card under the draft: other deciders too.
        let chat = cancellations_with("confirm = \"chat\"\n");
        let report = run(&live(), &chat, &recorded(), &[]);
        assert_eq!(report.summary.deciders_change, 0, "recorded on cards, as the live file asks: nothing to compare");
        let mut calls = recorded();
        for call in &mut calls {
            if let Then::Asked(asked) = &mut call.then
                && asked.gate == "cancellations"
            {
                asked.in_chat = true;
            }
        }
        let changes = run(&live(), &chat, &calls, &[]).new_risk.deciders.changes;
        assert_eq!(
            (changes[0].recorded.as_str(), changes[0].draft.as_str(), changes[0].calls),
            ("the requester, in the chat", "anyone", 2)
        );
    }

    #[test]
    fn a_groups_members_count_and_a_name_for_no_one_falls_to_the_admins() {
        let gate =
            "[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"group:finance\"]\n";
        let with = |members: &str| {
            config(&format!("[[groups]]\nname = \"finance\"\nmembers = [{members}]\n[[agents]]\nname = \"support\"\n{TOOLS}{gate}"))
        };
        let live = with("\"bob\", \"root\"");
        let then =
            Approvers { names: vec!["group:finance".into()], people: vec!["bob".into(), "root".into()], admins: false, each: vec![] };
        let refund = |n: usize| {
            let mut call = call(n, "process_refund", json!({ "order_id": 1001, "amount": 2.0 }), asked("refunds", "approved", "bob"));
            if let Then::Asked(asked) = &mut call.then {
                asked.approvers = Some(then.clone());
            }
            call
        };
        let calls = [refund(0), refund(1)];
        let changed = |draft: &AgentsConfig| {
            let report = run(draft, &live, &calls, &[]);
            (report.summary.deciders_change, report.new_risk.deciders.changes.first().map(|c| c.draft.clone()))
        };
        assert_eq!(changed(&live), (0, None), "the same members");
        assert_eq!(changed(&with("\"bob\"")), (2, Some("finance (bob)".to_owned())));
        assert_eq!(
            changed(&with("\"carol\", \"erin\"")),
            (2, Some("finance (no one, so an admin)".to_owned())),
            "members without accounts"
        );
        // Without the group, the name stands for no one: the admins decide, as the server would have them.
        let no_groups = config(&format!("[[agents]]\nname = \"support\"\n{TOOLS}{gate}"));
        let report = run(&no_groups, &live, &calls, &[]);
        let change = &report.new_risk.deciders.changes[0];
        assert_eq!(
            (change.recorded.as_str(), change.draft.as_str(), change.calls),
            ("finance (bob, root)", "finance (no one, so an admin)", 2)
        );
        let load: Vec<(&str, &str, u64, u64)> =
            report.load.deciders.iter().map(|l| (l.kind.as_str(), l.who.as_str(), l.recorded.approvals, l.draft.approvals)).collect();
        assert_eq!(load, [("person", "bob", 2, 0), ("group", "finance", 2, 0), ("admins", "admins", 0, 2)]);
        assert!(report.notes.iter().any(|n| n.contains("stand for no one here") && n.contains("group:finance")), "{:?}", report.notes);
    }

    #[test]
    fn a_user_without_an_account_is_no_person_and_leaves_the_call_to_the_admins() {
        let draft = config(&format!(
            "[[agents]]\nname = \"support\"\n{TOOLS}\
             [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"user:nobody\"]\n"
        ));
        let report = run(&draft, &live(), &recorded(), &[]);
        let changes: Vec<(&str, &str, u64)> =
            report.new_risk.deciders.changes.iter().map(|c| (c.recorded.as_str(), c.draft.as_str(), c.calls)).collect();
        assert_eq!(changes, [("anyone", "nobody (no one, so an admin)", 10)]);
        let drafted: Vec<(&str, &str, u64)> = report
            .load
            .deciders
            .iter()
            .filter(|l| l.draft.approvals > 0)
            .map(|l| (l.kind.as_str(), l.who.as_str(), l.draft.approvals))
            .collect();
        assert_eq!(drafted, [("admins", "admins", 10)], "nobody is no person");
        assert!(report.notes.iter().any(|n| n.contains(": user:nobody;")), "{:?}", report.notes);
    }

    #[test]
    fn every_shadow_gate_that_matches_counts_whatever_the_order() {
        let lookups = "[[agents.gates]]\nname = \"shadow-lookups\"\nkind = \"tools\"\ntools = [\"get_order\"]\nmode = \"shadow\"\n";
        let reads = "[[agents.gates]]\nname = \"shadow-reads\"\nkind = \"rule\"\nrule = \"tool == 'get_order' || tool == 'list_orders'\"\n\
                     mode = \"shadow\"\n";
        let counted = |first: &str, second: &str| {
            let draft = config(&format!("[[agents]]\nname = \"support\"\n{TOOLS}{first}{second}"));
            let mut gates: Vec<(String, u64)> =
                run(&draft, &live(), &recorded(), &[]).gates.iter().map(|g| (g.gate.clone(), g.calls)).collect();
            gates.sort();
            gates
        };
        let expected = [("shadow-lookups".to_owned(), 12), ("shadow-reads".to_owned(), 12)];
        assert_eq!(counted(lookups, reads), expected);
        assert_eq!(counted(reads, lookups), expected, "the order of the gates changes nothing");
    }

    #[test]
    fn a_call_a_grant_let_run_is_friction_only_when_the_draft_would_end_the_grant() {
        let live = live();
        let mut calls = recorded();
        let mut granted = call(calls.len(), "process_refund", json!({ "order_id": 1002, "amount": 2.0 }), Then::NotAsked);
        let version = Some(live.version.clone());
        granted.granted =
            Some(Granted { id: "g1".into(), created_by: "alice".into(), policy_version: version, gate: Some("refunds".into()) });
        calls.push(granted);
        let report = run(&live, &live, &calls, &[]);
        let s = &report.summary;
        assert_eq!((s.new_friction, s.asked_recorded, s.asked_draft), (0, 12, 12), "the same version keeps the grant");
        assert_eq!(report.gates[0].calls, 11, "the refunds gate matches it all the same");
        assert!(
            report.notes.iter().any(|n| n.starts_with("calls that ran under a standing grant made under the draft's own version: 1;")),
            "{:?}",
            report.notes
        );
        // Another version: the grant would cover nothing, so the call would be asked.
        let other = config(&format!("{}# another version\n", live.text));
        let report = run(&other, &live, &calls, &[]);
        assert_eq!(report.summary.new_friction, 1);
        let example = &report.new_friction.examples[0];
        assert_eq!(example.recorded, "ran unasked under alice's grant g1");
        assert!(
            example.draft.starts_with("asked under refunds (anyone); the grant would not cover it: the draft is another version"),
            "{}",
            example.draft
        );
    }

    #[test]
    fn a_rule_that_cannot_be_evaluated_is_counted_and_treated_as_the_engine_treats_it() {
        let gate = "[[agents.gates]]\nname = \"big-amounts\"\nkind = \"rule\"\nrule = \"args.amount > 100\"\n";
        let draft = config(&format!("[[agents]]\nname = \"support\"\n{TOOLS}{gate}"));
        let report = run(&draft, &live(), &recorded(), &[]);
        // The lookups and the cancellations have no amount: fail-closed, the gate stops them.
        assert_eq!(report.summary.rule_errors, 14);
        let errors = &report.rule_errors;
        assert_eq!((errors.len(), errors[0].gate.as_str(), errors[0].calls, errors[0].stopped), (1, "big-amounts", 14, 14));
        assert!(errors[0].error.starts_with("args.amount > 100: "), "{}", errors[0].error);
        assert_eq!((errors[0].example.call_id.as_str(), errors[0].example.tool.as_str()), ("call_23", "cancel_order"), "the newest");
        assert_eq!(report.gates[0].calls, 15, "14 it could not evaluate and the $150 refund");
        let table = render_table(&report);
        assert!(table.contains("Rules that could not be evaluated"), "{table}");
        // A fail-open agent lets them run.
        let open = config(&format!("[[agents]]\nname = \"support\"\nfail_open = true\n{TOOLS}{gate}"));
        let report = run(&open, &live(), &recorded(), &[]);
        assert_eq!((report.rule_errors[0].calls, report.rule_errors[0].stopped, report.gates[0].calls), (14, 0, 1));
    }
}
