//! Integration tests: each starts the real server on a free port with its own SQLite file.

mod helpers;

mod ask;
mod audit_anchors;
mod bad_input;
mod budget_and_confidence;
mod chaos;
mod confirm;
mod console;
mod crash;
mod cycle;
mod decision_rules;
mod decisions;
mod durability;
mod escalation_targets;
mod final_answer;
mod health;
mod layering;
mod leases;
mod mcp;
mod observability;
mod openai;
mod openapi;
mod people;
mod plans;
mod queue_order;
mod race;
mod reminders;
mod replicas;
mod schema;
mod shadow;
mod snapshots;
mod stream;
mod streams;
mod subagents;
mod webhooks;
