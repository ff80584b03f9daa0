//! The admin's SQL over one kept connection per database URL, with psql's output.
//!
//! The tests poll the database (`wait_for`) and read it (`db.psql`) thousands of times a run.
//! As a psql process each, that was a process, a login and a server backend per statement:
//! 2,196 psql processes and 2,819 backends in one CI run. Kept, 895 and 1,557 were left, and
//! the tests took 234 s instead of 274 s (docs/records/development.md, "CI under 600 s,
//! again"). Here each URL gets one connection, kept by a
//! thread of its own (a current-thread runtime: callers may be inside another runtime, where
//! blocking on one would panic), and a statement is sent as psql `-c` sends it: one simple
//! query, every statement of it in one implicit transaction.
//!
//! The text is what `psql -X -q -t -A` prints: the server's text of each value, `|` between
//! fields, a line per row, NULL as nothing, the rows of every statement (psql 15 shows all
//! results); an error is psql's `ERROR:  message`. A connection the server closed (a restart, a
//! crash) is opened again once and the statement sent again; a statement the server refused is
//! not.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};

use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

type Reply = Sender<Result<String, String>>;
/// A statement and where its answer goes.
type Job = (String, Reply);
/// Each URL's thread, by the URL.
type Threads = Mutex<HashMap<String, Sender<Job>>>;

/// `sql` as the role of `url`: its rows as psql prints them, or the server's error.
pub fn query(url: &str, sql: &str) -> Result<String, String> {
    static KEPT: OnceLock<Threads> = OnceLock::new();
    let jobs = {
        let mut kept = KEPT.get_or_init(Default::default).lock().unwrap();
        kept.entry(url.to_string())
            .or_insert_with(|| {
                let (send, receive) = channel();
                let url = url.to_string();
                std::thread::spawn(move || keep(&url, receive));
                send
            })
            .clone()
    };
    let (reply, answer) = channel();
    jobs.send((sql.to_string(), reply))
        .expect("the connection's thread");
    answer.recv().expect("the connection's thread")
}

/// The thread of one URL's connection: opened at its first statement, again after the server
/// closed it.
fn keep(url: &str, jobs: Receiver<Job>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut client: Option<Client> = None;
    for (sql, reply) in jobs {
        let result = runtime.block_on(async {
            for attempt in 0..2 {
                if client.as_ref().is_none_or(Client::is_closed) {
                    client = Some(connect(url).await?);
                }
                let c = client.as_ref().unwrap();
                match c.simple_query(&sql).await {
                    Ok(messages) => return Ok(text(&messages)),
                    Err(_) if c.is_closed() && attempt == 0 => client = None,
                    Err(e) => {
                        return Err(match e.as_db_error() {
                            Some(db) => format!("ERROR:  {}", db.message()),
                            None => e.to_string(),
                        });
                    }
                }
            }
            unreachable!("the second attempt returns")
        });
        let _ = reply.send(result);
    }
}

async fn connect(url: &str) -> Result<Client, String> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// The rows as `psql -t -A` prints them, trimmed as the tests read psql's output.
fn text(messages: &[SimpleQueryMessage]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for m in messages {
        if let SimpleQueryMessage::Row(row) = m {
            let fields: Vec<&str> = (0..row.len()).map(|i| row.get(i).unwrap_or("")).collect();
            lines.push(fields.join("|"));
        }
    }
    lines.join("\n").trim().to_string()
}
