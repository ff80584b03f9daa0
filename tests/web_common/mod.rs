//! `spsa serve` as a process, and HTTP requests to it by hand (no browser): shared by the web
//! tests and the shared-run tests that read a run's page data.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

const SPSA: &str = env!("CARGO_BIN_EXE_spsa");

/// A `spsa serve` process and the URL it printed first.
pub struct Serve {
    child: Child,
    pub url: String,
}

impl Serve {
    pub fn start(args: &[&str]) -> Serve {
        let mut child = Command::new(SPSA)
            .arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        if line.is_empty() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("spsa serve printed no URL: {err}");
        }
        let url = line.trim().trim_end_matches('/').to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        Serve { child, url }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP request by hand: (status, body).
pub fn http(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let host = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out
        .split_once("\r\n\r\n")
        .map(|b| b.1)
        .unwrap_or("")
        .to_string();
    (status, body)
}
