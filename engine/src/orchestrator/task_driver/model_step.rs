//! One model step: the model is asked (or a client's call taken as its proposal), and its
//! reply recorded in one write: text, calls, the gates' verdicts and approvals, the task's status.

use anyhow::Context;
use domain::{
    AuditKind, EventBody, Risk, TaskStatus,
    wire::{ApprovalContext, AssistantDelta, RiskAssessment, Spend, Usage},
};
use serde_json::json;
use sqlx::Connection;

use super::{Drove, TaskDriver, step_outcome};
use crate::{
    agents::{Agent, Gate},
    clock::{new_call_id, new_id, now_ms},
    model::{ModelRequest, ProposedCall},
    policy::{self, Verdict},
    store::{
        Write,
        approvals::{self, NewApproval},
        calls::{self, NewCall},
        client_calls::ClientCall,
        conversations, events, grants, outbox,
        tasks::{self, Lease, TaskRow},
    },
    tools::{Description, answer, plan, schema},
};

impl TaskDriver {
    /// Calls the model once and records its reply: text, calls, approvals, the task's new status.
    /// A client's call (`client`) is recorded the same way, without asking a model.
    /// When the reply leaves the driver nothing more to do (the task waits for a human, or it
    /// ended and has no supervisor), the same write releases the lease: `Drove::Released`.
    pub(super) async fn model_step(&self, task: &TaskRow, client: Option<&ClientCall>, lease: &Lease) -> crate::Result<Drove> {
        let conversation =
            conversations::get(&self.ctx.store, &task.conversation_id).await?.context("BUG: a task's conversation exists")?;
        // A worker's task is driven by the worker agent, not the conversation's.
        let agent_name = task.agent.as_deref().unwrap_or(&conversation.agent);
        let agent = self.ctx.agents.get(agent_name).unwrap_or_else(|| self.ctx.agents.default_agent());
        // A client's call needs only its own task's events (no transcript: no model is asked).
        // Its conversation holds every call the client made, so reading all of it would grow
        // with each one; a client's conversation has no model usage for budgets to count.
        let history = match client {
            Some(_) => events::of_task(&self.ctx.store, &conversation.id, &task.id).await?,
            None => events::about_after(&self.ctx.store, &conversation.id, 0, conversation.last_seq).await?,
        };
        let asked = request_of(task, &history);
        // An answer a reviewer must approve first is not shown while it is written.
        let held = agent.final_response_gate();
        let reply = match client {
            // An outside client's call: its one step is the call, then the task ends.
            Some(call) => crate::orchestrator::client_calls::reply(call, task.steps),
            None => {
                let messages = self.transcript_for(task, &history).await?;
                // Reply text streams to the chat as unstored deltas while the model writes it.
                let bus = self.ctx.store.bus().clone();
                let (conversation_id, task_id) = (conversation.id.clone(), task.id.clone());
                let after_seq = history.last().map_or(0, |e| e.seq);
                let on_text = move |offset: usize, text: &str| {
                    let (conversation_id, task_id, text) = (conversation_id.clone(), task_id.clone(), text.to_owned());
                    bus.publish_delta(AssistantDelta { conversation_id, task_id, after_seq, offset, text })
                };
                let request = ModelRequest {
                    agent,
                    tools: agent.tools.iter().filter_map(|name| self.ctx.tools.get(name)).map(|t| t.spec()).collect(),
                    messages,
                    on_text: if held.is_some() { None } else { Some(&on_text) },
                };
                let model = self.ctx.models.for_agent(&agent.name).context("BUG: every configured agent has a model")?;
                match model.respond(&request).await {
                    Ok(reply) => reply,
                    Err(err) => {
                        tracing::warn!(task_id = %task.id, error = ?err, "model failed");
                        self.fail(task, format!("the model failed: {err:#}"), lease).await?;
                        return Ok(Drove::Holding);
                    }
                }
            }
        };
        tracing::debug!(task_id = %task.id, agent = agent.name, calls = reply.calls.len(), "model replied");
        let mut w = self.ctx.store.write_as(lease).await?;
        // Counting the step only while the task is working makes an abort win over a late reply,
        // and only from the step read before asking the model makes a reply to a step someone
        // else already took be dropped.
        let Some(step) = tasks::take_step(&mut w.tx, &task.id, task.steps).await? else {
            tracing::info!(task_id = %task.id, step = task.steps, "the model's reply came for a step no longer open; dropped");
            return Ok(Drove::Holding);
        };
        let cid = &conversation.id;
        let spent = self.record_usage(&mut w, task, agent, reply.usage, &history).await?;
        let context = ApprovalContext {
            request: asked.clone(),
            reasoning: reply.text.clone().filter(|t| !t.trim().is_empty()),
            done: steps_done(task, &history),
            spend: None,
        };
        let shaped = step_outcome::shape_reply(reply.text, reply.calls, held.is_some());
        if let Some(text) = shaped.message {
            let worker = task.parent_call_id.as_ref().map(|_| agent.name.clone());
            w.append(cid, EventBody::AssistantMessage { task_id: task.id.clone(), text, agent: worker }).await?;
        }
        let held = held.filter(|_| shaped.answer_held);
        let mut states = Vec::new();
        // Each call gets Countersign's own id; the model sees that id in the history from now on.
        // Its numbers are read as its tool's schema types them before any check or record (a
        // model's or a client's `1004.0` is `1004`; docs/api.md, `POST /api/approvals/{id}/approve`).
        let proposed: Vec<ProposedCall> = shaped
            .calls
            .into_iter()
            .map(|c| ProposedCall { id: new_call_id(), args: self.ctx.tools.exact_args(&c.tool, c.args), ..c })
            .collect();
        for (position, call) in proposed.iter().enumerate() {
            let held_answer = held.filter(|_| call.tool == answer::NAME);
            let tool = self.ctx.tools.get(&call.tool).filter(|_| agent.tools.contains(&call.tool) || held_answer.is_some());
            let (Description { mut summary, warnings }, risk, assessment) = match tool {
                Some(t) => {
                    let mut described = t.describe(&mut w.tx, &call.args, &asked).await?;
                    // A plan can be undone no better than its hardest step.
                    let mut plan_reversibility = None;
                    if call.tool == plan::NAME {
                        // A plan reads as its steps, each as its own tool describes it.
                        let mut parts = Vec::new();
                        for (tool, args) in plan::steps(&call.args) {
                            parts.push(match self.ctx.tools.get(tool) {
                                Some(t) => {
                                    let step = t.describe(&mut w.tx, args, &asked).await?;
                                    let step_reversibility = t.assess(args, &step).reversibility;
                                    plan_reversibility = Some(plan::harder(plan_reversibility, step_reversibility));
                                    step.summary
                                }
                                None => tool.to_owned(),
                            });
                        }
                        described.summary = plan::summary(&parts);
                    }
                    let mut assessment = RiskAssessment { confidence: call.confidence, ..t.assess(&call.args, &described) };
                    if let Some(reversibility) = plan_reversibility {
                        assessment.reversibility = reversibility;
                    }
                    assessment.warnings = described.warnings.clone();
                    (described, t.risk(&call.args), Some(assessment))
                }
                None => (Description { summary: format!("Unknown tool {}", call.tool), warnings: Vec::new() }, domain::Risk::High, None),
            };
            let user = conversation.owner.as_deref().unwrap_or_default();
            let gating = match held_answer {
                Some(gate) => {
                    Some(policy::Gating { requirement: Some(policy::Requirement::one(gate)), shadows: Vec::new(), rule_errors: Vec::new() })
                }
                None => tool.map(|t| {
                    let call = policy::Call { tool: t.spec(), args: &call.args, user, confidence: call.confidence, spent: &spent };
                    policy::check(agent, &call)
                }),
            };
            let (requirement, shadows, rule_errors) =
                gating.map_or((None, Vec::new(), Vec::new()), |g| (g.requirement, g.shadows, g.rule_errors));
            let gate = requirement.as_ref().map(|r| &r.gate);
            if !rule_errors.is_empty() {
                // Fail-closed asks a human and tells them why; fail-open runs the call. Both are audited.
                if !agent.fail_open {
                    summary.push_str(" — a gate rule could not be checked, so a human decides");
                }
                let kind = if agent.fail_open { AuditKind::PolicyFailOpen } else { AuditKind::PolicyFailClosed };
                let errors: Vec<&str> = rule_errors.iter().map(|e| e.error.as_str()).collect();
                w.audit(
                    kind,
                    &agent.name,
                    json!({ "call_id": call.id, "conversation_id": cid, "tool": call.tool, "args": call.args, "rule_errors": errors }),
                );
            }
            let mut facts = policy::Facts {
                tool: &call.tool,
                known_tool: tool.is_some(),
                violations: tool
                    .map(|t| {
                        let mut violations = schema::violations(&t.spec().input_schema, &call.args);
                        if call.tool == plan::NAME {
                            violations.extend(plan::step_violations(&call.args, &agent.tools, &self.ctx.tools));
                        }
                        violations
                    })
                    .unwrap_or_default(),
                gate,
                refused_before: None,
                grant: None,
            };
            // A grant in force for the tool that does not cover this call, and why (for "Why?").
            let mut uncovered = None;
            if facts.history_matters() {
                facts.refused_before = approvals::refused_before(&mut *w.tx, cid, &call.tool, &call.args).await?;
                // No standing permission answers a question or lets an answer through.
                if call.tool != crate::tools::ask::NAME
                    && held_answer.is_none()
                    && let Some(gate) = gate
                {
                    let asking = crate::grant_cover::Asking {
                        gate,
                        agent: &agent.name,
                        policy_version: &self.ctx.agents.version,
                        task: task.id.as_str(),
                        args: &call.args,
                    };
                    let requirement = requirement.as_ref().expect("BUG: a gate without its requirement");
                    let requester = Some(user).filter(|u| !u.is_empty());
                    (facts.grant, uncovered) =
                        covering_grant(&mut w, &self.ctx.agents.groups, cid, &call.tool, asking, requirement, requester).await?;
                }
            }
            let mut verdict = policy::classify(facts);
            // Running under a grant counts one of its uses (a conditional write: if the grant has
            // none left after all, a human is asked).
            let mut grant = None;
            if let Verdict::Run { grant: Some(id) } = &verdict {
                grant = grants::use_grant(&mut w.tx, id).await?;
                match (&grant, gate) {
                    (Some(g), _) => w.audit(
                        AuditKind::GrantUsed,
                        &g.created_by,
                        json!({ "grant_id": g.id, "call_id": call.id, "conversation_id": cid, "tool": call.tool, "args": call.args, "uses": g.uses }),
                    ),
                    (None, Some(gate)) => verdict = Verdict::Ask { gate },
                    (None, None) => return Err(anyhow::anyhow!("BUG: a grant was consulted for a call no gate stops").into()),
                }
            }
            // Why it was asked, or not (the card and the audit trail say it).
            let why_gate = |g: &Gate| match (tool, &requirement) {
                (Some(t), Some(r)) if r.gate.name == g.name => policy::why_required(
                    r,
                    agent,
                    &policy::Call { tool: t.spec(), args: &call.args, user, confidence: call.confidence, spent: &spent },
                ),
                (Some(t), _) => policy::why_gated(
                    g,
                    agent,
                    &policy::Call { tool: t.spec(), args: &call.args, user, confidence: call.confidence, spent: &spent },
                ),
                (None, _) => format!("gate \"{}\" matched", g.name),
            };
            let used = grant.as_ref().map(|g| step_outcome::UsedGrant { by: &g.created_by, id: &g.id });
            let why = step_outcome::why(&verdict, &call.tool, gate, &shadows, uncovered.as_ref(), used, why_gate);
            // Shadow gates would have asked before a call that runs unasked: say so, ask no one.
            // Each one records its hit, so that its count does not hang on the order of the gates.
            let shadowed: &[&Gate] = if matches!(verdict, Verdict::Run { grant: None }) { shadows.as_slice() } else { &[] };
            for gate in shadowed {
                w.audit(
                    AuditKind::PolicyShadowHit,
                    &agent.name,
                    json!({ "gate": gate.name, "call_id": call.id, "conversation_id": cid, "tool": call.tool, "args": call.args }),
                );
                self.ctx.metrics.shadow_hit(&gate.name);
                crate::store::shadow_hits::record(&mut w.tx, cid, &call.id, &gate.name, &call.tool, &summary).await?;
            }
            // The card's badge names them all, as an approval asked under several gates is named.
            let shadow_gate = (!shadowed.is_empty()).then(|| shadowed.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(" + "));
            // The draft (COUNTERSIGN_AGENTS_DRAFT) is put to the same call: where it would do
            // otherwise, a shadow hit says so. What happens to the call is the live policy's alone.
            if let (Some(draft), Some(t)) = (self.ctx.draft.as_deref(), tool)
                && !matches!(verdict, Verdict::Invalid { .. })
            {
                let draft_call = policy::Call { tool: t.spec(), args: &call.args, user, confidence: call.confidence, spent: &spent };
                if let Some(judged) = crate::draft::judge(draft, &self.ctx.tools, &agent.name, &draft_call, held_answer.is_some())
                    && let Some(difference) = crate::draft::difference(requirement.as_ref(), &judged)
                {
                    let hit = DraftHit { cid, call, summary: &summary, agent: &agent.name, version: &draft.version };
                    self.record_draft_hit(&mut w, hit, &difference).await;
                }
            }
            w.append(
                cid,
                EventBody::ToolCall {
                    task_id: task.id.clone(),
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    agent: agent.name.clone(),
                    args: call.args.clone(),
                    summary: summary.clone(),
                    risk,
                    grant_id: grant.map(|g| g.id),
                    warnings,
                    shadow_gate,
                    why: why.clone(),
                },
            )
            .await?;
            let new_call = NewCall {
                id: &call.id,
                task_id: &task.id,
                conversation_id: cid,
                step,
                position: position as i64,
                tool: &call.tool,
                args: &call.args,
                state: verdict.call_state(),
            };
            states.push(verdict.call_state());
            calls::insert(&mut w.tx, new_call).await?;
            match verdict {
                Verdict::Invalid { output } | Verdict::RepeatRefused { output } => {
                    w.append(cid, EventBody::ToolResult { task_id: task.id.clone(), call_id: call.id.clone(), ok: false, output }).await?;
                }
                Verdict::Ask { gate } => {
                    // A budget gate shows what was spent against its limits.
                    let spend = gate.rule.budget().map(|b| Spend {
                        spent: *spent.per(b.per),
                        token_threshold: b.tokens,
                        cost_threshold: b.cost_usd,
                        per: b.per.as_str().into(),
                    });
                    let context = &ApprovalContext { spend, ..context.clone() };
                    // The gate's own view of the risk (CEL in its `assessment`), over the tool's.
                    let gates = requirement.as_ref().map_or(&[][..], |r| r.gates.as_slice());
                    let assessment = match (tool, assessment.clone()) {
                        (Some(t), Some(a)) => {
                            let facts = policy::Call { tool: t.spec(), args: &call.args, user, confidence: call.confidence, spent: &spent };
                            Some(gates.iter().fold(a, |a, g| policy::assess(g, agent, &facts, a)))
                        }
                        (_, a) => a,
                    };
                    let approvers = match gate.approvers.is_empty() {
                        true => None,
                        false => {
                            let shares = requirement.as_ref().map(|r| r.shares()).unwrap_or_default();
                            let groups = &self.ctx.agents.groups;
                            Some(crate::people::resolve::resolve_requirement(groups, &mut w, &gate.approvers, &shares).await?)
                        }
                    };
                    let notify = self.email_recipients(&mut w, gate, approvers.as_ref()).await?;
                    let suggestion = match gate.rules.grantable && domain::naming::grantable(&call.tool) {
                        true => grant_suggestion(&mut w, cid, call, self.ctx.agents.suggest_grant_after).await?,
                        false => None,
                    };
                    let proposal = Proposal {
                        call,
                        summary: &summary,
                        risk,
                        context,
                        assessment: assessment.as_ref(),
                        approvers,
                        notify,
                        suggestion,
                        why: why.clone(),
                        policy_version: &self.ctx.agents.version,
                    };
                    ask(&mut w, task, agent, gate, proposal).await?;
                }
                Verdict::Run { .. } => {}
            }
        }
        let outcome = step_outcome::outcome(&states, task.parent_call_id.is_some());
        if let Some(status) = outcome.status {
            tasks::transition(&mut w, task, &[TaskStatus::Working], status, None).await?;
        }
        if let Some(hook) = &self.ctx.before_commit {
            hook(&format!("step:{}", task.id))?;
        }
        if outcome.release {
            w.release_lease_at_commit();
        }
        w.commit().await?;
        Ok(if outcome.release { Drove::Released } else { Drove::Holding })
    }

    /// Records a model step's usage, priced from `[prices]`, and returns the spend so far
    /// including it: the task's and the conversation's (folded from `history`, which is
    /// everything before this step).
    async fn record_usage(
        &self,
        w: &mut Write,
        task: &TaskRow,
        agent: &Agent,
        usage: Option<Usage>,
        history: &[domain::Event],
    ) -> crate::Result<policy::Spent> {
        let mut spent = policy::Spent::of(history, &task.id);
        if let Some(mut usage) = usage {
            let model = agent.model_name();
            usage.cost_usd = self.ctx.agents.prices.get(model).map(|p| p.cost(&usage));
            spent.task.add(&usage);
            spent.conversation.add(&usage);
            w.append(&task.conversation_id, EventBody::ModelUsage { task_id: task.id.clone(), model: model.to_owned(), usage }).await?;
        }
        Ok(spent)
    }

    /// Records that the draft would do otherwise with a call (`difference`), as a shadow gate's
    /// hit is: a `policy.shadow_hit` audit entry, its count in `/metrics` and a row for the
    /// queue's Shadow hits, named `draft:…`. The row is written in a savepoint of the step's
    /// write, so failing to record it is logged and changes nothing of the call.
    async fn record_draft_hit(&self, w: &mut Write, hit: DraftHit<'_>, difference: &crate::draft::Difference) {
        let DraftHit { cid, call, summary, agent, version } = hit;
        w.audit(
            AuditKind::PolicyShadowHit,
            agent,
            json!({
                "gate": difference.gate, "draft_version": version, "difference": difference.what,
                "call_id": call.id, "conversation_id": cid, "tool": call.tool, "args": call.args,
            }),
        );
        self.ctx.metrics.shadow_hit(&difference.gate);
        let summary = format!("{summary} — {}", difference.what);
        // The row has no column for the draft's version: its gate carries it, so that hits of
        // different drafts stay apart.
        let gate = crate::store::shadow_hits::stored_gate(&difference.gate, version);
        if let Err(err) = record_apart(w, cid, call, &gate, &summary).await {
            tracing::warn!(call_id = %call.id, gate = %difference.gate, error = ?err, "the draft's shadow hit was not recorded; the call goes on");
        }
    }
}

/// A call the draft would treat otherwise, and what its shadow hit names.
struct DraftHit<'a> {
    cid: &'a domain::ConversationId,
    call: &'a ProposedCall,
    /// The call's summary ("Refund $150.00 on order 1004").
    summary: &'a str,
    agent: &'a str,
    /// The draft's configuration version.
    version: &'a str,
}

/// Records a shadow hit in a savepoint of `w`: if that fails, the write goes on without it.
async fn record_apart(w: &mut Write, cid: &domain::ConversationId, call: &ProposedCall, gate: &str, summary: &str) -> anyhow::Result<()> {
    let mut savepoint = w.tx.begin().await.context("failed to open a savepoint")?;
    if let Err(err) = crate::store::shadow_hits::record(&mut savepoint, cid, &call.id, gate, &call.tool, summary).await {
        savepoint.rollback().await.context("failed to roll back the savepoint")?;
        return Err(err);
    }
    savepoint.commit().await.context("failed to release the savepoint")
}

/// The turn's calls already done, as their one-line summaries ("Refund $25.00 on order 1002").
fn steps_done(task: &TaskRow, history: &[domain::Event]) -> Vec<String> {
    let mut summaries = std::collections::HashMap::new();
    let mut done = Vec::new();
    for event in history {
        match &event.body {
            EventBody::ToolCall { task_id, call_id, summary, .. } if task_id == &task.id => {
                summaries.insert(call_id.clone(), summary.clone());
            }
            EventBody::ToolResult { call_id, ok: true, .. } => done.extend(summaries.remove(call_id)),
            _ => {}
        }
    }
    done
}

/// What the user asked for in this turn: the task's own message, or for a worker (sub-agent) the
/// conversation's latest one.
fn request_of(task: &TaskRow, history: &[domain::Event]) -> String {
    let user_text = |own: bool| {
        history.iter().rev().find_map(|e| match &e.body {
            EventBody::UserMessage { task_id, text, reply_to: None, .. } if !own || task_id == &task.id => Some(text.clone()),
            _ => None,
        })
    };
    user_text(true).or_else(|| user_text(false)).unwrap_or_default()
}

/// A call a human is asked about, as the reviewer will read it.
struct Proposal<'a> {
    call: &'a ProposedCall,
    summary: &'a str,
    risk: Risk,
    context: &'a ApprovalContext,
    assessment: Option<&'a RiskAssessment>,
    /// The gate's `approvers` as people now (none: whoever sees it decides).
    approvers: Option<domain::rules::Approvers>,
    /// Whom its gate emails: (person, address).
    notify: Vec<(String, String)>,
    /// "Always allow" offered to someone who approved calls like it before.
    suggestion: Option<domain::wire::GrantSuggestion>,
    /// Why it was asked: the gate, its rule and what the rule looked at.
    why: Option<String>,
    /// The configuration version that asks it.
    policy_version: &'a str,
}

/// The oldest grant in force for the tool that covers the call (engine/src/grant_cover.rs) and
/// whose giver could approve it alone now, and otherwise the first one that does not, with why
/// not.
async fn covering_grant(
    w: &mut Write,
    groups: &std::collections::BTreeMap<String, Vec<String>>,
    cid: &domain::ConversationId,
    tool: &str,
    asking: crate::grant_cover::Asking<'_>,
    requirement: &policy::Requirement<'_>,
    requester: Option<&str>,
) -> crate::Result<(Option<domain::GrantId>, Option<(domain::GrantId, crate::grant_cover::Uncovered)>)> {
    let mut uncovered = None;
    // The call's approvers as people now, read once and only if a grant gets that far.
    let mut approvers: Option<Option<domain::rules::Approvers>> = None;
    for grant in grants::in_force(&mut *w.tx, cid, tool).await? {
        let decoded = grant.decoded()?;
        let terms = crate::grant_cover::Terms {
            gate: grant.gate.as_deref(),
            agent: grant.agent.as_deref(),
            policy_version: grant.policy_version.as_deref(),
            step: grant.task_id.as_deref().zip(decoded.step_args.as_ref()),
            bounds: decoded.bounds.as_ref(),
        };
        let mut verdict = crate::grant_cover::covers(terms, asking);
        if verdict.is_ok() {
            if approvers.is_none() {
                approvers = Some(match asking.gate.approvers.is_empty() {
                    true => None,
                    false => {
                        let shares = requirement.shares();
                        Some(crate::people::resolve::resolve_requirement(groups, w, &asking.gate.approvers, &shares).await?)
                    }
                });
            }
            let giver = crate::store::users::credentials(&mut *w.tx, &grant.created_by).await?;
            let giver =
                giver.as_ref().map(|c| domain::rules::Decider { name: &c.user.username, is_admin: c.user.role == domain::Role::Admin });
            verdict = crate::grant_cover::giver_may_decide(asking.gate, giver, requester, approvers.as_ref().and_then(Option::as_ref));
        }
        match verdict {
            Ok(()) => return Ok((Some(grant.id), None)),
            Err(why) => {
                uncovered.get_or_insert((grant.id, why));
            }
        }
    }
    Ok((None, uncovered))
}

/// How long the grant a suggestion offers lasts.
const SUGGESTED_GRANT_SECS: u64 = 24 * 3600;

/// The person who approved `call`'s tool with the same shape of arguments at least `after` times
/// in this conversation (the most often, if several), offered "always allow" for a day.
async fn grant_suggestion(
    w: &mut Write,
    conversation_id: &domain::ConversationId,
    call: &ProposedCall,
    after: u32,
) -> crate::Result<Option<domain::wire::GrantSuggestion>> {
    if after == 0 {
        return Ok(None);
    }
    let shape = domain::wire::args_shape(&call.args);
    let mut counts: std::collections::BTreeMap<String, u32> = Default::default();
    for (by, args) in approvals::approved_args(&mut *w.tx, conversation_id, &call.tool).await? {
        if domain::wire::args_shape(&args) == shape {
            *counts.entry(by).or_default() += 1;
        }
    }
    Ok(counts.into_iter().filter(|(_, n)| *n >= after).max_by_key(|(_, n)| *n).map(|(by, count)| domain::wire::GrantSuggestion {
        by,
        count,
        grant: domain::wire::GrantRequest { ttl_secs: Some(SUGGESTED_GRANT_SECS), ..Default::default() },
    }))
}

/// Records the approval a gate asks for: the queue row, its audit entry, the `approval-required`
/// event, and for a chat confirmation the question in the chat.
async fn ask(w: &mut Write, task: &TaskRow, agent: &Agent, gate: &Gate, proposal: Proposal<'_>) -> crate::Result<()> {
    let Proposal { call, summary, risk, context, assessment, approvers, notify, suggestion, why, policy_version } = proposal;
    let cid = &task.conversation_id;
    let approval_id = new_id();
    let asked_at = now_ms();
    let deadline = asked_at + gate.timeout.as_millis() as i64;
    let new_approval = NewApproval {
        id: &approval_id,
        call_id: &call.id,
        task_id: &task.id,
        conversation_id: cid,
        agent: &agent.name,
        tool: &call.tool,
        args: &call.args,
        gate: &gate.name,
        summary,
        risk,
        timeout_action: gate.timeout_action,
        deadline,
        in_chat: gate.in_chat,
        rules: gate.rules,
        escalate_at: gate.escalate_after.map(|after| asked_at + after.as_millis() as i64),
        reminders: gate.reminders.map(|r| (r.interval.as_millis() as i64, r.max)),
        context,
        assessment,
        retries: if gate.timeout_action == domain::TimeoutAction::Retry { gate.max_retries } else { 0 },
        escalation_target: gate.escalation_target.as_deref(),
        approvers: approvers.as_ref(),
        notify: &notify,
        policy_version,
    };
    approvals::insert(&mut w.tx, new_approval).await?;
    super::approval_emails::queue_emails(w, &approval_id, &notify, 0).await?;
    if gate.notify.iter().any(|c| c == "slack") {
        let post = outbox::Message::Slack { action: outbox::SlackAction::Post, approval_id: &approval_id };
        outbox::queue(&mut w.tx, post).await?;
    }
    w.audit(
        AuditKind::ApprovalRequested,
        &agent.name,
        json!({
            "approval_id": approval_id, "call_id": call.id, "conversation_id": cid, "task_id": task.id,
            "tool": call.tool, "args": call.args, "gate": gate.name, "risk": risk.as_str(), "deadline": crate::clock::rfc3339(deadline),
            "why": why, "policy_version": policy_version,
        }),
    );
    w.append(
        cid,
        EventBody::ApprovalRequired {
            task_id: task.id.clone(),
            approval_id: approval_id.clone(),
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            args: call.args.clone(),
            gate: gate.name.clone(),
            summary: summary.to_owned(),
            risk,
            deadline: crate::clock::rfc3339(deadline),
            in_chat: gate.in_chat,
            rules: gate.rules,
            assessment: assessment.cloned(),
            resent: 0,
            spend: context.spend.clone(),
            approvers: approvers.map(Box::new),
            suggestion: suggestion.map(Box::new),
        },
    )
    .await?;
    if gate.in_chat {
        let question = crate::orchestrator::decisions::question(summary, false);
        w.append(cid, EventBody::ConfirmationAsked { task_id: task.id.clone(), approval_id, call_id: call.id.clone(), question }).await?;
    }
    Ok(())
}
