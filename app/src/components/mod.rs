//! Widgets, one per file, mirroring the page: the chat view and its tool cards, the composer,
//! the conversation list.
pub mod alert;
pub mod args_editor;
pub mod batch_bar;
pub mod card_actions;
pub mod card_controls;
pub mod card_draft;
pub mod card_parts;
pub mod chat_view;
pub mod composer;
pub mod conversation_list;
pub mod delegation_panel;
pub mod grant_list;
pub mod hydration_marker;
pub mod json_diff;
pub mod pending_queue;
pub mod question_card;
#[cfg(feature = "ssr")]
pub mod replay_charts;
#[cfg(feature = "ssr")]
pub mod replay_report;
pub mod replay_table;
pub mod rollout_steps;
pub mod session_notice;
pub mod status_badge;
pub mod tool_card;
pub mod top_bar;
