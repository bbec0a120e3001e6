//! A person's decision on an approval (one, or all of a turn's). Each is one transaction: the
//! authority checks (`authority.rs`), the conditional approval update, the call's new state, the
//! events, and the task's status (docs/architecture.md, decision 3).

use domain::{ApprovalId, TaskId};

use domain::{
    ApprovalOutcome, ApprovalState, AuditKind, CallState, EventBody, Role, TaskStatus, rules,
    wire::{DecisionOutcome, FieldProblem, GrantRequest},
};
use serde_json::{Value, json};

use super::{
    Decisions,
    authority::{Actor, Decision, breached, check_answer, four_eyes, pending_approval, visible_pending_approval},
};
use crate::{
    Error,
    clock::now_ms,
    store::{
        Write, WriteScope,
        approvals::{self, ApprovalRow},
        calls, delegations, outbox,
        tasks::{self, TaskRow},
    },
    tools::schema,
};

/// What an approval did ([`Decisions::approve_checked`]).
pub(super) enum Approved {
    /// Counted toward a quorum or a share; the call still waits (outcome `pending`).
    Counted(DecisionOutcome),
    /// The requirement is met: the call is approved.
    Decided(DecisionOutcome),
}

impl Decisions {
    /// Approves or rejects one approval, then lets the task go on. The attempt is counted against
    /// the person's decision limit first; then one write: the approval read once and checked (it
    /// exists for them, it is pending, they may decide it) and the decision recorded. A refused
    /// decision keeps nothing but its count: probing ids, hidden or not, costs the same.
    pub async fn decide(&self, approval_id: &ApprovalId, decision: Decision, actor: &Actor) -> Result<DecisionOutcome, Error> {
        self.count_attempt(actor).await?;
        self.decide_one(approval_id, decision, actor).await
    }

    /// Several approvals, each decided as [`Self::decide`] in a write of its own, one after
    /// another (a refusal stops the rest; those before it stay decided), counted as one attempt:
    /// a request that answers several (an AG-UI resume) uses one decision of the limit, as
    /// Approve All does.
    pub async fn decide_several(&self, decisions: Vec<(ApprovalId, Decision)>, actor: &Actor) -> Result<Vec<DecisionOutcome>, Error> {
        self.count_attempt(actor).await?;
        let mut outcomes = Vec::with_capacity(decisions.len());
        for (approval_id, decision) in decisions {
            outcomes.push(self.decide_one(&approval_id, decision, actor).await?);
        }
        Ok(outcomes)
    }

    /// [`Self::decide`] once its attempt is counted.
    async fn decide_one(&self, approval_id: &ApprovalId, decision: Decision, actor: &Actor) -> Result<DecisionOutcome, Error> {
        let mut w = self.ctx.store.write(WriteScope::Approval(approval_id)).await?;
        // Refused: the write is dropped and nothing of the decision is kept.
        let (outcome, go_on) = self.decide_in(&mut w, approval_id, decision, actor).await?;
        let Some(task_id) = go_on else {
            w.commit().await?;
            return Ok(outcome);
        };
        // The task's driver starts with the lease this write claims (none if a driver holds it).
        let lease = self.driver.claim_in(&mut w, &task_id).await?;
        w.commit().await?;
        self.driver.drive_with(&task_id, lease);
        Ok(outcome)
    }

    /// The decision inside its write: the outcome, and the task to go on with (`None`: counted
    /// toward a quorum, the call still waits).
    async fn decide_in(
        &self,
        w: &mut Write,
        approval_id: &ApprovalId,
        decision: Decision,
        actor: &Actor,
    ) -> Result<(DecisionOutcome, Option<TaskId>), Error> {
        w.hold_authority().await?;
        let approval = visible_pending_approval(&mut w.tx, approval_id, actor).await?;
        let actor = &self.decider(w, actor, &approval).await?;
        let task = self.waiting_task(w, &approval.task_id).await?;
        let outcome = match decision {
            Decision::Approve { args, grant } => {
                let edited = self.vet_approval(&approval, actor, args, grant.is_some())?;
                match self.approve_checked(w, &task, &approval, actor, edited, grant).await? {
                    Approved::Counted(counted) => return Ok((counted, None)),
                    Approved::Decided(outcome) => outcome,
                }
            }
            Decision::Reject { reason } => {
                approval.rules().check_rejection(reason.as_deref()).map_err(breached)?;
                self.apply(w, &task, &approval, ApprovalOutcome::Rejected, actor, reason, None).await?
            }
            Decision::Defer { guidance } => self.apply(w, &task, &approval, ApprovalOutcome::Deferred, actor, Some(guidance), None).await?,
        };
        Ok((outcome, Some(task.id)))
    }

    /// Decides every pending approval of a task the same way (Approve All / Reject All).
    pub async fn decide_all(&self, task_id: &TaskId, decision: Decision, actor: &Actor) -> Result<Vec<DecisionOutcome>, Error> {
        self.decide_each(task_id, actor, |_| Some(decision.clone())).await
    }

    /// Decides every pending approval of a task in one write, each as `choose` says (a batch:
    /// some approved, some rejected). Every rule is checked for every approval before anything is
    /// recorded, so a batch is decided whole or not at all; an approval `choose` has no decision
    /// for fails it (`Invalid`), and so does an approved question (it needs an answer on its card).
    /// The batch is one attempt against the person's decision limit.
    pub async fn decide_each(
        &self,
        task_id: &TaskId,
        actor: &Actor,
        choose: impl Fn(&ApprovalRow) -> Option<Decision>,
    ) -> Result<Vec<DecisionOutcome>, Error> {
        self.count_attempt(actor).await?;
        let mut w = self.ctx.store.write(WriteScope::Task(task_id)).await?;
        w.hold_authority().await?;
        let task = self.waiting_task(&mut w, task_id).await?;
        let pending = approvals::pending_for_task(&mut *w.tx, task_id).await?;
        if pending.is_empty() {
            return Err(Error::WrongState(format!("task {task_id} has no pending approval")));
        }
        let mut chosen = Vec::new();
        for approval in &pending {
            let Some(decision) = choose(approval) else {
                return Err(Error::Invalid {
                    message: format!("approval {} ({}) has no decision: decide every pending call of the task", approval.id, approval.tool),
                    details: vec![FieldProblem::new("/", format!("approval {} is not decided", approval.id))],
                });
            };
            let actor = self.decider(&mut w, actor, approval).await?;
            let (outcome, reason) = match decision {
                Decision::Approve { .. } => (ApprovalOutcome::Approved, None),
                Decision::Reject { reason } => (ApprovalOutcome::Rejected, reason),
                Decision::Defer { guidance } => (ApprovalOutcome::Deferred, Some(guidance)),
            };
            if outcome == ApprovalOutcome::Rejected {
                approval.rules().check_rejection(reason.as_deref()).map_err(breached)?;
            }
            if outcome == ApprovalOutcome::Approved {
                four_eyes(&actor, approval)?;
                if approval.tool == crate::tools::ask::NAME {
                    return Err(Error::Invalid {
                        message: "the turn asks you a question: answer it on its card before approving the rest".into(),
                        details: vec![FieldProblem::new("/", "a question needs an answer, not Approve All")],
                    });
                }
            }
            chosen.push((approval, actor, outcome, reason));
        }
        let mut outcomes = Vec::new();
        for (approval, actor, outcome, reason) in chosen {
            if outcome == ApprovalOutcome::Approved
                && let Some(counted) = self.count_toward_quorum(&mut w, &task, approval, &actor, false).await?
            {
                outcomes.push(counted);
                continue;
            }
            outcomes.push(self.apply(&mut w, &task, approval, outcome, &actor, reason, None).await?);
        }
        let lease = self.driver.claim_in(&mut w, task_id).await?;
        w.commit().await?;
        self.driver.drive_with(task_id, lease);
        Ok(outcomes)
    }

    /// What an approval by `actor` (already [`Self::decider`]) must pass before anything is
    /// recorded, on every door that approves one call (the buttons, the API, links, the chat's
    /// yes): a question's answer, the gate's rules on edits, four-eyes, and no "always allow"
    /// over a gate that asks each call on its own. Answers the edited arguments, validated (none:
    /// the call runs as proposed).
    pub(super) fn vet_approval(
        &self,
        approval: &ApprovalRow,
        actor: &Actor,
        args: Option<Value>,
        grant: bool,
    ) -> Result<Option<Value>, Error> {
        // Numbers as the tool's schema types them, before any rule or check reads the
        // edit: `1003.0` is `1003`, the same call (docs/api.md, `POST /api/approvals/{id}/approve`).
        let args = args.map(|args| self.ctx.tools.exact_args(&approval.tool, args));
        if approval.tool == crate::tools::ask::NAME {
            check_answer(approval, args.as_ref(), grant)?;
        }
        approval.rules().check_approval(&approval.args(), args.as_ref()).map_err(breached)?;
        four_eyes(actor, approval)?;
        if grant && approval.rules().quorum <= 1 {
            self.grant_gate(approval)?;
        }
        match args {
            Some(args) if args != approval.args() => Ok(Some(self.validated(approval, args)?)),
            _ => Ok(None),
        }
    }

    /// An approval that passed [`Self::vet_approval`], inside the caller's write: counted
    /// toward the quorum or the shares while the requirement is still unmet (the call waits), or
    /// the call approved (and, with `grant`, allowed for good). Refusals here (the same person
    /// twice, an approval that adds to no unmet share) come before anything is written to the
    /// approval; the caller's write is then dropped whole.
    pub(super) async fn approve_checked(
        &self,
        w: &mut Write,
        task: &TaskRow,
        approval: &ApprovalRow,
        actor: &Actor,
        edited: Option<Value>,
        grant: Option<GrantRequest>,
    ) -> Result<Approved, Error> {
        if let Some(counted) = self.count_toward_quorum(w, task, approval, actor, grant.is_some()).await? {
            return Ok(Approved::Counted(counted));
        }
        let approved = edited.clone().unwrap_or_else(|| approval.args());
        let outcome = self.apply(w, task, approval, ApprovalOutcome::Approved, actor, None, edited).await?;
        if let Some(grant) = grant {
            self.grant(w, task, approval, actor, grant, &approved).await?;
        }
        Ok(Approved::Decided(outcome))
    }

    pub(super) async fn waiting_task(&self, w: &mut Write, task_id: &TaskId) -> Result<TaskRow, Error> {
        let task = tasks::get(&mut *w.tx, task_id).await?.ok_or_else(|| Error::Unknown(format!("task {task_id} does not exist")))?;
        if task.status() != TaskStatus::InputRequired {
            return Err(Error::WrongState(format!("task {task_id} is {}, not waiting for a decision", task.status().as_str())));
        }
        Ok(task)
    }

    fn validated(&self, approval: &ApprovalRow, args: Value) -> Result<Value, Error> {
        let tool = self
            .ctx
            .tools
            .get(&approval.tool)
            .ok_or_else(|| Error::WrongState(format!("tool {} is no longer available", approval.tool)))?;
        let mut details = schema::violations(&tool.spec().input_schema, &args);
        if approval.tool == crate::tools::plan::NAME {
            // An edited plan may only drop or change steps into calls the agent can make.
            let agent_tools = self.ctx.agents.get(&approval.agent).map(|a| a.tools.as_slice()).unwrap_or_default();
            details.extend(crate::tools::plan::step_violations(&args, agent_tools, &self.ctx.tools));
        }
        if !details.is_empty() {
            return Err(Error::Invalid { message: format!("the edited arguments do not match the schema of {}", approval.tool), details });
        }
        Ok(args)
    }

    /// Edited arguments as an approval would run them (numbers as the tool's schema types them),
    /// or the refusal it would get for breaking the schema, each field named: a door that decides
    /// several calls at once checks every edit before it decides any.
    pub fn checked_args(&self, approval: &ApprovalRow, args: Value) -> Result<Value, Error> {
        self.validated(approval, self.ctx.tools.exact_args(&approval.tool, args))
    }

    /// What the pending call would do with `args` instead, read against the data now: a
    /// reviewer editing arguments sees the new summary and what would make it fail before they
    /// approve. Refused like the approval would be when `args` break the tool's schema.
    pub async fn preview(&self, approval_id: &ApprovalId, args: Value) -> Result<crate::tools::Description, Error> {
        let mut conn = self.ctx.store.connection().await?;
        let approval = pending_approval(&mut conn, approval_id).await?;
        let args = self.checked_args(&approval, args)?;
        let tool = self
            .ctx
            .tools
            .get(&approval.tool)
            .ok_or_else(|| Error::WrongState(format!("tool {} is no longer available", approval.tool)))?;
        Ok(tool.describe(&mut conn, &args, "").await?)
    }

    /// The state changes and events of one decision, inside the caller's transaction.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn apply(
        &self,
        w: &mut Write,
        task: &TaskRow,
        approval: &ApprovalRow,
        outcome: ApprovalOutcome,
        actor: &Actor,
        reason: Option<String>,
        edited: Option<Value>,
    ) -> Result<DecisionOutcome, Error> {
        let decided = approvals::decide(
            &mut w.tx,
            &approval.id,
            outcome.into(),
            &actor.name,
            reason.as_deref(),
            edited.as_ref(),
            &self.ctx.agents.version,
        )
        .await?;
        if !decided {
            let now = approvals::get(&mut *w.tx, &approval.id).await?.map_or("gone", |a| a.state.as_str());
            return Err(Error::WrongState(format!("approval {} is already {now}", approval.id)));
        }
        calls::transition(&mut w.tx, &approval.call_id, CallState::PendingApproval, outcome.into(), edited.as_ref()).await?;
        // After an edit the card and the queue say what runs now, and what was proposed.
        let summary = match (&edited, self.ctx.tools.get(&approval.tool)) {
            (Some(args), Some(tool)) if outcome == ApprovalOutcome::Approved => {
                let now = tool.describe(&mut w.tx, args, "").await?.summary;
                let summary = format!("{now} (edited from: {})", approval.summary);
                approvals::set_summary(&mut w.tx, &approval.id, &summary).await?;
                Some(summary)
            }
            _ => None,
        };
        self.ctx.metrics.decided(outcome.as_str(), (now_ms() - approval.created_at) as f64 / 1000.0);
        // Posted to Slack: the message is updated to say how it was decided (with this commit).
        if crate::store::slack::message_of(&mut *w.tx, &approval.id).await?.is_some() {
            let update = outbox::Message::Slack { action: outbox::SlackAction::Update, approval_id: &approval.id };
            outbox::queue(&mut w.tx, update).await?;
        }
        let cid = &approval.conversation_id;
        w.append(
            cid,
            EventBody::ApprovalDecided {
                task_id: task.id.clone(),
                approval_id: approval.id.clone(),
                call_id: approval.call_id.clone(),
                outcome,
                decided_by: actor.name.clone(),
                reason: reason.clone(),
                original_args: approval.args(),
                edited_args: edited.clone(),
                summary,
            },
        )
        .await?;
        // The server decides only when a deadline passed (its timeout action, and the other
        // approvals an `abort` timeout cancels).
        // The server decides by itself when a deadline passes, or (with `via`) when the
        // configuration changed under a pending approval.
        let kind = if actor.role.is_none() && actor.via.is_none() { AuditKind::ApprovalTimedOut } else { AuditKind::ApprovalDecided };
        w.audit(
            kind,
            &actor.name,
            json!({
                "approval_id": approval.id,
                "call_id": approval.call_id,
                "conversation_id": approval.conversation_id,
                "tool": approval.tool,
                "outcome": outcome.as_str(),
                "role": actor.role_name(),
                "ip": actor.ip,
                "user_agent": actor.user_agent,
                "on_behalf_of": actor.on_behalf_of,
                "via": actor.via,
                "policy_version": self.ctx.agents.version,
                "seconds_to_decide": (now_ms() - approval.created_at) / 1000,
                "original_args": approval.args(),
                "edited_args": edited,
                "reason": reason,
            }),
        );
        if outcome != ApprovalOutcome::Approved {
            // What the model is told instead of a result.
            let output = match outcome {
                ApprovalOutcome::Deferred => json!({ "status": "deferred", "guidance": reason.clone().unwrap_or_default() }),
                // No reason given, none made up: the agent says it was rejected, and not why.
                _ => match reason.as_deref() {
                    Some(reason) => json!({ "status": "rejected", "reason": reason }),
                    None => json!({ "status": "rejected" }),
                },
            };
            w.append(cid, EventBody::ToolResult { task_id: task.id.clone(), call_id: approval.call_id.clone(), ok: false, output }).await?;
        }
        if outcome != ApprovalOutcome::Canceled && approvals::pending_for_task(&mut *w.tx, &task.id).await?.is_empty() {
            tasks::transition(w, task, &[TaskStatus::InputRequired], TaskStatus::Working, None).await?;
        }
        let rules = approval.rules();
        let approved_by = match (outcome, rules.quorum) {
            (ApprovalOutcome::Approved, 2..) => approval.approved_by().into_iter().chain([actor.principal().to_owned()]).collect(),
            _ => Vec::new(),
        };
        Ok(DecisionOutcome {
            approval_id: approval.id.clone(),
            call_id: approval.call_id.clone(),
            outcome: outcome.into(),
            approved_by,
            quorum: rules.quorum,
        })
    }
}

impl Decisions {
    /// A quorum (the gate's `quorum`, or several gates' shares, `domain::rules::Share`): a
    /// person's approval that leaves the requirement unmet is counted (`approval-counted`,
    /// audited) and it stays pending; `None` when this approval meets it (or there is nothing to
    /// count) and the call is approved. The same person counts once (409), an approval that adds
    /// to no unmet share is refused (409), and no one grants "always allow" over a quorum (422).
    /// Earlier approvals count only if their person may still decide now: enabled, still among
    /// the approvers and, where a delegate approved for them, still delegating to that delegate
    /// (authority is judged when the call is released).
    async fn count_toward_quorum(
        &self,
        w: &mut Write,
        task: &TaskRow,
        approval: &ApprovalRow,
        actor: &Actor,
        with_grant: bool,
    ) -> Result<Option<DecisionOutcome>, Error> {
        let quorum = approval.rules().quorum;
        let approvers = approval.approvers().filter(|a| !a.each.is_empty());
        if actor.role.is_none() || (quorum <= 1 && approvers.is_none()) {
            return Ok(None);
        }
        // A delegate's approval counts as the person they stand in for, and a person counts once
        // whoever they act as: neither who acted nor whom they acted for may have counted already
        // (as a principal or at the keyboard).
        let principal = actor.principal();
        let mut approved_by = approval.approved_by();
        let counted = |name: &str| approved_by.iter().chain(&approval.approved_people()).any(|p| p.eq_ignore_ascii_case(name));
        if let Some(again) = [principal, actor.name.as_str()].into_iter().find(|name| counted(name)) {
            let left = (quorum as usize).saturating_sub(approved_by.len()).max(1);
            return Err(Error::WrongState(format!(
                "{again} already approved approval {}; it waits for {left} more approver{} (each person counts once, whoever they act as)",
                approval.id,
                if left == 1 { "" } else { "s" }
            )));
        }
        // Those who approved before and may still decide, as the shares count them. A delegate's
        // approval counts for the person they stood in for only while that delegation is still in
        // force (docs/security.md, "The authority rules", `quorum`).
        let people = approval.approved_people();
        let mut still: Vec<(String, bool)> = Vec::new();
        for (i, name) in approved_by.iter().enumerate() {
            let Some(person) = crate::store::users::credentials(&mut *w.tx, name).await? else { continue };
            let decider = rules::Decider { name, is_admin: person.user.role == Role::Admin };
            if !approval.approvers().is_none_or(|a| a.includes(decider)) {
                continue;
            }
            if let Some(delegate) = people.get(i).filter(|p| !p.eq_ignore_ascii_case(name)) {
                let stands_in_for = delegations::delegators_of(&mut *w.tx, delegate, now_ms()).await?;
                if !stands_in_for.iter().any(|p| p.eq_ignore_ascii_case(name)) {
                    continue;
                }
            }
            still.push((name.clone(), decider.is_admin));
        }
        let this = (principal.to_owned(), actor.role == Some(Role::Admin));
        fn view(people: &[(String, bool)]) -> Vec<rules::Decider<'_>> {
            people.iter().map(|(name, is_admin)| rules::Decider { name, is_admin: *is_admin }).collect()
        }
        if let Some(a) = &approvers
            && !a.adds_to(&view(&still), rules::Decider { name: &this.0, is_admin: this.1 })
        {
            return Err(Error::WrongState(format!(
                "{principal}'s approval adds nothing to approval {}: it waits for {}",
                approval.id,
                a.still_needed(&view(&still)).join(" and ")
            )));
        }
        // Only what one person meets alone may become "always allow" (a grant is one person's).
        let alone = quorum <= 1 && approvers.as_ref().is_none_or(|a| a.met(&view(std::slice::from_ref(&this))));
        if with_grant && !alone {
            let message = format!("this call needs {} approvers: it cannot be allowed for good by one; leave out grant", quorum.max(2));
            return Err(Error::invalid("/grant", message));
        }
        still.push(this);
        let met = still.len() >= quorum as usize && approvers.as_ref().is_none_or(|a| a.met(&view(&still)));
        approved_by.push(principal.to_owned());
        // The approvers are kept with the approval, the last one too (who then decides it).
        if !approvals::count_approval(&mut w.tx, approval, principal, &actor.name).await? {
            return Err(Error::WrongState(format!("approval {} changed meanwhile; try again", approval.id)));
        }
        if met {
            return Ok(None);
        }
        w.append(
            &approval.conversation_id,
            EventBody::ApprovalCounted {
                task_id: task.id.clone(),
                approval_id: approval.id.clone(),
                call_id: approval.call_id.clone(),
                by: actor.name.clone(),
                approved_by: approved_by.clone(),
                quorum,
            },
        )
        .await?;
        w.audit(
            AuditKind::ApprovalCounted,
            &actor.name,
            json!({
                "approval_id": approval.id, "conversation_id": approval.conversation_id, "tool": approval.tool,
                "approved_by": approved_by, "quorum": quorum, "role": actor.role_name(), "ip": actor.ip, "user_agent": actor.user_agent,
                "on_behalf_of": actor.on_behalf_of, "via": actor.via,
            }),
        );
        Ok(Some(DecisionOutcome {
            approval_id: approval.id.clone(),
            call_id: approval.call_id.clone(),
            outcome: ApprovalState::Pending,
            approved_by,
            quorum,
        }))
    }
}
