//! Integration tests: each starts the real server on a free port with its own SQLite file.

mod helpers;

mod health;
mod sse;
