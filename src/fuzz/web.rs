//! The JSON API's and the page's inputs, through the real server: `spsa serve`'s router over a
//! local run (the repository's format-1 fixture) and a match record, with an admin token, on a
//! loopback port. An input is a request in a short form (`METHOD TARGET`, header lines, a
//! blank line, the body); it is sent as HTTP/1.1 with its length and `Connection: close`, so
//! the server always has the whole request.
//!
//! A finding is a handler's panic (the connection closed without an answer, the panic kept),
//! a 5xx answer (hostile input must be the client's error, 4xx), or no answer in 10 s.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use super::Outcome;

/// The admin token of the fuzzed server.
pub const TOKEN: &str = "fuzz-token-55";

/// The server, started once per process.
fn server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        super::install_hook();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name(format!("{}-main", super::SERVER_THREADS))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .thread_name(super::SERVER_THREADS)
                    .build()
                    .expect("a runtime for the fuzzed server");
                runtime.block_on(async move {
                    // The server never ends: its folder goes with the fuzzing's files.
                    let dir = tempfile::tempdir().expect("a temporary folder").keep();
                    super::remove_later(dir.clone());
                    let served = served(&dir);
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                        .await
                        .expect("a loopback port");
                    tx.send(listener.local_addr().expect("its address"))
                        .expect("the fuzzing thread waits");
                    crate::web::serve(listener, served)
                        .await
                        .expect("the fuzzed server");
                });
            })
            .expect("the server's thread");
        rx.recv().expect("the fuzzed server's address")
    })
}

/// A run (the repository's format-1 fixture, copied) and a match, in `dir`.
fn served(dir: &Path) -> crate::web::Served {
    let files: [(&str, &[u8]); 4] = [
        (
            "legacy.log",
            include_bytes!("../../tests/legacy_format/legacy.log"),
        ),
        (
            "legacy.checkpoint.var",
            include_bytes!("../../tests/legacy_format/legacy.checkpoint.var"),
        ),
        (
            "legacy.var",
            include_bytes!("../../tests/legacy_format/legacy.var"),
        ),
        (
            "legacy.toml",
            include_bytes!("../../tests/legacy_format/legacy.toml"),
        ),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).expect("a fixture file");
    }
    let record = dir.join("match.json");
    let seeds = super::seeds::match_records();
    std::fs::write(&record, &seeds[1]).expect("a match record");
    crate::web::Served {
        local: vec![
            crate::web::local::LocalRun::open("local-1".into(), &dir.join("legacy.log"))
                .expect("the fixture run"),
        ],
        matches: vec![
            crate::web::local::LocalMatch::open("match-1".into(), &record)
                .expect("the match record"),
        ],
        shared: None,
        admin_token: Some(TOKEN.into()),
        team: Default::default(),
        hosting: None,
    }
}

/// Requests of every route, in the short form.
pub fn seeds() -> Vec<Vec<u8>> {
    [
        "GET /api/runs\n\n".to_string(),
        "GET /api/runs/local-1?v=abc&q=Pawn&page=2\n\n".into(),
        "GET /api/matches\n\n".into(),
        "GET /\n\n".into(),
        "GET /runs/local-1?q=Kn&page=1\n\n".into(),
        "GET /runs/match-1\n\n".into(),
        "GET /fragment/runs/local-1?v=1\n\n".into(),
        "GET /fragment/runs?v=x\n\n".into(),
        format!("POST /api/runs/db-1/priority?value=3\nAuthorization: Bearer {TOKEN}\n\n"),
        format!("POST /api/runs/db-1/throughput?value=0.5\nAuthorization: Bearer {TOKEN}\n\n"),
        format!("POST /api/runs/local-1/pause\nAuthorization: Bearer {TOKEN}\n\n"),
        format!(
            "POST /runs/db-1/admin\nContent-Type: application/x-www-form-urlencoded\n\n\
             token={TOKEN}&action=priority&priority=5&throughput=0.25"
        ),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect()
}

/// Send the request `input` describes; its status, or a finding (a panic here).
pub fn request(input: &[u8]) -> Outcome {
    let addr = server();
    let (head, body) = match input.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&input[..i], &input[i + 2..]),
        None => (input, &[][..]),
    };
    let mut lines = head.split(|b| *b == b'\n');
    let first = lines.next().unwrap_or_default();
    let (method, target) = match first.iter().position(|b| *b == b' ') {
        Some(i) => (&first[..i], &first[i + 1..]),
        None => (&b"GET"[..], first),
    };
    let mut wire = Vec::with_capacity(input.len() + 128);
    wire.extend_from_slice(method);
    wire.push(b' ');
    wire.extend_from_slice(target);
    wire.extend_from_slice(b" HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n");
    for line in lines {
        // The length is the sender's: a fuzzed one would leave the server waiting.
        if !line.is_empty() && !line.to_ascii_lowercase().starts_with(b"content-length") {
            wire.extend_from_slice(line);
            wire.extend_from_slice(b"\r\n");
        }
    }
    wire.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    wire.extend_from_slice(body);
    let mut stream = TcpStream::connect(addr).expect("the fuzzed server");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    // The server may answer (400) and close before reading everything.
    let _ = stream.write_all(&wire);
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    if let Some(p) = super::take_server_panic() {
        panic!("the server panicked: {p}");
    }
    if let Err(e) = read
        && answer.is_empty()
    {
        panic!("no answer: {e}");
    }
    let status: u16 = answer
        .get(9..12)
        .and_then(|s| std::str::from_utf8(s).ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    match status {
        200..=399 => Outcome::Accepted,
        400..=499 => Outcome::Refused(format!("HTTP {status}")),
        _ => {
            let shown = String::from_utf8_lossy(&answer[..answer.len().min(400)]).into_owned();
            panic!("answer {status} to a hostile request: {shown}")
        }
    }
}
