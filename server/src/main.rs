#![recursion_limit = "256"]
//! `countersign` binary: parse the command line and configuration, then serve or run a subcommand.

use anyhow::Context;
use clap::Parser;
use countersign::{
    cli::{self, Cli, Command},
    config::Config,
    startup::Application,
    telemetry,
};

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    if let Err(err) = run(cli).await {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::from_env()?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            telemetry::init(&config.log_filter, config.log_json);
            let app = Application::build(config).await?;
            // Served from a task on the runtime's workers, not from the main thread that `main`'s
            // `block_on` polls: the accept loop, the sweeper and the outbox would otherwise wake that
            // thread, a third one, on every new connection (docs/performance-notes.md, "The runtime").
            tokio::spawn(app.run_until_stopped()).await.context("the server stopped by panicking")?
        }
        other => {
            telemetry::init("warn", false);
            cli::run(other, config).await
        }
    }
}
