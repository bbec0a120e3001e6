#![recursion_limit = "256"]
//! `countersign` binary: parse the command line and configuration, then serve or run a subcommand.

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
            Application::build(config).await?.run_until_stopped().await
        }
        other => {
            telemetry::init("warn", false);
            cli::run(other, config).await
        }
    }
}
