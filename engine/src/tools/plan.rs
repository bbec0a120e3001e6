//! `propose_plan`: an agent with a `plan` gate proposes the calls it means to make as one
//! approval (docs/config.md, "Plans"). Approving the plan (as proposed, or edited: steps dropped or
//! changed) gives each step a one-use grant for exactly its tool and arguments in this task, so
//! those calls run without asking one by one; any other call is gated as usual.

use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use super::{Description, Registry, Tool, ToolError, ToolFailure, ToolSpec, schema};
use domain::{
    Risk,
    wire::{FieldProblem, Reversibility, RiskAssessment},
};

pub const NAME: &str = domain::naming::PROPOSE_PLAN;

/// The most steps one plan may have.
const MAX_STEPS: usize = 20;

pub struct ProposePlan(ToolSpec);

impl ProposePlan {
    pub fn new() -> Self {
        Self(ToolSpec {
            name: NAME.into(),
            description: "Before a task of several changes, propose every call you intend to make (tool and exact arguments) \
                          for one approval. Once approved, make exactly those calls; anything else needs its own approval."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "steps": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_STEPS,
                        "items": {
                            "type": "object",
                            "properties": {
                                "tool": { "type": "string", "minLength": 1 },
                                "args": { "type": "object" }
                            },
                            "required": ["tool", "args"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["steps"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
        })
    }
}

impl Default for ProposePlan {
    fn default() -> Self {
        Self::new()
    }
}

/// The plan's steps as `(tool, args)`.
pub fn steps(args: &Value) -> Vec<(&str, &Value)> {
    args["steps"].as_array().into_iter().flatten().filter_map(|s| Some((s["tool"].as_str()?, s.get("args")?))).collect()
}

/// Where the plan's steps break the agent's tools or their schemas, as schema-style violations
/// (`/steps/1/tool`, `/steps/0/args/amount`): a plan of calls that could not run is not asked.
pub fn step_violations(args: &Value, agent_tools: &[String], registry: &Registry) -> Vec<FieldProblem> {
    let mut out = Vec::new();
    for (i, (tool, step_args)) in steps(args).into_iter().enumerate() {
        match registry.get(tool).filter(|_| tool != NAME && agent_tools.iter().any(|t| t == tool)) {
            None => out.push(FieldProblem::new(format!("/steps/{i}/tool"), format!("the agent has no tool {tool:?}"))),
            Some(t) => out.extend(
                schema::violations(&t.spec().input_schema, step_args)
                    .into_iter()
                    .map(|v| FieldProblem { path: format!("/steps/{i}/args{}", v.path), ..v }),
            ),
        }
    }
    out
}

/// The harder to undo of a plan's steps so far and the next one.
pub fn harder(so_far: Option<Reversibility>, next: Reversibility) -> Reversibility {
    let rank = |r: Reversibility| match r {
        Reversibility::Fully => 0,
        Reversibility::Partially => 1,
        Reversibility::Irreversible => 2,
    };
    match so_far {
        Some(r) if rank(r) >= rank(next) => r,
        _ => next,
    }
}

/// The card's line from each step's own line.
pub fn summary(parts: &[String]) -> String {
    format!("Plan of {} {}: {}", parts.len(), if parts.len() == 1 { "step" } else { "steps" }, parts.join("; "))
}

#[async_trait]
impl Tool for ProposePlan {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn summarize(&self, args: &Value) -> String {
        format!("Plan of {} steps", steps(args).len())
    }

    fn risk(&self, _args: &Value) -> Risk {
        Risk::High
    }

    fn assess(&self, args: &Value, _described: &Description) -> RiskAssessment {
        let n = steps(args).len();
        RiskAssessment {
            factors: vec![format!("approving it lets {n} calls run without asking again")],
            consequences: format!("Exactly these {n} calls may then run, once each, in this task; any other call still asks."),
            reversibility: Reversibility::Partially,
            confidence: None,
            warnings: Vec::new(),
        }
    }

    /// Approving is the effect: the task driver grants each step
    /// (`orchestrator/task_driver/grants.rs`).
    async fn run(&self, _conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        let steps: Vec<Value> = steps(args).into_iter().map(|(tool, args)| json!({ "tool": tool, "args": args })).collect();
        if steps.is_empty() {
            return Err(ToolFailure("the plan has no steps".into()).into());
        }
        let message = format!("Plan approved: make exactly these {} calls", steps.len());
        Ok(json!({ "status": "approved", "message": message, "steps": steps }))
    }
}
