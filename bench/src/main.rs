//! `bench`: measures Countersign from a separate process over real HTTP, against the real
//! `countersign` binary on a fresh SQLite file (scripted model, so the model's speed is not
//! measured). Prints a table per measurement; `--write FILE` also writes them as Markdown.
//!
//!   bench [--quick] [--cycles-only] [--server PATH] [--baseline-server PATH] [--postgres URL] [--write docs/benchmarks.md]
//!
//! `--cycles-only` runs the cycle sections alone (to profile the server meanwhile, e.g. with `perf`);
//! `--reload-only` the reload section alone, `--fanout-only` the fan-out one (with the baseline's first),
//! `--gateway-only` the MCP gateway one (with the baseline's first; `--gateway-sizes R,C,E,G`: R reads
//! at one client, C clients × E reads, G gated cycles, for a build too slow for the full sizes),
//! `--memory-only [--paused N]` the paused-task memory one, `--postgres-only` the PostgreSQL ones
//! (needs `--postgres`), `--frozen-only` the frozen replica one alone (needs `--postgres`; prints
//! replica A's cycles second by second), `--replay-only` the policy replay one (in this process: no server).
//! `--baseline-server` also measures an older build's cycles in the same run, in three rounds with
//! the builds taking turns (ratios of the median rates, and each round's); `--postgres`
//! (a server URL, databases are created in it) adds cycles on one and two replicas and a frozen
//! replica. Quick mode uses tiny sizes and is a smoke test in `./x test`; its numbers mean little.

const USAGE: &str =
    "bench [--quick] [--cycles-only | --reload-only | --fanout-only | --gateway-only | --memory-only [--paused N] | --postgres-only | --frozen-only | --replay-only]
      [--server PATH] [--baseline-server PATH] [--gateway-sizes R,C,E,G] [--site-root DIR] [--postgres URL] [--write docs/benchmarks.md]
Measures the countersign binary at --server (default: next to this one) over HTTP; see the header
of bench/src/main.rs for what each flag does.";

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

mod cpu_cap;
mod gateway;
mod replay;

/// The share of one core each replica gets in the held-replicas section: with two of them,
/// PostgreSQL and the clients still have about 1.5 cores of this 2-core machine.
const REPLICA_SHARE: f64 = 0.25;

struct Sizes {
    sequential: usize,
    concurrent_cycles: usize,
    concurrency: usize,
    /// Rounds of the SQLite cycle sections, the builds taking turns; ratios are of the median
    /// rates, since one round of the old build's 32 clients varies by a third from run to run.
    rounds: usize,
    /// Chat lengths whose reload is measured (flat in the length is the goal).
    reload_turns: Vec<usize>,
    reload_samples: usize,
    storage_turns: [usize; 3],
    paused_tasks: usize,
    fanout: Vec<usize>,
    /// Frozen replica: seconds of steady load, then seconds with one replica stopped (SIGSTOP).
    freeze: (u64, u64),
    /// MCP gateway: reads at one client, clients at once and reads each, gated cycles.
    gateway: (usize, usize, usize, usize),
    /// Recorded calls a draft policy is replayed against.
    replay_calls: usize,
}

impl Sizes {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                sequential: 5,
                concurrent_cycles: 8,
                concurrency: 4,
                rounds: 1,
                reload_turns: vec![5, 10],
                reload_samples: 3,
                storage_turns: [2, 4, 6],
                paused_tasks: 20,
                fanout: vec![10],
                freeze: (1, 2),
                gateway: (10, 4, 5, 2),
                replay_calls: 2_000,
            }
        } else {
            Self {
                // 1,000 (about 3 s now) rather than 200: the p99 of 200 was the third-worst cycle, and
                // runs of one build differed by up to 20 % (docs/performance-notes.md, "How it is measured").
                sequential: 1000,
                concurrent_cycles: 1000,
                concurrency: 32,
                // The old build's 32-client rate was 124–178 cycles/s in one day's runs, its global
                // write lock making it erratic (docs/performance-notes.md, "How it is measured").
                rounds: 3,
                reload_turns: vec![100, 500, 2000],
                reload_samples: 50,
                storage_turns: [100, 250, 500],
                // 100,000 is the target size, but past ~25,000 waiting approvals the
                // sweeper's scans slow task creation down (docs/performance-notes.md, "Memory"): --memory-only --paused N.
                paused_tasks: 20_000,
                fanout: vec![1000, 5000],
                freeze: (5, 30),
                gateway: (2000, 32, 100, 100),
                // The target's size: `countersign policy replay --since 30d` over a busy month.
                replay_calls: 100_000,
            }
        }
    }
}

/// The server under test: a child process with its own data dir.
struct Server {
    child: tokio::process::Child,
    url: String,
    data_dir: tempfile::TempDir,
    client: reqwest::Client,
    /// The bench user's API token (what `client` sends).
    token: String,
}

async fn cli(bin: &Path, data_dir: &Path, database: Option<&str>, args: &[&str], stdin: &str) -> anyhow::Result<String> {
    let mut command = tokio::process::Command::new(bin);
    if let Some(url) = database {
        command.env("DATABASE_URL", url);
    }
    let mut child = command
        .args(args)
        .env("COUNTERSIGN_DATA_DIR", data_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(stdin.as_bytes()).await?;
    let out = child.wait_with_output().await?;
    if !out.status.success() {
        bail!("countersign {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

impl Server {
    /// One server on its own SQLite file.
    async fn start(bin: &Path, site_root: Option<&Path>) -> anyhow::Result<Self> {
        Ok(Self::cluster(bin, site_root, None, 1).await?.remove(0))
    }

    /// One server on its own SQLite file, running the agent configuration `agents`.
    async fn start_with_agents(bin: &Path, agents: &str) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("agents.toml");
        std::fs::write(&path, agents)?;
        cli(bin, dir.path(), None, &["user", "add", "bench", "--admin"], "bench-password\n").await?;
        let token = cli(bin, dir.path(), None, &["token", "create", "--user", "bench", "--name", "bench"], "").await?;
        Self::spawn_with(bin, None, None, dir, &token, Some(&path)).await
    }

    /// `replicas` servers on one database: `database` (PostgreSQL), or SQLite in the first one's
    /// data dir when `None` (then only one replica makes sense).
    async fn cluster(bin: &Path, site_root: Option<&Path>, database: Option<&str>, replicas: usize) -> anyhow::Result<Vec<Self>> {
        let first = tempfile::tempdir()?;
        cli(bin, first.path(), database, &["user", "add", "bench", "--admin"], "bench-password\n").await?;
        let token = cli(bin, first.path(), database, &["token", "create", "--user", "bench", "--name", "bench"], "").await?;
        let mut servers = vec![Self::spawn(bin, site_root, database, first, &token).await?];
        for _ in 1..replicas {
            servers.push(Self::spawn(bin, site_root, database, tempfile::tempdir()?, &token).await?);
        }
        Ok(servers)
    }

    async fn spawn(
        bin: &Path,
        site_root: Option<&Path>,
        database: Option<&str>,
        data_dir: tempfile::TempDir,
        token: &str,
    ) -> anyhow::Result<Self> {
        Self::spawn_with(bin, site_root, database, data_dir, token, None).await
    }

    async fn spawn_with(
        bin: &Path,
        site_root: Option<&Path>,
        database: Option<&str>,
        data_dir: tempfile::TempDir,
        token: &str,
        agents: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let mut command = tokio::process::Command::new(bin);
        if let Some(agents) = agents {
            command.env("COUNTERSIGN_AGENTS", agents);
        }
        if let Some(url) = database {
            command.env("DATABASE_URL", url);
        }
        command
            .env("COUNTERSIGN_ADDR", "127.0.0.1:0")
            .env("COUNTERSIGN_DATA_DIR", data_dir.path())
            .env("COUNTERSIGN_DECISIONS_PER_MINUTE", "100000000")
            // The fan-out section opens thousands of streams as one user; the per-user cap
            // (a guard against one account exhausting a replica) would refuse all but 32.
            .env("COUNTERSIGN_STREAMS_PER_USER", "100000")
            .env("RUST_LOG", "error")
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if let Some(root) = site_root {
            command.env("COUNTERSIGN_SITE_ROOT", root);
        }
        let mut child = command.spawn().context("cannot start countersign")?;
        let mut lines = tokio::io::BufReader::new(child.stdout.take().context("stdout")?).lines();
        let url = loop {
            let line = lines.next_line().await?.context("countersign exited before listening")?;
            if let Some(url) = line.split("listening on ").nth(1) {
                break url.trim().to_owned();
            }
        };
        // Keep reading its log (errors only), or its writes would fail on a closed pipe; errors are
        // kept in its data dir and counted in the report.
        let log = data_dir.path().join("server.log");
        tokio::spawn(async move {
            let mut file = tokio::fs::File::create(log).await.ok();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(file) = file.as_mut() {
                    let _ = file.write_all(format!("{line}\n").as_bytes()).await;
                }
            }
        });
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse()?);
        let client = reqwest::Client::builder().default_headers(headers).pool_max_idle_per_host(256).build()?;
        Ok(Self { child, url, data_dir, client, token: token.to_owned() })
    }

    async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        let response = self.client.post(format!("{}{path}", self.url)).json(&body).send().await?;
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("POST {path}: {status} {value}");
        }
        Ok(value)
    }

    async fn get(&self, path: &str) -> anyhow::Result<reqwest::Response> {
        let response = self.client.get(format!("{}{path}", self.url)).send().await?;
        if !response.status().is_success() {
            bail!("GET {path}: {}", response.status());
        }
        Ok(response)
    }

    async fn conversation(&self) -> anyhow::Result<String> {
        Ok(self.post("/api/conversations", json!({ "title": "bench" })).await?["id"].as_str().context("id")?.to_owned())
    }

    /// Freezes (`SIGSTOP`) or thaws (`SIGCONT`) the process, as a stuck VM or a long GC pause would.
    fn signal(&self, signal: &str) -> anyhow::Result<()> {
        let pid = self.child.id().context("server exited")?;
        let status = std::process::Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status()?;
        anyhow::ensure!(status.success(), "kill -{signal} {pid} failed");
        Ok(())
    }

    fn rss_kib(&self) -> Option<u64> {
        self.status_kib("VmRSS:")
    }

    /// A `kB` line of /proc/PID/status (`VmRSS:`, `RssAnon:` — the heap and stacks —, `RssFile:`).
    fn status_kib(&self, key: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()?)).ok()?;
        status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// RSS once it stopped moving (two readings a second apart within 256 KiB; at most 20 s).
    async fn settled_rss_kib(&self) -> u64 {
        let mut last = self.rss_kib().unwrap_or(0);
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = self.rss_kib().unwrap_or(0);
            if now.abs_diff(last) <= 256 {
                return now;
            }
            last = now;
        }
        last
    }
}

/// An open SSE stream of one conversation.
struct Stream {
    events: std::pin::Pin<Box<dyn futures::Stream<Item = (String, Value)> + Send>>,
}

impl Stream {
    async fn open(server: &Server, conversation: &str) -> anyhow::Result<Self> {
        let response = server.get(&format!("/api/conversations/{conversation}/events")).await?;
        let events = response
            .bytes_stream()
            .eventsource()
            .filter_map(|e| async move { e.ok().map(|e| (e.event, serde_json::from_str(&e.data).unwrap_or(Value::Null))) });
        Ok(Self { events: Box::pin(events) })
    }

    /// Waits for the first event named `name` for which `pick` is true.
    async fn until(&mut self, name: &str, pick: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
        let wait = async {
            while let Some((event, data)) = self.events.next().await {
                if event == name && pick(&data) {
                    return Ok(data);
                }
            }
            bail!("stream ended before {name}")
        };
        tokio::time::timeout(Duration::from_secs(60), wait).await.context("timed out")?
    }
}

/// A bare SSE reader for the fan-out section. Thousands of them share this machine's two cores
/// with the server, so each does no more than read bytes and look for the frame it waits for: with
/// reqwest and an SSE parser per stream, the clients spent about as much CPU as the server.
struct RawStream {
    socket: tokio::net::TcpStream,
    /// Bytes read and not yet searched past.
    seen: Vec<u8>,
}

impl RawStream {
    async fn open(server: &Server, conversation: &str) -> anyhow::Result<Self> {
        let host = server.url.trim_start_matches("http://");
        let mut socket = tokio::net::TcpStream::connect(host).await?;
        let request = format!(
            "GET /api/conversations/{conversation}/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nAccept: text/event-stream\r\n\r\n",
            server.token
        );
        socket.write_all(request.as_bytes()).await?;
        let mut stream = Self { socket, seen: Vec::new() };
        let end = stream.until(b"\r\n\r\n").await?;
        if !stream.seen.starts_with(b"HTTP/1.1 200") {
            bail!("GET events: {}", String::from_utf8_lossy(&stream.seen[..end.min(200)]));
        }
        stream.seen.drain(..end);
        Ok(stream)
    }

    /// Reads up to the next event named `name` whose data contains `needle`; returns its data.
    /// (The body is chunked: a frame may follow a chunk-size line, which is no `event:` or `data:`.)
    async fn event(&mut self, name: &str, needle: &str) -> anyhow::Result<String> {
        loop {
            let end = self.until(b"\n\n").await?;
            let frame = String::from_utf8_lossy(&self.seen[..end]).into_owned();
            self.seen.drain(..end);
            let field = |key: &str| frame.lines().find_map(|l| l.strip_prefix(key)).map(str::trim);
            if field("event:") == Some(name) {
                let data = field("data:").unwrap_or_default();
                if data.contains(needle) {
                    return Ok(data.to_owned());
                }
            }
        }
    }

    /// Reads until `needle` has arrived; returns where it ends in `seen`.
    async fn until(&mut self, needle: &[u8]) -> anyhow::Result<usize> {
        use tokio::io::AsyncReadExt;
        let wait = async {
            let mut searched = 0;
            loop {
                if let Some(at) = self.seen[searched..].windows(needle.len()).position(|w| w == needle) {
                    return Ok(searched + at + needle.len());
                }
                searched = self.seen.len().saturating_sub(needle.len() - 1);
                if self.socket.read_buf(&mut self.seen).await? == 0 {
                    bail!("stream ended before {}", String::from_utf8_lossy(needle));
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(60), wait).await.context("timed out")?
    }
}

/// A bare HTTP/1.1 keep-alive connection for the cycle sections' requests. Like [`RawStream`], it
/// only writes the request and reads the response's bytes: the load generator shares the two cores
/// with the server, and with reqwest and an SSE parser it spent about 0.75 ms of CPU per sequential
/// cycle, a quarter of the server's (docs/performance-notes.md, "How it is measured").
struct RawHttp {
    host: String,
    token: String,
    /// Opened on the first request, and again after a request failed.
    socket: Option<tokio::net::TcpStream>,
    buf: Vec<u8>,
}

impl RawHttp {
    fn new(server: &Server) -> Self {
        Self { host: server.url.trim_start_matches("http://").to_owned(), token: server.token.clone(), socket: None, buf: Vec::new() }
    }

    /// POSTs the JSON `body`; returns the response's body, or fails on a status other than 2xx.
    async fn post(&mut self, path: &str, body: &str) -> anyhow::Result<Vec<u8>> {
        let exchange = self.exchange(path, body);
        let result = tokio::time::timeout(Duration::from_secs(60), exchange).await.context("timed out").and_then(|r| r);
        if result.is_err() {
            // Whatever the connection still holds belongs to the failed request.
            self.socket = None;
        }
        result.with_context(|| format!("POST {path}"))
    }

    async fn exchange(&mut self, path: &str, body: &str) -> anyhow::Result<Vec<u8>> {
        use tokio::io::AsyncReadExt;
        if self.socket.is_none() {
            self.socket = Some(tokio::net::TcpStream::connect(&self.host).await?);
            self.buf.clear();
        }
        let socket = self.socket.as_mut().context("no connection")?;
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.host,
            self.token,
            body.len()
        );
        socket.write_all(request.as_bytes()).await?;
        let head_end = loop {
            if let Some(at) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            if socket.read_buf(&mut self.buf).await? == 0 {
                bail!("the server closed the connection");
            }
        };
        let head = String::from_utf8_lossy(&self.buf[..head_end]).to_ascii_lowercase();
        let length: usize =
            head.lines().find_map(|l| l.strip_prefix("content-length:")).context("a response without Content-Length")?.trim().parse()?;
        while self.buf.len() < head_end + length {
            if socket.read_buf(&mut self.buf).await? == 0 {
                bail!("the server closed the connection");
            }
        }
        let body = self.buf[head_end..head_end + length].to_vec();
        let ok = head.starts_with("http/1.1 2");
        let status = head.lines().next().unwrap_or_default().to_owned();
        self.buf.drain(..head_end + length);
        if head.contains("connection: close") {
            self.socket = None;
        }
        if !ok {
            bail!("{status}: {}", String::from_utf8_lossy(&body));
        }
        Ok(body)
    }
}

struct Timings(Vec<f64>);

impl Timings {
    fn pct(&self, p: f64) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        if v.is_empty() {
            return f64::NAN;
        }
        v[((v.len() as f64 - 1.0) * p).round() as usize]
    }
    fn summary(&self) -> String {
        format!("{:.2} / {:.2} / {:.2}", self.pct(0.5), self.pct(0.99), self.pct(1.0))
    }
}

/// A line saying whether a target of the issues that set them holds in this run, and where the
/// reason is written down when it does not.
fn target_line(what: &str, value: f64, unit: &str, limit: f64, why_not: &str) -> String {
    if value <= limit {
        format!("- Target {what} ≤ {limit} {unit}: **met** ({value:.2} {unit})")
    } else {
        format!("- Target {what} ≤ {limit} {unit}: **not met** ({value:.2} {unit}); why: {why_not}")
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The order client `i` refunds: the six seeded orders in turn, so clients share an order only
/// as a real shop's agents sometimes would (and clients of two replicas, `i % 2`, never do).
fn order_of_client(i: usize) -> u32 {
    1001 + (i % 6) as u32
}

/// One full cycle (a 1-cent refund on `order`) over `http`; returns (message → approval-required,
/// approve → completed) in ms.
async fn cycle(server: &Server, http: &mut RawHttp, order: u32) -> anyhow::Result<(f64, f64)> {
    let created: Value = serde_json::from_slice(&http.post("/api/conversations", r#"{"title":"bench"}"#).await?)?;
    let c = created["id"].as_str().context("conversation id")?;
    let mut stream = RawStream::open(server, c).await?;
    let start = Instant::now();
    http.post(&format!("/api/conversations/{c}/messages"), &format!(r#"{{"text":"refund $0.01 on order {order}"}}"#)).await?;
    let required: Value = serde_json::from_str(&stream.event("approval-required", "").await?)?;
    let first = ms(start.elapsed());
    let approval = required["approval_id"].as_str().context("approval id")?;
    let start = Instant::now();
    http.post(&format!("/api/approvals/{approval}/approve"), "{}").await?;
    stream.event("task-status", r#""status":"completed""#).await?;
    Ok((first, ms(start.elapsed())))
}

struct Report {
    markdown: String,
}

impl Report {
    fn lines(&mut self, lines: impl IntoIterator<Item = String>) {
        let mut any = false;
        for line in lines {
            if !any {
                self.markdown.push('\n');
                any = true;
            }
            println!("{line}");
            let _ = writeln!(self.markdown, "{line}");
        }
    }

    fn section(&mut self, title: &str, header: &[&str], rows: Vec<Vec<String>>) {
        println!("\n== {title}");
        println!("{}", header.join(" | "));
        for row in &rows {
            println!("{}", row.join(" | "));
        }
        let _ = writeln!(self.markdown, "\n### {title}\n\n| {} |\n|{}|", header.join(" | "), vec!["---"; header.len()].join("|"));
        for row in rows {
            let _ = writeln!(self.markdown, "| {} |", row.join(" | "));
        }
    }
}

/// `clients` clients each running `per_client` cycles, client `i` on `servers[i % len]`.
/// Returns (cycles/s, message → approval-required ms, approve → completed ms).
async fn cycles(servers: &[Arc<Server>], clients: usize, per_client: usize) -> anyhow::Result<(f64, Timings, Timings)> {
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            let server = servers[i % servers.len()].clone();
            tokio::spawn(async move {
                let mut out = Vec::new();
                let mut http = RawHttp::new(&server);
                for _ in 0..per_client {
                    out.push(cycle(&server, &mut http, order_of_client(i)).await?);
                }
                anyhow::Ok(out)
            })
        })
        .collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for task in tasks {
        for (x, y) in task.await?? {
            a.push(x);
            b.push(y);
        }
    }
    let rate = (clients * per_client) as f64 / start.elapsed().as_secs_f64();
    Ok((rate, Timings(a), Timings(b)))
}

/// The builds measured side by side: this one, and an older one when `--baseline-server` names it.
struct Builds {
    now: PathBuf,
    baseline: Option<(String, PathBuf)>,
}

impl Builds {
    fn each(&self) -> Vec<(String, &Path)> {
        let mut builds = Vec::new();
        if let Some((name, bin)) = &self.baseline {
            builds.push((format!("before ({name})"), bin.as_path()));
        }
        builds.push(("now".to_owned(), self.now.as_path()));
        builds
    }
}

/// "×2.40" of `now` over `before`, or nothing without a baseline.
fn ratio_line(what: &str, rates: &[(String, f64)]) -> Option<String> {
    let before = rates.iter().find(|(b, _)| b.starts_with("before"))?.1;
    let now = rates.iter().find(|(b, _)| b == "now")?.1;
    Some(format!("- {what}: now / before = **×{:.2}** ({now:.1} vs {before:.1} cycles/s)", now / before))
}

/// Over several rounds: the ratio of the two builds' median rates, and each round's ratio with
/// their median (a round runs the builds within a minute of each other, so its ratio is the paired one):
/// "×4.90 (median rates 759.0 vs 154.9 cycles/s); rounds ×4.90 / ×5.09 / ×5.09, median ×5.09".
fn median_ratio_line(what: &str, rounds: &[Vec<(String, f64)>]) -> Option<String> {
    if rounds.len() < 2 {
        return ratio_line(what, rounds.first()?);
    }
    let rate = |round: &[(String, f64)], build: &dyn Fn(&str) -> bool| round.iter().find(|(b, _)| build(b)).map(|(_, r)| *r);
    let (is_before, is_now) = (|b: &str| b.starts_with("before"), |b: &str| b == "now");
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied()
    };
    let before = median(rounds.iter().filter_map(|r| rate(r, &is_before)).collect())?;
    let now = median(rounds.iter().filter_map(|r| rate(r, &is_now)).collect())?;
    let paired: Vec<f64> = rounds.iter().filter_map(|r| Some(rate(r, &is_now)? / rate(r, &is_before)?)).collect();
    let each: Vec<String> = paired.iter().map(|x| format!("×{x:.2}")).collect();
    Some(format!(
        "- {what}: now / before = **×{:.2}** (median rates of {} rounds, {now:.1} vs {before:.1} cycles/s); rounds {}, median ×{:.2}",
        now / before,
        rounds.len(),
        each.join(" / "),
        median(paired)?
    ))
}

async fn throughput(builds: &Builds, sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let (mut sequential, mut concurrent) = (Vec::new(), Vec::new());
    for round in 1..=sizes.rounds {
        let (mut seq_round, mut conc_round) = (Vec::new(), Vec::new());
        for (build, bin) in builds.each() {
            let server = Arc::new(Server::start(bin, None).await?);
            let (rate, a, b) = cycles(std::slice::from_ref(&server), 1, sizes.sequential).await?;
            seq_round.push((build.clone(), rate));
            let row = |clients: usize, cycles: usize, rate: f64, a: Timings, b: Timings| {
                vec![
                    round.to_string(),
                    build.clone(),
                    clients.to_string(),
                    cycles.to_string(),
                    format!("{rate:.1}"),
                    a.summary(),
                    b.summary(),
                ]
            };
            rows.push(row(1, sizes.sequential, rate, a, b));
            let per_client = sizes.concurrent_cycles / sizes.concurrency;
            let (rate, a, b) = cycles(&[server], sizes.concurrency, per_client).await?;
            conc_round.push((build.clone(), rate));
            rows.push(row(sizes.concurrency, per_client * sizes.concurrency, rate, a, b));
        }
        sequential.push(seq_round);
        concurrent.push(conc_round);
    }
    report.section(
        "1+2. HITL cycle over HTTP, SQLite (message → approval-required on SSE → approve → completed on SSE)",
        &[
            "round",
            "build",
            "clients",
            "cycles",
            "cycles/s",
            "message → approval-required ms p50/p99/max",
            "approve → completed ms p50/p99/max",
        ],
        rows,
    );
    report.lines(
        [median_ratio_line("sequential", &sequential), median_ratio_line(&format!("{} clients", sizes.concurrency), &concurrent)]
            .into_iter()
            .flatten(),
    );
    Ok(())
}

/// A fresh database in the PostgreSQL server at `server_url`; returns its URL.
async fn fresh_postgres_database(server_url: &str) -> anyhow::Result<String> {
    use sqlx::Connection;
    let name = format!("bench_{}", uuid::Uuid::now_v7().simple());
    let mut admin = sqlx::PgConnection::connect(server_url).await.context("cannot connect to --postgres")?;
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await?;
    Ok(format!("{}/{name}", server_url.rsplit_once('/').context("a --postgres URL ends in a database name")?.0))
}

/// Cycles on PostgreSQL with one and with two replicas (clients spread over them), per build.
/// With `cap`, each replica is held to that share of one core (a cgroup's CPU quota, see
/// `bench/src/cpu_cap.rs`) while PostgreSQL and the clients are not: as if each replica ran on a
/// small machine of its own. Without it, on this machine's two shared cores, a second replica can
/// only take CPU from PostgreSQL, so the uncapped rows cannot show what a second machine adds.
async fn postgres_replicas(builds: &Builds, postgres: &str, sizes: &Sizes, cap: Option<f64>, report: &mut Report) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    let per_client = sizes.concurrent_cycles / sizes.concurrency;
    for (build, bin) in builds.each() {
        let mut rates = Vec::new();
        for replicas in [1, 2] {
            let database = fresh_postgres_database(postgres).await?;
            let servers: Vec<_> = Server::cluster(bin, None, Some(&database), replicas).await?.into_iter().map(Arc::new).collect();
            let mut caps = Vec::new();
            if let Some(share) = cap {
                for (i, server) in servers.iter().enumerate() {
                    let pid = server.child.id().context("a replica exited")?;
                    match cpu_cap::CpuCap::new(&format!("countersign-bench-replica-{i}"), share).and_then(|cap| cap.add(pid).map(|_| cap)) {
                        Ok(cap) => caps.push(cap),
                        Err(why) => {
                            println!("\n(skipped: replicas held to a share of a core: {why})");
                            report.lines([format!("\n### 1+2 on PostgreSQL, each replica held to {share} of a core\n\nSkipped: {why}.")]);
                            return Ok(());
                        }
                    }
                }
            }
            let (rate, a, b) = cycles(&servers, sizes.concurrency, per_client).await?;
            rates.push(rate);
            let total = per_client * sizes.concurrency;
            rows.push(vec![
                build.clone(),
                replicas.to_string(),
                sizes.concurrency.to_string(),
                total.to_string(),
                format!("{rate:.1}"),
                a.summary(),
                b.summary(),
            ]);
        }
        let ratio = rates[1] / rates[0];
        let target = match (cap, build.as_str()) {
            (Some(_), "now") => format!(" (target > ×1.5: **{}**)", if ratio > 1.5 { "met" } else { "not met" }),
            _ => String::new(),
        };
        lines.push(format!("- {build}: 2 replicas / 1 replica = **×{ratio:.2}**{target}"));
    }
    let title = match cap {
        None => "1+2 on PostgreSQL: one replica and two replicas on one database".to_owned(),
        Some(share) => format!(
            "1+2 on PostgreSQL, each replica held to {share} of a core (cgroup CPU quota; PostgreSQL and the clients not held): \
             one replica and two"
        ),
    };
    report.section(
        &title,
        &[
            "build",
            "replicas",
            "clients",
            "cycles",
            "cycles/s",
            "message → approval-required ms p50/p99/max",
            "approve → completed ms p50/p99/max",
        ],
        rows,
    );
    report.lines(lines);
    Ok(())
}

/// Two replicas under load; one is frozen (SIGSTOP) for a while: what the other one commits meanwhile.
async fn frozen_replica(bin: &Path, postgres: &str, sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let database = fresh_postgres_database(postgres).await?;
    let servers: Vec<_> = Server::cluster(bin, None, Some(&database), 2).await?.into_iter().map(Arc::new).collect();
    let (steady, frozen) = (Duration::from_secs(sizes.freeze.0), Duration::from_secs(sizes.freeze.1));
    let start = Instant::now();
    let stop_at = start + steady * 2 + frozen;
    // Each client records (replica, when its cycle completed); clients of the frozen replica stall.
    let tasks: Vec<_> = (0..sizes.concurrency)
        .map(|i| {
            let replica = i % 2;
            let server = servers[replica].clone();
            tokio::spawn(async move {
                let mut done = Vec::new();
                let mut http = RawHttp::new(&server);
                while Instant::now() < stop_at {
                    match cycle(&server, &mut http, order_of_client(i)).await {
                        Ok(_) => done.push((replica, start.elapsed())),
                        Err(err) => eprintln!("frozen-replica bench: a cycle on replica {replica} failed: {err:#}"),
                    }
                }
                done
            })
        })
        .collect();
    tokio::time::sleep(steady).await;
    servers[1].signal("STOP")?;
    tokio::time::sleep(frozen).await;
    servers[1].signal("CONT")?;
    let mut done = Vec::new();
    for task in tasks {
        done.extend(task.await?);
    }
    for (i, server) in servers.iter().enumerate() {
        let keep = std::env::temp_dir().join(format!("countersign-bench-frozen-replica-{i}.log"));
        if std::fs::copy(server.data_dir.path().join("server.log"), &keep).is_ok() {
            println!("replica {i}'s errors during the frozen-replica run: {}", keep.display());
        }
    }
    let window = |replica: usize, from: Duration, to: Duration| {
        let n = done.iter().filter(|(r, at)| *r == replica && *at >= from && *at < to).count();
        format!("{:.1}", n as f64 / (to - from).as_secs_f64())
    };
    let phases = [
        ("before the freeze", Duration::ZERO, steady),
        ("B frozen", steady, steady + frozen),
        ("after B thawed", steady + frozen, steady * 2 + frozen),
    ];
    // Replica A's cycles second by second: a stall shows as a run of zeros.
    let per_second: Vec<usize> =
        (0..(steady * 2 + frozen).as_secs()).map(|s| done.iter().filter(|(r, at)| *r == 0 && at.as_secs() == s).count()).collect();
    println!("replica A's cycles in each second: {per_second:?}");
    let rows = phases
        .iter()
        .map(|(name, from, to)| {
            vec![name.to_string(), format!("{:.0}", (*to - *from).as_secs_f64()), window(0, *from, *to), window(1, *from, *to)]
        })
        .collect();
    report.section(
        &format!(
            "Frozen replica: two replicas on PostgreSQL, {} clients (half on each), replica B stopped with SIGSTOP",
            sizes.concurrency
        ),
        &["phase", "seconds", "replica A cycles/s", "replica B cycles/s"],
        rows,
    );
    Ok(())
}

/// Builds a conversation of `turns` turns: every 20th (from the first) a refund that is approved
/// (25 of 500), plus a last refund left pending; the rest are lookups that run at once.
async fn long_conversation(server: &Server, turns: usize) -> anyhow::Result<String> {
    let c = server.conversation().await?;
    let mut stream = Stream::open(server, &c).await?;
    for turn in 0..turns {
        let gated = turn % 20 == 0 || turn + 1 == turns;
        let text = if gated { "refund $1 on order 1004" } else { "look up order 1001" };
        let task = server.post(&format!("/api/conversations/{c}/messages"), json!({ "text": text })).await?["task_id"]
            .as_str()
            .context("task")?
            .to_owned();
        if gated {
            let required = stream.until("approval-required", |d| d["task_id"] == task.as_str()).await?;
            if turn + 1 == turns {
                break;
            }
            server.post(&format!("/api/approvals/{}/approve", required["approval_id"].as_str().context("id")?), json!({})).await?;
        }
        stream.until("task-status", |d| d["task_id"] == task.as_str() && d["status"] == "completed").await?;
    }
    Ok(c)
}

async fn reload(server: &Server, sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for &turns in &sizes.reload_turns {
        let c = long_conversation(server, turns).await?;
        let detail: Value = server.get(&format!("/api/conversations/{c}?events=all")).await?.json().await?;
        let events = detail["events"].as_array().map(Vec::len).unwrap_or(0);
        // The first reads store the page and the whole view's snapshot (in the background); later
        // ones read them and the tail.
        server.get(&format!("/api/conversations/{c}")).await?.bytes().await?;
        server.get(&format!("/api/conversations/{c}?items=all")).await?.bytes().await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (mut view, mut all_items, mut whole, mut page) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..sizes.reload_samples {
            let start = Instant::now();
            server.get(&format!("/api/conversations/{c}")).await?.bytes().await?;
            view.push(ms(start.elapsed()));
            let start = Instant::now();
            server.get(&format!("/api/conversations/{c}?items=all")).await?.bytes().await?;
            all_items.push(ms(start.elapsed()));
            let start = Instant::now();
            server.get(&format!("/api/conversations/{c}?events=all")).await?.bytes().await?;
            whole.push(ms(start.elapsed()));
            let start = Instant::now();
            server.get(&format!("/c/{c}")).await?.bytes().await?;
            page.push(ms(start.elapsed()));
        }
        // The page again, one request after another: above, each follows a read of the whole log,
        // whose allocations and reader it may inherit.
        let mut page_alone = Vec::new();
        for _ in 0..sizes.reload_samples {
            let start = Instant::now();
            server.get(&format!("/c/{c}")).await?.bytes().await?;
            page_alone.push(ms(start.elapsed()));
        }
        rows.push(vec![
            turns.to_string(),
            events.to_string(),
            sizes.reload_samples.to_string(),
            Timings(view).summary(),
            Timings(all_items).summary(),
            Timings(whole).summary(),
            Timings(page).summary(),
            Timings(page_alone).summary(),
        ]);
    }
    report.section(
        "3. Reload a long conversation",
        &[
            "turns",
            "events",
            "samples",
            "GET /api/conversations/{id}: stored page + tail, ms p50/p99/max",
            "with ?items=all: whole view from its snapshot + tail, ms p50/p99/max",
            "with ?events=all: whole log + fold (as before snapshots), ms p50/p99/max",
            "server-rendered chat page ms p50/p99/max",
            "the same page, requests in a row, ms p50/p99/max",
        ],
        rows,
    );
    Ok(())
}

async fn storage(bin: &Path, sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for turns in sizes.storage_turns {
        let server = Server::start(bin, None).await?;
        let c = long_conversation(&server, turns).await?;
        let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", server.data_dir.path().join("countersign.db").display())).await?;
        let (events, bytes): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COALESCE(SUM(LENGTH(body)), 0) FROM events WHERE conversation_id = ?")
                .bind(&c)
                .fetch_one(&db)
                .await?;
        let _ = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&db).await;
        db.close().await;
        let file = std::fs::metadata(server.data_dir.path().join("countersign.db")).map(|m| m.len()).unwrap_or(0);
        rows.push(vec![
            turns.to_string(),
            events.to_string(),
            bytes.to_string(),
            format!("{:.0}", bytes as f64 / turns as f64),
            file.to_string(),
        ]);
    }
    report.section(
        "4. Storage",
        &["turns", "events", "event bytes", "bytes per turn", "database file bytes (all tables, after checkpoint)"],
        rows,
    );
    Ok(())
}

async fn memory(bin: &Path, sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let server = Arc::new(Server::start(bin, None).await?);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.rss_kib().unwrap_or(0);
    let clients = sizes.paused_tasks.clamp(1, 32);
    let per_client = sizes.paused_tasks / clients;
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let server = server.clone();
            tokio::spawn(async move {
                for _ in 0..per_client {
                    let c = server.conversation().await?;
                    server.post(&format!("/api/conversations/{c}/messages"), json!({ "text": "refund $1 on order 1004" })).await?;
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for w in workers {
        w.await??;
    }
    let expected = per_client * clients;
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", server.data_dir.path().join("countersign.db").display())).await?;
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM approvals WHERE state = 'pending'").fetch_one(&db).await?;
        db.close().await;
        if n as usize >= expected || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let after = server.settled_rss_kib().await;
    let anon = (server.status_kib("RssAnon:").unwrap_or(0), server.status_kib("RssFile:").unwrap_or(0));
    let grown = after.saturating_sub(before);
    report.section(
        "5. Memory (server RSS, settled)",
        &["paused tasks", "RSS before KiB", "RSS after KiB (anon / file)", "per paused task (bytes)", "MiB per 10,000 paused tasks"],
        vec![vec![
            expected.to_string(),
            before.to_string(),
            format!("{after} ({} / {})", anon.0, anon.1),
            format!("{:.0}", (grown * 1024) as f64 / expected as f64),
            format!("{:.1}", grown as f64 / 1024.0 * 10_000.0 / expected as f64),
        ]],
    );
    Ok(())
}

async fn fanout(bin: &Path, sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut p99s = Vec::new();
    for &n in &sizes.fanout {
        let server = Arc::new(Server::start(bin, None).await?);
        let c = server.conversation().await?;
        let rss_before = server.rss_kib();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
        let ready = Arc::new(tokio::sync::Barrier::new(n + 1));
        // Each client keeps its stream open until every client got the event, as a watching
        // browser would: a client hanging up as soon as it got it would make the server tear down
        // connections in the middle of the fan-out being measured.
        let (done, _) = tokio::sync::broadcast::channel::<()>(1);
        // Streams open a few hundred at a time, as a population of browsers would, not 5,000
        // connects in one burst (which overflows the listen queue); the first failure is reported.
        let opening = Arc::new(tokio::sync::Semaphore::new(200));
        let failed = Arc::new(std::sync::Mutex::new(None::<String>));
        let mut opened = 0;
        for _ in 0..n {
            let (server, c, tx, ready, mut done) = (server.clone(), c.clone(), tx.clone(), ready.clone(), done.subscribe());
            let (opening, failed) = (opening.clone(), failed.clone());
            tokio::spawn(async move {
                let stream = {
                    let _permit = opening.acquire().await;
                    RawStream::open(&server, &c).await
                };
                ready.wait().await;
                let got = match stream {
                    Ok(mut stream) => stream.until(b"event: user-message\n").await.map(|_| stream),
                    Err(err) => Err(err.context("opening a stream")),
                };
                match got {
                    Ok(stream) => {
                        let _ = tx.send(Instant::now());
                        let _ = done.recv().await;
                        drop(stream);
                    }
                    Err(err) => {
                        failed.lock().unwrap().get_or_insert_with(|| format!("{err:#}"));
                    }
                }
            });
            opened += 1;
        }
        drop(tx);
        ready.wait().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        // What the open streams cost the server: its resident memory with them, less before.
        let per_stream = rss_before
            .zip(server.rss_kib())
            .map_or_else(|| "?".to_owned(), |(before, after)| format!("{:.0}", after.saturating_sub(before) as f64 * 1024.0 / n as f64));
        let start = Instant::now();
        server.post(&format!("/api/conversations/{c}/messages"), json!({ "text": "look up order 1001" })).await?;
        let mut delivered = Vec::new();
        while delivered.len() < opened
            && let Ok(Some(at)) = tokio::time::timeout(Duration::from_secs(30), rx.recv()).await
        {
            delivered.push(ms(at.duration_since(start)));
        }
        let _ = done.send(());
        if delivered.len() < opened {
            let why = failed.lock().unwrap().clone().unwrap_or_default();
            anyhow::bail!("SSE fan-out: only {} of {opened} streams got the event ({why})", delivered.len());
        }
        // The server's share: publication → frame handed to each connection (its own histogram).
        let metrics = server.get("/metrics").await?.text().await?;
        let server_side = match (send_quantile(&metrics, "user-message", 0.5), send_quantile(&metrics, "user-message", 0.99)) {
            (Some(p50), Some(p99)) => format!("≤ {p50:.2} / ≤ {p99:.2}"),
            _ => "?".to_owned(),
        };
        let delivered = Timings(delivered);
        p99s.push((n, delivered.pct(0.99)));
        rows.push(vec![opened.to_string(), delivered.0.len().to_string(), delivered.summary(), server_side, per_stream]);
    }
    report.section(
        "6. SSE fan-out (one event to N clients of one conversation)",
        &[
            "clients",
            "delivered",
            "delivery ms p50/p99/max (POST → each client read the frame)",
            "server: published → frame to connection ms p50/p99 (histogram bucket)",
            "server RSS per open stream, bytes",
        ],
        rows,
    );
    // The fan-out targets: p99 delivery to 1,000 and to 5,000 clients of one conversation.
    let targets = [(1000, 15.0), (5000, 50.0)];
    report.lines(p99s.iter().filter_map(|&(n, p99)| {
        let &(_, limit) = targets.iter().find(|(clients, _)| *clients == n)?;
        Some(target_line(
            &format!("one event to {n} clients, p99"),
            p99,
            "ms",
            limit,
            "docs/performance-notes.md, \"Where the fan-out's time goes\" (the server's time is mostly the kernel's loopback writes, on the two cores the clients share)",
        ))
    }));
    Ok(())
}

/// The upper bound, in ms, of the `countersign_sse_send_seconds` bucket holding quantile `q` of
/// `event`'s sends, from a `/metrics` scrape (`None` if it sent none).
fn send_quantile(metrics: &str, event: &str, q: f64) -> Option<f64> {
    let label = format!("event=\"{event}\"");
    let mut buckets: Vec<(f64, f64)> = metrics
        .lines()
        .filter(|l| l.starts_with("countersign_sse_send_seconds_bucket{") && l.contains(&label))
        .filter_map(|l| {
            let le = l.split("le=\"").nth(1)?.split('"').next()?;
            let le = if le == "+Inf" { f64::INFINITY } else { le.parse().ok()? };
            Some((le, l.rsplit(' ').next()?.parse().ok()?))
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = buckets.last()?.1;
    (total > 0.0).then_some(())?;
    buckets.iter().find(|(_, count)| *count >= q * total).map(|(le, _)| le * 1000.0)
}

fn bundle(site_root: &Path, report: &mut Report) -> anyhow::Result<()> {
    use std::io::Write;
    let mut rows = Vec::new();
    let mut gzipped = Vec::new();
    for file in ["countersign.wasm", "countersign.js", "countersign.css"] {
        let path = site_root.join("pkg").join(file);
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&bytes)?;
        let gzip = gz.finish()?.len();
        gzipped.push(gzip);
        rows.push(vec![file.to_owned(), bytes.len().to_string(), gzip.to_string()]);
    }
    report.section("7. Bundle (the site's pkg/ of the build that was measured)", &["file", "raw bytes", "gzip -9 bytes"], rows);
    // The page a user loads first is the WASM, its JS and the CSS.
    let first_load: usize = gzipped.iter().sum();
    report.lines([target_line(
        "first load (WASM + JS + CSS, gzip -9)",
        first_load as f64 / 1024.0,
        "KiB",
        300.0,
        "docs/performance-notes.md, \"The bundle\" (the Leptos runtime, serde and the per-view code of one hydrated app; a big cut needs split routes or islands)",
    )]);
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    // Flags, and the flags that take a value; anything else is a mistake, not a full run.
    const FLAGS: [&str; 11] = [
        "--quick",
        "--cycles-only",
        "--reload-only",
        "--fanout-only",
        "--gateway-only",
        "--memory-only",
        "--postgres-only",
        "--frozen-only",
        "--replay-only",
        "--help",
        "-h",
    ];
    const VALUED: [&str; 7] = ["--server", "--baseline-server", "--site-root", "--postgres", "--write", "--paused", "--gateway-sizes"];
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        if VALUED.contains(&arg.as_str()) {
            rest.next().with_context(|| format!("{arg} takes a value"))?;
        } else if !FLAGS.contains(&arg.as_str()) {
            bail!("unknown argument {arg:?}; see `bench --help`");
        }
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        // The usage is this file's header comment.
        println!("{}", USAGE);
        return Ok(());
    }
    let quick = args.iter().any(|a| a == "--quick");
    if args.iter().any(|a| a == "--replay-only") {
        // In this process: no server binary needed.
        return replay::replay(&Sizes::new(quick), &mut Report { markdown: String::new() });
    }
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let bin = PathBuf::from(value("--server").unwrap_or_else(|| {
        std::env::current_exe().ok().and_then(|p| p.parent().map(|d| d.join("countersign").display().to_string())).unwrap_or_default()
    }));
    if !bin.exists() {
        bail!("no server binary at {} (pass --server PATH)", bin.display());
    }
    let site_root = value("--site-root").map(PathBuf::from);
    let sizes = Sizes::new(quick);
    let mut report = Report { markdown: String::new() };
    let started = Instant::now();

    let baseline = value("--baseline-server").map(|path| {
        let name =
            Path::new(&path).file_name().map(|n| n.to_string_lossy().trim_start_matches("countersign-").to_owned()).unwrap_or_default();
        (name, PathBuf::from(path))
    });
    let builds = Builds { now: bin.clone(), baseline };
    if args.iter().any(|a| a == "--fanout-only") {
        // The older build first when given, then this one: the same machine, minutes apart.
        if let Some((name, old)) = &builds.baseline {
            println!("\n(baseline {name})");
            fanout(old, &sizes, &mut report).await?;
        }
        return fanout(&bin, &sizes, &mut report).await;
    }
    if args.iter().any(|a| a == "--gateway-only") {
        let sizes = match value("--gateway-sizes") {
            Some(list) => {
                let n: Vec<usize> = list.split(',').map(str::parse).collect::<Result<_, _>>().context("--gateway-sizes takes R,C,E,G")?;
                let [reads, clients, each, cycles] = n[..] else { bail!("--gateway-sizes takes four numbers: R,C,E,G") };
                Sizes { gateway: (reads, clients, each, cycles), ..sizes }
            }
            None => sizes,
        };
        if let Some((name, old)) = &builds.baseline {
            println!("\n(baseline {name})");
            gateway::gateway(old, &sizes, &mut report).await?;
        }
        return gateway::gateway(&bin, &sizes, &mut report).await;
    }
    if args.iter().any(|a| a == "--memory-only") {
        // `--paused N`: how many paused tasks (default the mode's).
        let paused = value("--paused").map(|n| n.parse()).transpose().context("--paused takes a number")?;
        let sizes = Sizes { paused_tasks: paused.unwrap_or(sizes.paused_tasks), ..sizes };
        return memory(&bin, &sizes, &mut report).await;
    }
    if args.iter().any(|a| a == "--reload-only") {
        let server = Server::start(&bin, site_root.as_deref()).await?;
        return reload(&server, &sizes, &mut report).await;
    }
    if args.iter().any(|a| a == "--postgres-only") {
        let postgres = value("--postgres").context("--postgres-only needs --postgres URL")?;
        postgres_replicas(&builds, &postgres, &sizes, None, &mut report).await?;
        postgres_replicas(&builds, &postgres, &sizes, Some(REPLICA_SHARE), &mut report).await?;
        return frozen_replica(&bin, &postgres, &sizes, &mut report).await;
    }
    if args.iter().any(|a| a == "--frozen-only") {
        let postgres = value("--postgres").context("--frozen-only needs --postgres URL")?;
        return frozen_replica(&bin, &postgres, &sizes, &mut report).await;
    }
    throughput(&builds, &sizes, &mut report).await?;
    if args.iter().any(|a| a == "--cycles-only") {
        return Ok(());
    }
    if let Some(postgres) = value("--postgres") {
        postgres_replicas(&builds, &postgres, &sizes, None, &mut report).await?;
        postgres_replicas(&builds, &postgres, &sizes, Some(REPLICA_SHARE), &mut report).await?;
        frozen_replica(&bin, &postgres, &sizes, &mut report).await?;
    }
    let server = Arc::new(Server::start(&bin, site_root.as_deref()).await?);
    reload(&server, &sizes, &mut report).await?;
    drop(server);
    storage(&bin, &sizes, &mut report).await?;
    memory(&bin, &sizes, &mut report).await?;
    fanout(&bin, &sizes, &mut report).await?;
    gateway::gateway(&bin, &sizes, &mut report).await?;
    replay::replay(&sizes, &mut report)?;
    if let Some(root) = &site_root {
        bundle(root, &mut report)?;
    }
    let took = started.elapsed();
    println!("\nbench finished in {:.1} s", took.as_secs_f64());

    if let Some(path) = value("--write") {
        let machine = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned()))
            .unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
        let mem = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| m.lines().next().map(str::to_owned)).unwrap_or_default();
        let date = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC");
        let text = format!(
            "# Benchmarks\n\nMeasured by `bash scripts/bench.sh` (the `bench` binary in `bench/src/main.rs` driving a release build of \
             `countersign` in a separate process over real HTTP, scripted model, SQLite unless a section says \
             PostgreSQL; every process on this one machine). Times in milliseconds.\n\n\
             - Date: {date}\n- Machine: {machine}, {cores} cores, {mem}\n- Mode: {}\n- Whole run: {:.0} s\n{}\n",
            if quick { "quick (smoke sizes)" } else { "full" },
            took.as_secs_f64(),
            report.markdown
        );
        std::fs::write(&path, text).with_context(|| format!("cannot write {path}"))?;
        println!("wrote {path}");
    }
    Ok(())
}
