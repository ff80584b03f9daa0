//! `spsa serve [LOG|CHECKPOINT|CONFIG|MATCH...] [--db URL] [--listen ADDR] [--admin-token-file FILE]`:
//! a live web page and JSON API over local and shared runs and matches (see `crate::web`).

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::error::UserError;
use crate::web::{
    self, Served,
    db::SharedRuns,
    local::{LocalMatch, LocalRun},
};

#[derive(Args)]
pub struct ServeArgs {
    /// Local runs: a θ log, a checkpoint or a config each (read while the run writes them);
    /// matches: a match record each (`*.json`, written by `spsa match --pgn` or --record).
    #[arg(value_name = "LOG|CONFIG|MATCH")]
    runs: Vec<PathBuf>,
    /// Serve the shared runs of this database (its password is never shown).
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// The address to listen on (port 0: any free port; the URL printed says which).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: String,
    /// Allow pause, resume, stop and priority of shared runs to whoever gives this file's token.
    #[arg(long, value_name = "FILE")]
    admin_token_file: Option<PathBuf>,
    /// With --db: the folder of engines, opening books and variables files a member's match
    /// and tune forms may name (the server runs these engines to measure their signatures);
    /// without it, no forms. A tune made in the browser is written to DIR/tunes/NAME/ and its
    /// owner process (`spsa run --db URL --author ROLE`, with this server's URL) runs as a
    /// child of this server, started again at its next start until the run is over.
    #[arg(long, value_name = "DIR", requires = "db")]
    form_files: Option<PathBuf>,
    /// With --form-files: a member's match form may be a patch test, two revisions of a git
    /// repository (a URL, or a clone in the forms folder) built with the member's build
    /// command. The server builds them before the match exists, as `spsa match --git` does on
    /// its creator's machine: give this only to a team whose members may run a command here.
    #[arg(long, requires = "form_files")]
    form_git: bool,
    /// With --db: a member's session unused for this many seconds is signed out.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800, requires = "db")]
    session_idle: u64,
    /// With --db: a member's session is signed out this many seconds after its sign-in.
    #[arg(long, value_name = "SECONDS", default_value_t = 43200, requires = "db")]
    session_max: u64,
    /// With --db: mark the session cookie Secure (the page is served through HTTPS by a proxy).
    #[arg(long, requires = "db")]
    secure_cookie: bool,
}

pub async fn command(args: ServeArgs) -> Result<()> {
    if args.runs.is_empty() && args.db.is_none() {
        return Err(UserError(
            "name the runs to serve (θ logs, checkpoints, configs or match records), or pass --db URL"
                .into(),
        )
        .into());
    }
    let addr: SocketAddr = args.listen.parse().map_err(|_| {
        UserError(format!(
            "--listen {}: not an address and port like 127.0.0.1:8080",
            args.listen
        ))
    })?;
    let admin_token = match &args.admin_token_file {
        None => None,
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                UserError(format!(
                    "--admin-token-file {}: cannot read: {e}",
                    file.display()
                ))
            })?;
            let token = text.trim().to_string();
            if token.len() < 8 {
                return Err(UserError(format!(
                    "--admin-token-file {}: the token must have at least 8 characters",
                    file.display()
                ))
                .into());
            }
            Some(token)
        }
    };
    if let Some(dir) = &args.form_files
        && !dir.is_dir()
    {
        return Err(UserError(format!("--form-files {}: not a folder", dir.display())).into());
    }
    let team = web::team::TeamSettings {
        idle: std::time::Duration::from_secs(args.session_idle.max(1)),
        max_age: std::time::Duration::from_secs(args.session_max.max(1)),
        files: args
            .form_files
            .as_ref()
            .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())),
        secure_cookie: args.secure_cookie,
        git: args.form_git,
    };
    let (mut local, mut matches) = (Vec::new(), Vec::new());
    for path in &args.runs {
        if is_match_record(path) {
            let id = format!("match-{}", matches.len() + 1);
            matches.push(LocalMatch::open(id, path)?);
        } else {
            let id = format!("local-{}", local.len() + 1);
            local.push(LocalRun::open(id, path)?);
        }
    }
    let shared = match &args.db {
        Some(url) => Some(SharedRuns::open(url).await?),
        None => None,
    };
    let hosting = match (&team.files, &args.db, &shared) {
        (Some(files), Some(url), Some(shared)) => {
            let hosting = std::sync::Arc::new(web::tune_form::Hosting::new(files, url)?);
            hosting.restart(&shared.base().await).await;
            Some(hosting)
        }
        _ => None,
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| UserError(format!("--listen {addr}: cannot listen: {e}")))?;
    let bound = listener.local_addr()?;
    // The first line on stdout: the URL to open (tests and scripts read it).
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", web::url_of(bound))?;
    out.flush()?;
    drop(out);
    if admin_token.is_some() {
        eprintln!("admin actions enabled (token from the file given)");
    }
    web::serve(
        listener,
        Served {
            local,
            matches,
            shared,
            admin_token,
            team,
            hosting,
        },
    )
    .await
}

/// A match record: named `*.json`, or a file whose text starts with `{` (θ logs, checkpoints
/// and configs never do).
fn is_match_record(path: &std::path::Path) -> bool {
    use std::io::Read as _;
    if path.extension().is_some_and(|e| e == "json") {
        return true;
    }
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    head[..n].trim_ascii_start().first() == Some(&b'{')
}
