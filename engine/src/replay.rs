//! Trying a policy on the past (`countersign policy replay DRAFT.toml`, docs/config.md, "The
//! policy's life"): every call recorded in a window is put to the draft configuration with the
//! engine's own functions — [`policy::check`] for what the call requires and [`policy::classify`]
//! for the verdict, as the orchestrator does (orchestrator/model_step.rs) — and compared with what
//! happened: whether a human was asked, who decided, who could have. Pure: the calls come loaded
//! (store/recorded.rs), no model is asked, no tool runs, nothing is written, and the window's
//! times are the caller's. Its two doors, `countersign policy replay` and the admins' Policy page
//! (`POST /api/policy/replay`), both go through [`run`] (replay/service.rs), which reads them.

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Write as _,
};

use domain::{
    rules::{Approvers, Share},
    wire::FieldProblem,
};

pub use crate::store::{
    grants::StandingGrant,
    recorded::{Asked, RecordedCall, Then},
};
use crate::{
    agents::{Agent, AgentsConfig, Gate, GateRule},
    policy::{self, Requirement, Spent, Verdict},
    store::time::rfc3339,
    tools::{self, Registry},
};

mod service;

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
    /// The window (Unix ms), and the one agent it is about, if any.
    pub since_ms: i64,
    pub until_ms: i64,
    pub agent: Option<&'a str>,
}

// What the draft would have changed: the report's shape is the domain's (domain/src/replay.rs),
// which the browser reads too.
pub use domain::replay::{
    BusyHour, Change, DayStops, DeciderLoad, DecidersChange, EndedGrant, Example, Friction, GateStops, Load, NewRisk, Rate, Report,
    Summary, Unasked, Window,
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
    /// Runs unasked; the shadow gate that would record it, if any.
    Runs { shadow: Option<&'a Gate> },
    /// A human decides.
    Asks(Requirement<'a>),
    /// Refused without asking: a human refused the same call before.
    RefusedAgain(Requirement<'a>),
}

/// The agent that drives a call under `config`: its own, or the default one for a conversation
/// whose agent the configuration does not have (as the orchestrator does).
fn agent_of<'a>(config: &'a AgentsConfig, name: &str) -> &'a Agent {
    config.get(name).unwrap_or_else(|| config.default_agent())
}

/// A plan's steps must be tools of its agent too (orchestrator/model_step.rs).
fn violations(agent: &Agent, registry: &Registry, call: &RecordedCall, schema: &[FieldProblem]) -> Vec<FieldProblem> {
    let mut violations = schema.to_vec();
    if call.tool == tools::plan::NAME {
        violations.extend(tools::plan::step_violations(&call.args, &agent.tools, registry));
    }
    violations
}

/// What `config` does with `call`, by the orchestrator's steps (orchestrator/model_step.rs) less
/// the grants: each configuration version has its own. `schema`: how the arguments break their
/// tool's schema (the same under every configuration).
fn judge<'a>(config: &'a AgentsConfig, registry: &Registry, call: &RecordedCall, schema: &[FieldProblem]) -> Now<'a> {
    let agent = agent_of(config, &call.agent);
    // An answer is a call only while a final_response gate holds it; otherwise it is shown as written.
    if call.tool == tools::answer::NAME {
        return match agent.final_response_gate() {
            Some(gate) => Now::Asks(Requirement::one(gate)),
            None => Now::Runs { shadow: None },
        };
    }
    let Some(tool) = registry.get(&call.tool) else { return Now::Unknown };
    let known_tool = agent.tools.contains(&call.tool);
    let spent = Spent { task: call.spent_task, conversation: call.spent_conversation };
    let facts = policy::Call {
        tool: tool.spec(),
        args: &call.args,
        user: call.requester.as_deref().unwrap_or_default(),
        confidence: call.confidence,
        spent: &spent,
    };
    let (requirement, shadow) = match known_tool {
        true => {
            let gating = policy::check(agent, &facts);
            (gating.requirement, gating.shadow)
        }
        false => (None, None),
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
        Verdict::Invalid { .. } => return Now::Invalid,
        Verdict::Run { .. } => return Now::Runs { shadow },
        Verdict::RepeatRefused { .. } => true,
        Verdict::Ask { .. } => false,
    };
    let requirement = requirement.expect("BUG: a gate stops the call");
    match refused_again {
        true => Now::RefusedAgain(requirement),
        false => Now::Asks(requirement),
    }
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
/// ([`Approvers::label`] over the names alone; who they stand for is the database's to say when
/// a call is asked). `shares`: each gate's, when several apply.
fn who_decides(names: &[String], shares: Vec<Share>, quorum: u32) -> String {
    if names.is_empty() && shares.is_empty() {
        return if quorum > 1 { format!("{quorum} people") } else { "anyone".to_owned() };
    }
    let admins = |names: &[String]| names.iter().any(|n| n == "role:admin");
    let one_gate = shares.is_empty();
    let shares = shares.into_iter().map(|s| Share { people: Vec::new(), admins: admins(&s.names), ..s }).collect();
    let label = Approvers { names: names.to_vec(), people: Vec::new(), admins: admins(names), each: shares }.label();
    if one_gate && quorum > 1 { format!("{quorum} of {label}") } else { label }
}

/// Who must decide a call `requirement` stops (the draft's here; the live one's too for a draft's
/// shadow hits, engine/src/draft.rs).
pub(crate) fn decides(requirement: &Requirement<'_>) -> String {
    let shares = requirement
        .shares()
        .into_iter()
        .map(|(gate, names, quorum)| Share { gate: gate.to_owned(), quorum, names: names.to_vec(), people: Vec::new(), admins: false })
        .collect();
    who_decides(&requirement.gate.approvers, shares, requirement.gate.rules.quorum)
}

/// Who could decide a call when it was asked.
fn recorded_decides(asked: &Asked) -> String {
    match &asked.approvers {
        Some(a) => who_decides(&a.names, a.each.clone(), asked.quorum),
        None => who_decides(&[], Vec::new(), asked.quorum),
    }
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
        let now = judge(draft, registry, call, &schema);
        if matches!(now, Now::Unknown) {
            *self.not_replayed.entry(&call.tool).or_default() += 1;
            return;
        }
        self.summary.replayed += 1;
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
            (then, Now::Runs { shadow }) => {
                if let Some(gate) = shadow {
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
            (then, Now::Asks(requirement)) => {
                self.summary.asked_draft += 1;
                self.days.entry(day).or_default().1 += 1;
                for &gate in &requirement.gates {
                    self.stopped_by(gate, call, ran_unasked);
                }
                if !question {
                    self.asked_draft.add(call.at_ms);
                    let mut named_once: Vec<&'a str> = Vec::new();
                    for &gate in &requirement.gates {
                        for name in &gate.approvers {
                            if !named_once.contains(&name.as_str()) {
                                named_once.push(name.as_str());
                                self.by_who.entry(named(name.as_str())).or_default().draft.add(call.at_ms);
                            }
                        }
                    }
                    if named_once.is_empty() {
                        self.by_who.entry((Kind::Anyone, "anyone")).or_default().draft.add(call.at_ms);
                    }
                }
                match then {
                    Then::NotAsked => {
                        self.summary.new_friction += 1;
                        self.friction.add(index, requirement.gate.name.clone(), &call.tool);
                    }
                    Then::Asked(asked) => {
                        let (then_who, draft_who) = (recorded_decides(asked), decides(&requirement));
                        if then_who != draft_who {
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
        let recorded = match &call.then {
            Then::NotAsked if passes(live, registry, call, &schema) => "ran unasked".to_owned(),
            Then::NotAsked => "failed its checks".to_owned(),
            Then::RefusedAgain => "refused again unasked".to_owned(),
            Then::Asked(asked) => {
                let by = match asked.deciders.as_slice() {
                    [] => String::new(),
                    people => format!(" by {}", people.join(", ")),
                };
                format!("{}{by} under {} ({})", asked.outcome, asked.gate, recorded_decides(asked))
            }
        };
        let draft = match judge(draft, registry, call, &schema) {
            Now::Unknown => "not replayed".to_owned(),
            Now::Invalid => "fails its checks".to_owned(),
            Now::Runs { .. } => "runs unasked".to_owned(),
            Now::Asks(r) => format!("asked under {} ({})", r.gate.name, decides(&r)),
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
                "{} calls have no recorded confidence (only asked calls keep it): the draft's confidence gates count them as unsure, as the engine does a call whose model does not say",
                self.without_confidence
            ));
        }
        notes.push(
            "the draft's load is an estimate: each call it would stop counts for every approver its gates name (\"anyone\" when they name none)"
                .to_owned(),
        );
        notes
    }
}

/// The standing grants made under the live configuration that would stop covering calls under
/// the draft. A grant covers calls only under the configuration version it was made under
/// (engine/src/coverage.rs), so a draft of another version ends every one of them; `why` names
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
    heading(&mut out, &format!("New risk: {} asked calls would have other deciders", d.calls));
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
        }
    }

    fn asked(gate: &str, outcome: &str, by: &str) -> Then {
        Then::Asked(Asked { gate: gate.into(), outcome: outcome.into(), deciders: vec![by.into()], approvers: None, quorum: 1 })
    }

    fn run(draft: &AgentsConfig, live: &AgentsConfig, calls: &[RecordedCall], grants: &[StandingGrant]) -> Report {
        let registry = Registry::builtin();
        replay(&Replay { draft, live, registry: &registry, calls, grants, since_ms: 0, until_ms: 24 * HOUR, agent: None })
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
        assert_eq!(changes, [("anyone", "root", 9), ("anyone", "finance and root", 1)]);
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
        assert!(report.notes.iter().any(|n| n.starts_with("1 calls have no recorded confidence")), "{:?}", report.notes);
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
        assert!(text.contains("\n  anyone    root                  9\n"), "{text}");
        assert!(text.contains("\n  all                                12     12.0  1970-01-01 10:00 (12)     22     22.0"), "{text}");
    }
}
