//! One connection to the database that comes back by itself: a lost connection (server restart,
//! network) is reopened with backoff, and the operation that hit it is retried. TLS is used as
//! the URL's `sslmode` and `sslrootcert` ask, with libpq's meanings (see [`super::tls`]):
//! `verify-ca` and `verify-full` check the server's certificate, `prefer` and `require` do not.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::{Client, Config};

use super::tls::{self, SslMode, TlsSettings};
use crate::runtime::shutdown::Shutdown;

/// Why a database operation failed.
/// SQLSTATE insufficient_privilege: a role asked for what it may not do.
pub const NOT_ALLOWED: &str = "42501";

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The URL itself is wrong (exit status 2).
    #[error("database URL {url}: {message}")]
    BadUrl { url: String, message: String },
    /// The server refused a request for good (rights, refused result, missing schema…).
    #[error("{what}: {message}")]
    Refused {
        what: String,
        /// SQLSTATE, e.g. SP003 for a lease taken back.
        code: String,
        message: String,
    },
    /// The first connection failed: no server there, a wrong port, host or password (exit
    /// status 2). Only a connection lost once a run is under way is retried.
    #[error("cannot connect to database {url}: {reason}")]
    NotReached { url: String, reason: String },
    /// Ctrl-C or SIGTERM came while the operation waited on the database (see [`Db::stop_on`]).
    #[error("{what}: stopped by Ctrl-C or SIGTERM while waiting on the database")]
    Stopped { what: String },
    /// The server stayed unreachable for longer than the patience allowed.
    #[error("database {url} unreachable for {seconds:.0} s: {last}")]
    Unreachable {
        url: String,
        seconds: f64,
        last: String,
    },
}

/// A wrong URL, or a database that cannot be reached at the first connection, is the user's to
/// fix; a refusal, a stop or a connection lost while a run is under way is not.
/// A role refused what it asked (SQLSTATE 42501: a member stopping another's run, a worker
/// creating one) is the user's too: another role may.
impl crate::error::UserFacing for DbError {
    fn is_user_error(&self) -> bool {
        matches!(self, DbError::BadUrl { .. } | DbError::NotReached { .. }) || self.is_not_allowed()
    }
}

impl DbError {
    /// Whether `e` (anywhere in its chain) is a wait on the database given up for a stop.
    pub fn is_stop(e: &anyhow::Error) -> bool {
        e.chain()
            .any(|c| matches!(c.downcast_ref::<DbError>(), Some(DbError::Stopped { .. })))
    }

    /// The SQLSTATE of a refusal ("" for other errors).
    pub fn code(&self) -> &str {
        match self {
            DbError::Refused { code, .. } => code,
            _ => "",
        }
    }

    /// Whether the caller's role may not do what it asked (SQLSTATE 42501, from PostgreSQL's
    /// rights or a function's own check of the role): the one test of it for the CLI and the page.
    pub fn is_not_allowed(&self) -> bool {
        self.code() == NOT_ALLOWED
    }
}

/// A URL with its password replaced by `***`, for logs and `status`.
pub fn redact(url: &str) -> String {
    // key=value form: password=secret or password='secret'
    let mut out = String::with_capacity(url.len());
    if !url.contains("://") {
        let mut rest = url;
        while let Some(pos) = rest.find("password=") {
            out.push_str(&rest[..pos + "password=".len()]);
            rest = &rest[pos + "password=".len()..];
            let end = if let Some(quoted) = rest.strip_prefix('\'') {
                quoted.find('\'').map_or(rest.len(), |e| e + 2)
            } else {
                rest.find(char::is_whitespace).unwrap_or(rest.len())
            };
            out.push_str("***");
            rest = &rest[end..];
        }
        out.push_str(rest);
        return out;
    }
    // URL form: scheme://user:password@host/db?password=secret
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_string(),
    };
    let tail = tail
        .split('&')
        .map(|part| match part.split_once("password=") {
            Some((head, _)) => format!("{head}password=***"),
            None => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&");
    format!("{scheme}://{authority}{tail}")
}

/// The URL's connection settings and what it asks of TLS, checked as [`Db::new`] checks them
/// but without reading the CA file.
pub fn parse_url(url: &str) -> Result<(Config, TlsSettings), DbError> {
    let bad = |message: String| DbError::BadUrl {
        url: redact(url),
        message,
    };
    let (rest, tls) = tls::split(url).map_err(bad)?;
    let mut config: Config = rest
        .parse()
        .map_err(|e: tokio_postgres::Error| bad(e.to_string()))?;
    if config.get_hosts().is_empty() {
        return Err(bad("no host".into()));
    }
    config.ssl_mode(match tls.mode {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        _ => tokio_postgres::config::SslMode::Require,
    });
    Ok((config, tls))
}

/// Whether an error is the connection's (worth reconnecting) rather than the request's.
fn is_transient(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        // No SQLSTATE: trouble on the wire (I/O) is worth a retry; a bad parameter is not.
        None => {
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                if s.is::<std::io::Error>() {
                    return true;
                }
                source = s.source();
            }
            false
        }
        Some(code) => {
            let c = code.code();
            c.starts_with("08") // connection exception
                || c.starts_with("57P") // admin shutdown, crash shutdown, cannot connect now
                || c == "40001" // serialization failure
                || c == "40P01" // deadlock detected
                || c == "53300" // too many connections
        }
    }
}

/// A connection that reconnects. Cheap operations go through [`Db::run`], which retries an
/// operation interrupted by a lost connection until `patience` runs out.
pub struct Db {
    config: Config,
    url_shown: String,
    tls: TlsSettings,
    /// The TLS client (None: plain connections).
    connector: Option<tls::Connector>,
    client: Option<Arc<Client>>,
    /// Whether a connection was ever opened: until then a failure ends the command at once
    /// (the URL is wrong or nothing is there); after, it is reconnected with backoff.
    reached: bool,
    /// How long to keep trying to reach the server before giving up.
    pub patience: Duration,
    /// Once this stop is requested, operations still waiting on the server get [`STOP_GRACE`]
    /// more, then fail with [`DbError::Stopped`].
    stop: Option<Shutdown>,
}

/// How long an operation may still wait on the server after a stop was requested: enough for
/// a healthy server to take the last reports and leases given back, short enough that a stop
/// never waits on a server that is gone.
pub const STOP_GRACE: Duration = Duration::from_millis(300);

/// `fut`, unless `stop` was requested more than [`STOP_GRACE`] before it finished.
async fn unless_stopped<T>(
    stop: &Option<Shutdown>,
    what: &str,
    fut: impl Future<Output = T>,
) -> Result<T, DbError> {
    match stop {
        None => Ok(fut.await),
        Some(s) => tokio::select! {
            biased;
            v = fut => Ok(v),
            () = s.wait_grace(STOP_GRACE) => Err(DbError::Stopped { what: what.to_string() }),
        },
    }
}

impl Db {
    /// Parse the URL and read its CA file, if any (nothing is connected yet).
    pub fn new(url: &str) -> Result<Db, DbError> {
        let url_shown = redact(url);
        let (mut config, tls) = parse_url(url)?;
        let connector = tls::connector(&tls).map_err(|message| DbError::BadUrl {
            url: url_shown.clone(),
            message,
        })?;
        config.connect_timeout(Duration::from_secs(10));
        config.application_name("spsa");
        Ok(Db {
            config,
            url_shown,
            tls,
            connector,
            client: None,
            reached: false,
            patience: Duration::from_secs(600),
            stop: None,
        })
    }

    /// Another connection to the same database, for a task of its own. It counts as reached
    /// when this one was, so it reconnects with backoff instead of giving up at once.
    pub fn sibling(&self) -> Db {
        Db {
            config: self.config.clone(),
            url_shown: self.url_shown.clone(),
            tls: self.tls.clone(),
            connector: self.connector.clone(),
            client: None,
            reached: self.reached,
            patience: self.patience,
            stop: self.stop.clone(),
        }
    }

    /// A connection to the same database as role `user` with `password`, opened now: the
    /// server checks the password (a wrong one, or a role that may not log in, is
    /// [`DbError::NotReached`] with the server's message). The password is not kept: the
    /// connection's settings forget it once it is open, so a lost connection cannot be reopened
    /// (`spsa serve` then signs the session out). The URL shown names `user`.
    pub async fn sign_in(&self, user: &str, password: &str) -> Result<Db, DbError> {
        let mut config = self.config.clone();
        config.user(user);
        config.password(password);
        let host = self.url_shown.rsplit_once('@').map_or("", |(_, h)| h);
        let mut db = Db {
            config,
            url_shown: format!("postgres://{user}@{host}"),
            tls: self.tls.clone(),
            connector: self.connector.clone(),
            client: None,
            reached: false,
            patience: Duration::from_secs(5),
            stop: None,
        };
        db.client().await?;
        db.config.password("");
        Ok(db)
    }

    /// Give up waiting on the server [`STOP_GRACE`] after `stop` is requested (this connection
    /// and its siblings made after).
    pub fn stop_on(&mut self, stop: Option<&Shutdown>) {
        self.stop = stop.cloned();
    }

    /// The URL without its password.
    pub fn url(&self) -> &str {
        &self.url_shown
    }

    async fn open(&self) -> Result<Client, tokio_postgres::Error> {
        let client = match &self.connector {
            Some(connector) => {
                let (client, connection) = self.config.connect(connector.clone()).await?;
                tokio::spawn(connection);
                client
            }
            None => {
                let (client, connection) = self.config.connect(tokio_postgres::NoTls).await?;
                tokio::spawn(connection);
                client
            }
        };
        Ok(client)
    }

    /// Why the first connection failed, with what a verifying mode checked when the TLS
    /// handshake was what failed.
    fn why_not_reached(&self, e: &tokio_postgres::Error) -> String {
        // The certificate's verdict in words (rustls's error sits inside an I/O error).
        let (Some(tls_error), Some(root)) = (tls::certificate_failure(e), self.tls.root.as_ref())
        else {
            return reason(e);
        };
        let why = format!("{e}: {tls_error}");
        let host = match self.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
            _ => String::new(),
        };
        match self.tls.mode {
            SslMode::VerifyFull => format!(
                "{why} (sslmode=verify-full: the server's certificate must be signed by {root} and name the host `{host}`)"
            ),
            _ => format!(
                "{why} (sslmode={}: the server's certificate must be signed by {root})",
                self.tls.mode
            ),
        }
    }

    /// The open connection, reconnecting with backoff when there is none.
    pub async fn client(&mut self) -> Result<Arc<Client>, DbError> {
        if let Some(c) = &self.client
            && !c.is_closed()
        {
            return Ok(c.clone());
        }
        self.client = None;
        let mut retry = Retry::new(self.patience);
        let what = format!("connect to {}", self.url_shown);
        loop {
            match unless_stopped(&self.stop, &what, self.open()).await? {
                Ok(c) => {
                    let c = Arc::new(c);
                    self.client = Some(c.clone());
                    self.reached = true;
                    return Ok(c);
                }
                Err(e) if !self.reached => {
                    return Err(DbError::NotReached {
                        url: self.url_shown.clone(),
                        reason: self.why_not_reached(&e),
                    });
                }
                Err(e) => {
                    let wait = retry.after(&what, &self.url_shown, &e);
                    unless_stopped(&self.stop, &what, wait).await??;
                }
            }
        }
    }

    /// Run `op` on the connection; when the connection is lost on the way, reconnect and run it
    /// again. `op` must be safe to repeat (each of ours is: see `spsa.report`).
    pub async fn run<T>(
        &mut self,
        what: &str,
        op: impl AsyncFn(&Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, DbError> {
        let mut retry = Retry::new(self.patience);
        loop {
            let client = self.client().await?;
            match unless_stopped(&self.stop, what, op(&client)).await? {
                Ok(v) => return Ok(v),
                Err(e) => {
                    if is_transient(&e) {
                        self.client = None;
                    }
                    let wait = retry.after(what, &self.url_shown, &e);
                    unless_stopped(&self.stop, what, wait).await??;
                }
            }
        }
    }
}

/// Run `body` in a transaction of `c`: committed when it succeeds, rolled back when it fails.
/// `body` is a future not yet polled, so it runs after the `BEGIN`.
pub async fn in_transaction<T>(
    c: &Client,
    body: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, tokio_postgres::Error> {
    c.batch_execute("BEGIN").await?;
    let done = match body.await {
        Ok(v) => c.batch_execute("COMMIT").await.map(|()| v),
        Err(e) => Err(e),
    };
    if done.is_err() {
        let _ = c.batch_execute("ROLLBACK").await;
    }
    done
}

/// Backoff for one operation: 0.1 s doubling to 5 s between attempts, for `patience` in all.
struct Retry {
    started: Instant,
    wait: Duration,
    patience: Duration,
}

impl Retry {
    fn new(patience: Duration) -> Retry {
        Retry {
            started: Instant::now(),
            wait: Duration::from_millis(100),
            patience,
        }
    }

    /// After `what` failed with `e`: wait and return to try again, or the error to give up with
    /// (a refusal at once; a transient failure once the patience is spent).
    async fn after(
        &mut self,
        what: &str,
        url: &str,
        e: &tokio_postgres::Error,
    ) -> Result<(), DbError> {
        if !is_transient(e) {
            return Err(refused(what, e));
        }
        if self.started.elapsed() >= self.patience {
            return Err(DbError::Unreachable {
                url: url.to_string(),
                seconds: self.started.elapsed().as_secs_f64(),
                last: e.to_string(),
            });
        }
        tracing::warn!("{what}: {e}; retrying in {:?}", self.wait);
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(Duration::from_secs(5));
        Ok(())
    }
}

/// The innermost cause of a failed connection ("Connection refused (os error 111)", "password
/// authentication failed for user …"), which is what a user can act on.
fn reason(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut last: &dyn std::error::Error = e;
    while let Some(s) = last.source() {
        last = s;
    }
    if std::ptr::addr_eq(last, e as &dyn std::error::Error) {
        e.to_string()
    } else {
        format!("{e}: {last}")
    }
}

fn refused(what: &str, e: &tokio_postgres::Error) -> DbError {
    let (code, message) = match e.as_db_error() {
        Some(db) => (db.code().code().to_string(), db.message().to_string()),
        None => (String::new(), e.to_string()),
    };
    DbError::Refused {
        what: what.to_string(),
        code,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_survive_redaction() {
        assert_eq!(
            redact("postgres://spsa:s3cr%40t@db.example:5432/tune?sslmode=require"),
            "postgres://spsa:***@db.example:5432/tune?sslmode=require"
        );
        assert_eq!(
            redact("postgresql://w1@h/db?password=hunter2&sslmode=require"),
            "postgresql://w1@h/db?password=***&sslmode=require"
        );
        assert_eq!(
            redact("host=h user=w password='a b c' dbname=x"),
            "host=h user=w password=*** dbname=x"
        );
        assert_eq!(
            redact("host=h password=abc dbname=x"),
            "host=h password=*** dbname=x"
        );
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
        // A password containing '@' keeps only the host after the last '@'.
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
    }

    #[test]
    fn a_bad_url_is_refused_without_its_password() {
        let err = Db::new("postgres://u:topsecret@/db?sslmode=bogus")
            .err()
            .expect("bad sslmode");
        let text = err.to_string();
        assert!(!text.contains("topsecret"), "{text}");
        assert!(text.contains("database URL"), "{text}");
    }
}
