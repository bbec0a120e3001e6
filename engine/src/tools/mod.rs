//! Tools an agent can call, behind one `Tool` trait, and the registry that finds them by name.

pub mod answer;
pub mod ask;
pub mod delegate;
pub mod mcp;
pub mod orders;
pub mod plan;
pub mod schema;

use std::{collections::BTreeMap, sync::Arc};

use async_trait::async_trait;
use domain::{
    Risk,
    wire::{Reversibility, RiskAssessment},
};
use serde_json::Value;
use sqlx::AnyConnection;

/// What the registry knows of a tool without calling it.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    pub read_only: bool,
    pub destructive: bool,
}

/// A tool failure the model and the user are told about (not a server error).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ToolFailure(pub String);

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    Failed(#[from] ToolFailure),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// A call as the reviewer reads it (see [`Tool::describe`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Description {
    pub summary: String,
    pub warnings: Vec<String>,
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;

    /// One line a reviewer reads on the card, e.g. "Refund $25.00 on order 1001".
    fn summarize(&self, args: &Value) -> String;

    /// What the card says about the call, read against the current data: a summary naming
    /// amounts and people, and warnings where the call would do more, or other, than it seems.
    /// `request` is what the user asked for in this turn. By default: `summarize`, no warnings.
    async fn describe(&self, _conn: &mut AnyConnection, args: &Value, _request: &str) -> anyhow::Result<Description> {
        Ok(Description { summary: self.summarize(args), warnings: Vec::new() })
    }

    /// Why the call is risky beyond its level: by default from the tool's metadata (read-only
    /// calls change nothing; destructive ones cannot be undone) and the description's warnings.
    fn assess(&self, _args: &Value, described: &Description) -> RiskAssessment {
        assess_from_metadata(self.spec(), described)
    }

    fn risk(&self, _args: &Value) -> Risk {
        let spec = self.spec();
        if spec.destructive {
            Risk::High
        } else if spec.read_only {
            Risk::Low
        } else {
            Risk::Medium
        }
    }

    /// Runs the call inside the transaction that records its result, so a built-in effect
    /// commits together with its result or not at all (docs/architecture.md, decision 4).
    async fn run(&self, conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError>;

    /// External tools (MCP) act outside the database: the task driver marks the call executing
    /// and commits before `call`, so a crash can never make it run twice.
    fn is_external(&self) -> bool {
        false
    }

    /// The worker agent this tool hands its task to, for `ask_<worker>` tools.
    fn delegate(&self) -> Option<&str> {
        None
    }

    async fn call(&self, _args: &Value) -> Result<Value, ToolError> {
        Err(ToolError::Internal(anyhow::anyhow!("BUG: {} is not an external tool", self.spec().name)))
    }
}

#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl Registry {
    /// The demo tools on the orders domain.
    pub fn builtin() -> Self {
        let mut registry = Self::default();
        for tool in orders::all() {
            registry.register(tool);
        }
        registry.register(Arc::new(ask::AskUser::new()));
        registry.register(Arc::new(answer::FinalAnswer::new()));
        registry.register(Arc::new(plan::ProposePlan::new()));
        registry
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name.clone(), tool);
    }

    /// Adds MCP tools; a name already taken is an error.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> anyhow::Result<()> {
        let name = tool.spec().name.clone();
        if self.tools.contains_key(&name) {
            anyhow::bail!("tool name {name:?} is already taken (by a built-in or another MCP server)");
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// A call's arguments with numbers as `tool`'s schema types them ([`schema::exact_numbers`]),
    /// a plan's steps each by its own tool's schema; as given for a tool not here. Where arguments
    /// come in, proposed or edited, so that the checks, the record and the tool read the same
    /// values, and a decision is never used up by arguments the tool then refuses.
    pub fn exact_args(&self, tool: &str, args: Value) -> Value {
        let Some(t) = self.get(tool) else { return args };
        let mut args = schema::exact_numbers(&t.spec().input_schema, args);
        if tool == plan::NAME {
            for step in args.get_mut("steps").and_then(Value::as_array_mut).into_iter().flatten() {
                let step_tool = step.get("tool").and_then(Value::as_str).filter(|name| *name != plan::NAME).and_then(|name| self.get(name));
                if let (Some(step_tool), Some(step_args)) = (step_tool, step.get_mut("args")) {
                    *step_args = schema::exact_numbers(&step_tool.spec().input_schema, step_args.take());
                }
            }
        }
        args
    }
}

/// What a tool's metadata says of any call of it (read-only calls change nothing; destructive ones
/// cannot be undone), and the description's warnings.
pub fn assess_from_metadata(spec: &ToolSpec, described: &Description) -> RiskAssessment {
    let (reversibility, mut factors, consequences) = if spec.read_only {
        (Reversibility::Fully, Vec::new(), "Reads data; changes nothing.")
    } else if spec.destructive {
        (Reversibility::Irreversible, vec!["the tool says it is destructive".to_owned()], "Changes data in a way that cannot be undone.")
    } else {
        (Reversibility::Partially, vec!["changes data".to_owned()], "Changes data; undoing it takes work by hand.")
    };
    factors.extend(described.warnings.iter().cloned());
    RiskAssessment { factors, consequences: consequences.into(), reversibility, confidence: None, warnings: Vec::new() }
}
