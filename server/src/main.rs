//! `countersign` binary: parse configuration, build the application, serve until stopped.

use countersign::{config::Config, startup::Application, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    telemetry::init(&config.log_filter, config.log_json);
    let app = Application::build(config).await?;
    app.run_until_stopped().await
}
