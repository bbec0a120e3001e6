//! `ask_<worker>`: the tool through which a supervisor agent delegates to a worker agent
//! (supervisor → worker). It has no effect of its own: the task driver runs the
//! worker as a task in the same conversation and returns the worker's answer as the result.

use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use super::{Tool, ToolError, ToolSpec};

pub struct DelegateTool {
    spec: ToolSpec,
    worker: String,
}

/// The tool name a supervisor calls to reach `worker`.
pub fn tool_name(worker: &str) -> String {
    format!("ask_{worker}")
}

impl DelegateTool {
    pub fn new(worker: &str, description: &str) -> Self {
        let about = if description.is_empty() { String::new() } else { format!(" ({description})") };
        let spec = ToolSpec {
            name: tool_name(worker),
            description: format!(
                "Hand a task to the {worker} agent{about}; it works on it (its risky calls still need approval) and answers with its result."
            ),
            input_schema: json!({
                "type": "object",
                "properties": { "task": { "type": "string", "minLength": 1, "description": "What the worker should do, in plain words." } },
                "required": ["task"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
        };
        Self { spec, worker: worker.to_owned() }
    }
}

#[async_trait]
impl Tool for DelegateTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn summarize(&self, args: &Value) -> String {
        format!("Ask {}: {}", self.worker, args["task"].as_str().unwrap_or_default())
    }

    fn delegate(&self) -> Option<&str> {
        Some(&self.worker)
    }

    async fn run(&self, _conn: &mut AnyConnection, _args: &Value) -> Result<Value, ToolError> {
        Err(ToolError::Internal(anyhow::anyhow!("BUG: {} is run by the task driver as a worker task", self.spec.name)))
    }
}
